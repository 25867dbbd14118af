"""What the server writes to its log: one access line per request, and no forged lines.

Every value that reaches a log line can come from a client (a path, an agent id, a header), and
a newline in one would let the client write a line of its own. The formatter escapes control
characters in every message, and the access log escapes its values itself too, so its lines
stay whole under any logging configuration.
"""

from __future__ import annotations

import json
import logging
import re
import time
from datetime import UTC, datetime
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from relay_server.clients import remote
from relay_server.keys import CALLER, REQUEST_ID

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


# What a JSON line carries beside its message, when a record has it (the access log's fields).
FIELDS = ("request_id", "operation", "status", "duration_ms", "caller", "method", "path", "remote")


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, the access log's fields when
    the record has them, and a traceback as one string. JSON escapes every control
    character, so no value can start a line of its own."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line of JSON."""
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "pid": record.process,
        }
        line |= {name: getattr(record, name) for name in FIELDS if hasattr(record, name)}
        if record.exc_info:
            line["traceback"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


class AccessLogger(AbstractAccessLogger):
    """One line per request: method, path, status, duration, operation, caller and request id
    (never a header, so never a token)."""

    @property
    def enabled(self) -> bool:
        """Whether lines would be written at all (aiohttp skips the timing and the call if not)."""
        return self.logger.isEnabledFor(logging.INFO)

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        """Write the request's line."""
        route = request.match_info.route if isinstance(request, web.Request) else None
        operation = getattr(route, "name", None)
        caller = request.get(CALLER)
        fields = {
            "request_id": request.get(REQUEST_ID, "-"),
            "operation": operation if isinstance(operation, str) else "-",
            "status": response.status,
            "duration_ms": round(time * 1000, 3),
            "caller": caller.name if caller is not None else "-",
            "method": printable(request.method),
            "path": printable(request.rel_url.path),
            "remote": printable(remote(request)),
        }
        self.logger.info(
            '%s "%s %s" %s %.3fms op=%s caller=%s id=%s',
            fields["remote"],
            fields["method"],
            fields["path"],
            fields["status"],
            fields["duration_ms"],
            printable(fields["operation"]),
            printable(fields["caller"]),
            fields["request_id"],
            extra=fields,
        )


def log_outage(detail: str) -> None:
    """One warning per kind of storage outage a minute: met by a thousand requests and every
    background round, it is still one line."""
    now = time.monotonic()
    if now - _outage_logged_at.get(detail, -OUTAGE_LOG_SECONDS) >= OUTAGE_LOG_SECONDS:
        _outage_logged_at[detail] = now
        log.warning("storage unavailable: %s (answering 503 until it recovers)", detail)
