"""What the server writes to its log: one access line per request, and no forged lines.

Every value that reaches a log line can come from a client (a path, an agent id, a header), and
a newline in one would let the client write a line of its own. The formatter escapes control
characters in every message, and the access log escapes its values itself too, so its lines
stay whole under any logging configuration.
"""

from __future__ import annotations

import logging
import re
import time

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from relay_server.clients import remote
from relay_server.keys import REQUEST_ID

log = logging.getLogger("relay.server")

OUTAGE_LOG_SECONDS = 60.0
_outage_logged_at: dict[str, float] = {}

# C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(value: str) -> str:
    """``value`` with each control character written as an escape (``\\n``, ``\\u2028``)."""
    return _CONTROL.sub(lambda found: ascii(found.group())[1:-1], value)


class EscapingFormatter(logging.Formatter):
    """A formatter whose messages cannot contain a line break or a terminal escape; a
    traceback appended to a record still spans its own lines."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        """The formatted line, with the record's message escaped."""
        record.message = printable(record.message)
        return super().formatMessage(record)


class AccessLogger(AbstractAccessLogger):
    """One line per request: method, path, status, duration and request id (never headers)."""

    @property
    def enabled(self) -> bool:
        """Whether lines would be written at all (aiohttp skips the timing and the call if not)."""
        return self.logger.isEnabledFor(logging.INFO)

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        """Write the request's line."""
        self.logger.info(
            '%s "%s %s" %s %.1fms id=%s',
            printable(remote(request)),
            printable(request.method),
            printable(request.rel_url.path),
            response.status,
            time * 1000,
            request.get(REQUEST_ID, "-"),
        )


def log_outage(detail: str) -> None:
    """One warning per kind of storage outage a minute: met by a thousand requests and every
    background round, it is still one line."""
    now = time.monotonic()
    if now - _outage_logged_at.get(detail, -OUTAGE_LOG_SECONDS) >= OUTAGE_LOG_SECONDS:
        _outage_logged_at[detail] = now
        log.warning("storage unavailable: %s (answering 503 until it recovers)", detail)
