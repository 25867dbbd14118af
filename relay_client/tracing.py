"""Working in a trace (W3C Trace Context), so that Relay's spans of the SDK's requests join it.

Relay keeps the trace a message was sent in (``Message.traceparent``: its span of the sender's
request, itself in the sender's trace). Inside ``continue_trace(message)`` (or
``in_trace(traceparent)``, for a trace named otherwise: an MCP tool call's ``_meta``), the
SDK's requests carry that trace, and, in a program that uses OpenTelemetry, it is the current
context too, so the program's own spans join it: one trace shows the sender, Relay, and the
handling, hours later if need be. A program with OpenTelemetry's context of its own sends that.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from relay_api.models import Message

_HANDED: ContextVar[str | None] = ContextVar("relay_client_traceparent", default=None)


def trace_headers() -> dict[str, str]:
    """What a request sends of the trace it is made in: OpenTelemetry's current context in a
    program that has imported it (``OTEL_PROPAGATORS`` say how), else the trace ``in_trace``
    named; nothing otherwise, and nothing imported."""
    if "opentelemetry.trace" in sys.modules:
        from opentelemetry.propagate import inject

        carrier: dict[str, str] = {}
        inject(carrier)
        if "traceparent" in carrier:
            return carrier
    handed = _HANDED.get()
    return {"traceparent": handed} if handed is not None else {}


@contextmanager
def in_trace(traceparent: str | None) -> Iterator[None]:
    """Inside, the trace ``traceparent`` names is the one the SDK's requests are made in (and,
    in a program that uses OpenTelemetry, the current context; any other imports nothing of
    it). None: nothing changes."""
    if not traceparent:
        yield
        return
    handed = _HANDED.set(traceparent)
    attached = None
    if "opentelemetry.trace" in sys.modules:
        from opentelemetry import context
        from opentelemetry.propagate import extract

        attached = context.attach(extract({"traceparent": traceparent}))
    try:
        yield
    finally:
        if attached is not None:
            context.detach(attached)
        _HANDED.reset(handed)


def continue_trace(message: Message) -> AbstractContextManager[None]:
    """Handle ``message`` in the trace it was sent in (nothing, for one sent outside any)."""
    return in_trace(message.traceparent)
