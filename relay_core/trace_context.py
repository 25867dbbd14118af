"""The trace a piece of work belongs to, as W3C Trace Context's ``traceparent`` text.

The transport sets it for the request it serves (``relay_server``'s front door: its own span's
when it traces, else the one the caller sent); a service that creates what another agent will
handle later (a message) keeps it with the record, and that agent continues the same trace,
hours later if need be. Core keeps and hands on text: it knows nothing of OpenTelemetry.
"""

from __future__ import annotations

import re
from contextvars import ContextVar, Token

# version 00: a 32-hex trace id and a 16-hex span id, neither all zeros, and the flags.
_TRACEPARENT = re.compile(r"^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$")

_CURRENT: ContextVar[str | None] = ContextVar("relay_traceparent", default=None)


def valid(traceparent: str | None) -> str | None:
    """``traceparent`` if it is one that W3C Trace Context's version 00 allows, else None."""
    if traceparent is None:
        return None
    traceparent = traceparent.strip().lower()
    return traceparent if _TRACEPARENT.match(traceparent) else None


def current() -> str | None:
    """The trace of the work in progress, if the transport named one."""
    return _CURRENT.get()


def begin(traceparent: str | None) -> Token[str | None]:
    """The work in progress belongs to ``traceparent`` (validated) until ``end``."""
    return _CURRENT.set(valid(traceparent))


def end(token: Token[str | None]) -> None:
    _CURRENT.reset(token)
