"""Handling a message in the trace it was sent in (OpenTelemetry, when the program uses it).

Relay keeps the W3C trace a message was sent in (``Message.traceparent``: its span of the
sender's request, itself in the sender's trace). An agent that handles the message inside
``continue_trace(message)`` makes that trace current: the spans it starts there, and the
requests the SDK sends there (an ack, a reply), belong to the sender's trace, hours later if
need be, so one trace shows the sender, Relay, and the handling.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from relay_api.models import Message


@contextmanager
def continue_trace(message: Message) -> Iterator[None]:
    """Inside, the trace ``message`` was sent in is the current one. Without OpenTelemetry
    installed, or for a message sent outside any trace, it does nothing."""
    if message.traceparent is None:
        yield
        return
    try:
        from opentelemetry import context
        from opentelemetry.propagate import extract
    except ImportError:
        yield
        return
    token = context.attach(extract({"traceparent": message.traceparent}))
    try:
        yield
    finally:
        context.detach(token)
