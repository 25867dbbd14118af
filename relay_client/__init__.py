"""Relay's Python SDK: ``RelayClient`` / ``AsyncRelayClient``, the ``Agent`` helpers, errors.

from relay_client import RelayClient

with RelayClient() as relay:         # RELAY_URL, RELAY_TOKEN, RELAY_AGENT_ID, or local defaults
    relay.approvals.approve(12)
"""

from relay_client._base import ClientConfig, config_file_path
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
    "enroll_and_wait",
]
