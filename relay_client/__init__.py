"""Relay's Python SDK: ``RelayClient`` / ``AsyncRelayClient``, the ``Agent`` helpers, errors.

from relay_client import RelayClient

with RelayClient() as relay:         # RELAY_URL, RELAY_TOKEN, RELAY_AGENT_ID, or local defaults
    relay.approvals.approve(12)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from relay_client._client import AsyncRelayClient, RelayClient
    from relay_client.agent import (
        Agent,
        AsyncAgent,
        AsyncProgress,
        Progress,
        TaskFilter,
        async_enroll_and_wait,
        enroll_and_wait,
    )
    from relay_client.config import ClientConfig, config_file_path
    from relay_client.errors import (
        APIStatusError,
        AuthenticationError,
        BadRequestError,
        BridgeError,
        ConflictError,
        ConnectionError,
        EnrollmentError,
        Fatal,
        IdentityError,
        NotFoundError,
        PayloadTooLargeError,
        PermissionDeniedError,
        RateLimitError,
        RelayError,
        RequestTimeoutError,
        ServerError,
        ServiceUnavailableError,
        TimeoutError,
        UnprocessableEntityError,
        ValidationError,
    )
    from relay_client.tracing import continue_trace, in_trace

# Each name's module, imported when the name is first asked for (PEP 562): a part of the
# package that needs no HTTP client (the hooks' configuration, relay_client.config) is imported
# without one, which every coding agent's tool call would otherwise pay for.
_WHERE = {
    "AsyncRelayClient": "relay_client._client",
    "RelayClient": "relay_client._client",
    "Agent": "relay_client.agent",
    "AsyncAgent": "relay_client.agent",
    "AsyncProgress": "relay_client.agent",
    "Progress": "relay_client.agent",
    "TaskFilter": "relay_client.agent",
    "async_enroll_and_wait": "relay_client.agent",
    "enroll_and_wait": "relay_client.agent",
    "ClientConfig": "relay_client.config",
    "config_file_path": "relay_client.config",
    "continue_trace": "relay_client.tracing",
    "in_trace": "relay_client.tracing",
    "APIStatusError": "relay_client.errors",
    "AuthenticationError": "relay_client.errors",
    "BadRequestError": "relay_client.errors",
    "BridgeError": "relay_client.errors",
    "ConflictError": "relay_client.errors",
    "ConnectionError": "relay_client.errors",
    "EnrollmentError": "relay_client.errors",
    "Fatal": "relay_client.errors",
    "IdentityError": "relay_client.errors",
    "NotFoundError": "relay_client.errors",
    "PayloadTooLargeError": "relay_client.errors",
    "PermissionDeniedError": "relay_client.errors",
    "RateLimitError": "relay_client.errors",
    "RelayError": "relay_client.errors",
    "RequestTimeoutError": "relay_client.errors",
    "ServerError": "relay_client.errors",
    "ServiceUnavailableError": "relay_client.errors",
    "TimeoutError": "relay_client.errors",
    "UnprocessableEntityError": "relay_client.errors",
    "ValidationError": "relay_client.errors",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'relay_client' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


__all__ = [
    "APIStatusError",
    "Agent",
    "AsyncAgent",
    "AsyncProgress",
    "AsyncRelayClient",
    "AuthenticationError",
    "BadRequestError",
    "BridgeError",
    "ClientConfig",
    "ConflictError",
    "ConnectionError",
    "EnrollmentError",
    "Fatal",
    "IdentityError",
    "NotFoundError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "Progress",
    "RateLimitError",
    "RelayClient",
    "RelayError",
    "RequestTimeoutError",
    "ServerError",
    "ServiceUnavailableError",
    "TaskFilter",
    "TimeoutError",
    "UnprocessableEntityError",
    "ValidationError",
    "async_enroll_and_wait",
    "config_file_path",
    "continue_trace",
    "enroll_and_wait",
    "in_trace",
]
