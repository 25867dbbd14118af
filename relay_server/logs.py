"""What the server writes to its log: one access line per request, no forged lines, and no
byte of a request's head.

Every value that reaches a log line can come from a client (a path, an agent id, a header), and
a newline in one would let the client write a line of its own. The formatter escapes control
characters in every message, and the access log escapes its values itself too, so its lines
stay whole under any logging configuration.

aiohttp's parser quotes the offending line of a request it cannot read (an ``Authorization``
header with a stray byte after the token, say) in its exception's message. Relay answers such a
request without logging the exception (``connections.GuardedHandler``); should anything else
log one, ``NoRequestBytes`` drops it from the record before any handler formats it.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import threading
import time
from datetime import UTC, datetime
from logging.handlers import QueueHandler
from queue import Empty, SimpleQueue
from time import perf_counter
from time import time as now
from typing import Any, NamedTuple, TextIO

from aiohttp import http_exceptions, web
from aiohttp.abc import AbstractAccessLogger

from relay_server.addresses import remote
from relay_server.app_keys import CALLER, OPERATION, REQUEST_ID, STARTED, UNREADABLE

log = logging.getLogger("relay.server")

MINUTE = 60.0
MAX_KEYS = 10_000
BATCH_SECONDS = 0.05  # how often queued lines are written: the most a line waits
QUEUED = 100_000  # records waiting to be written, at most

# C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(value: str) -> str:
    """``value`` with each control character written as an escape (``\\n``, ``\\u2028``)."""
    if value.isprintable():  # no control character and no separator: most values, at C speed
        return value
    return _CONTROL.sub(lambda found: ascii(found.group())[1:-1], value)


# The server's own text line (``serving``).
TEXT = "%(asctime)s %(levelname)s %(process)d %(name)s: %(message)s"


class EscapingFormatter(logging.Formatter):
    """A formatter whose messages cannot contain a line break or a terminal escape; a
    traceback appended to a record still spans its own lines."""

    def __init__(self, fmt: str | None = None) -> None:
        super().__init__(fmt)
        self._text = fmt == TEXT
        self._stamped = (-1, "")  # a second, and its date and time as logging writes them

    def format_access(self, line: AccessLine) -> str:
        """What ``format`` makes of the line's record; in the server's own text, made without
        the record (most lines are access lines, and the record was most of their cost)."""
        if not self._text:
            return self.format(line.record())
        # The line's values were made printable as it was queued; its process is the one its
        # record would name (the server's workers are spawned, not forked).
        made, _ = _made_ahead(line.logger)
        stamp = self._asctime(line.created, _msecs(line.created))
        return f"{stamp} INFO {made['process']} {line.logger}: {line.message()}"

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        """The formatted line, with the record's message escaped."""
        record.message = printable(record.message)
        return super().formatMessage(record)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802
        """logging's own stamp, its date and time made once a second (lines come by the
        thousand a second, and ``strftime`` was a fifth of formatting one)."""
        if datefmt is not None:
            return super().formatTime(record, datefmt)
        return self._asctime(record.created, record.msecs)

    def _asctime(self, created: float, msecs: float) -> str:
        """logging's default ``asctime``: date and time, then milliseconds."""
        second, stamp = self._stamped
        if int(created) != second:
            second = int(created)
            stamp = time.strftime(self.default_time_format, self.converter(created))
            self._stamped = (second, stamp)
        return f"{stamp},{int(msecs):03d}"  # default_msec_format


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


# What a parse failure is called in the log: the kind of fault, never the parser's message,
# which quotes the bytes it choked on.
FAULTS: tuple[tuple[type[http_exceptions.HttpProcessingError], str], ...] = (
    (http_exceptions.LineTooLong, "a line or header over 8190 bytes"),
    (http_exceptions.BadHttpMethod, "not an HTTP request (unknown method)"),
    (http_exceptions.BadStatusLine, "a malformed request line"),
    (http_exceptions.InvalidURLError, "a malformed URL"),
    (http_exceptions.InvalidHeader, "a malformed header"),
    (http_exceptions.PayloadEncodingError, "a malformed body framing"),
    (http_exceptions.BadHttpMessage, "a malformed line or header"),
)


def fault(exc: BaseException | None) -> str:
    """What was wrong with a request aiohttp could not read, in words of our own."""
    for kind, words in FAULTS:
        if isinstance(exc, kind):
            return words
    return "a request that could not be read"


class Throttled:
    """Says whether a line about ``key`` may be written now: once per ``seconds`` per key, with
    how many were held back since, so a thousand outages or unreadable requests a minute from
    one address are one line."""

    def __init__(self, seconds: float = MINUTE) -> None:
        self._seconds = seconds
        self._said: dict[str, tuple[float, int]] = {}  # key: when last said, held back since

    def allow(self, key: str) -> int | None:
        """None to stay silent; else how many lines about ``key`` were held back before this."""
        now = time.monotonic()
        said = self._said.get(key)
        if said is not None and now - said[0] < self._seconds:
            self._said[key] = (said[0], said[1] + 1)
            return None
        if len(self._said) >= MAX_KEYS:  # a scan from many addresses: forget, stay bounded
            self._said.clear()
        self._said[key] = (now, 0)
        return said[1] if said is not None else 0


def _from_request_bytes(error: BaseException | None) -> bool:
    seen = 0
    while error is not None and seen < 10:
        if isinstance(error, http_exceptions.HttpProcessingError):
            return True
        error, seen = error.__cause__ or error.__context__, seen + 1
    return False


class NoRequestBytes(logging.Filter):
    """Drops the traceback of a parse failure from any record (it quotes request bytes, so
    maybe a token): the record keeps its message and the failure's class, never its text."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Always keep the record; strip what it must not carry."""
        error = record.exc_info[1] if record.exc_info else None
        if _from_request_bytes(error):
            record.msg = f"{record.msg} ({type(error).__name__}; request bytes not logged)"
            record.exc_info = None
            record.exc_text = None
        return True


ACCESS_LINE = '%s "%s %s" %s %.3fms op=%s caller=%s id=%s'


class AccessLine(NamedTuple):
    """An access line's values, queued as they are for ``Batches`` to write: making its
    record, a dictionary of some thirty entries, was most of what the line cost the request's
    path (bench/figures.md)."""

    logger: str
    created: float
    remote: str
    method: str
    path: str
    status: int
    duration_ms: float
    operation: str
    caller: str
    request_id: str

    def record(self) -> logging.LogRecord:
        """The record ``Logger.info`` would have made for the line, with the access fields:
        made from one made ahead for its logger (``Logger.info`` makes each anew, and looks up
        its clock, its process and a module and a file for a path it is never given)."""
        template, epoch = _made_ahead(self.logger)
        record = logging.LogRecord.__new__(logging.LogRecord)
        record.__dict__ = template | {
            "args": self._args(),
            "created": self.created,
            "msecs": _msecs(self.created),
            "relativeCreated": (self.created - epoch) * 1000,
            **{name: getattr(self, name) for name in FIELDS},
        }
        return record

    def message(self) -> str:
        """The line's message."""
        return ACCESS_LINE % self._args()

    def _args(self) -> tuple[str | int | float, ...]:
        return (
            self.remote,
            self.method,
            self.path,
            self.status,
            self.duration_ms,
            self.operation,
            self.caller,
            self.request_id,
        )


def _msecs(created: float) -> float:
    """A record's ``msecs`` for its ``created``, as logging reckons it."""
    return int((created - int(created)) * 1000) + 0.0


@functools.cache
def _made_ahead(logger: str) -> tuple[dict[str, Any], float]:
    """A record of ``logger``'s access line at INFO, as a dictionary, and logging's start."""
    made = logging.LogRecord(logger, logging.INFO, "(unknown file)", 0, ACCESS_LINE, (), None)
    return made.__dict__, made.created - made.relativeCreated / 1000


Queued = logging.LogRecord | AccessLine


class Unformatted(QueueHandler):
    """Queues each record as it is made, for ``Batches`` to format and write: a request's path
    pays for its record only, and for its access line only the line's values
    (``AccessLine``). QueueHandler's own ``prepare`` formats the record on the caller's
    thread, for queues that cross processes; this queue stays in the process. Past ``QUEUED``
    records waiting (stderr not read, a full disk), records are dropped and counted, never
    held without bound nor waited for."""

    queue: SimpleQueue[Queued]

    def __init__(self, queue: SimpleQueue[Queued]) -> None:
        super().__init__(queue)
        self.dropped = 0

    def prepare(self, record: logging.LogRecord) -> logging.LogRecord:
        """The record as it is."""
        return record

    def enqueue(self, record: Queued) -> None:
        """Queue the record, or count it dropped."""
        if self.queue.qsize() < QUEUED:
            self.queue.put_nowait(record)
        else:
            self.dropped += 1


def only_queue(logger: logging.Logger) -> Unformatted | None:
    """The queue that every record of ``logger`` at INFO goes to and nowhere else, with no
    filter on the way (the server's own set-up, ``serving``), or None."""
    found: list[logging.Handler] = []
    current: logging.Logger | None = logger
    while current is not None:
        if current.filters:
            return None
        found += current.handlers
        current = current.parent if current.propagate else None
    handler = found[0] if len(found) == 1 else None
    if isinstance(handler, Unformatted) and not handler.filters and handler.level <= logging.INFO:
        return handler
    return None


class Batches:
    """Writes the queued records' lines from a thread of its own, every ``BATCH_SECONDS``: one
    wake-up, one write and one flush for every line that came meanwhile. A thread woken for
    each line (``QueueListener``) took the interpreter's lock from the requests thousands of
    times a second (bench/figures.md)."""

    def __init__(self, queued: Unformatted, handler: logging.StreamHandler[TextIO]) -> None:
        self._queued = queued
        self._handler = handler
        self._dropped = 0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="relay-log", daemon=True)

    def start(self) -> None:
        """Write from now on."""
        self._thread.start()

    def stop(self) -> None:
        """Write what is queued, and stop."""
        self._stopping.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stopping.wait(BATCH_SECONDS):
            self._write()
        self._write()

    def _write(self) -> None:
        lines = []
        formatter = self._handler.formatter
        # An access line has no traceback for NoRequestBytes to drop: no other filter, no record.
        plain = all(isinstance(kind, NoRequestBytes) for kind in self._handler.filters)
        access = formatter.format_access if isinstance(formatter, EscapingFormatter) else None
        while True:
            try:
                queued = self._queued.queue.get_nowait()
            except Empty:
                break
            if isinstance(queued, AccessLine):
                if access is not None and plain:
                    lines.append(access(queued))
                    continue
                record = queued.record()
            else:
                record = queued
            if self._handler.filter(record):
                try:
                    lines.append(self._handler.format(record))
                except Exception:
                    self._handler.handleError(record)
        if (dropped := self._queued.dropped) > self._dropped:
            lines.append(f"relay: {dropped - self._dropped} log lines dropped (stderr not read)")
            self._dropped = dropped
        if lines:
            try:
                self._handler.stream.write("\n".join(lines) + "\n")
                self._handler.flush()
            except Exception:  # stderr closed: nothing to tell it on
                pass


class AccessLogger(AbstractAccessLogger):
    """One line per request: method, path, status, duration, operation, caller and request id
    (never a header, so never a token).

    Where the server's queue is the logger's only handler (``only_queue``), a line is queued
    as its values (``AccessLine``) and its record made off the request's path; otherwise the
    record is made here and handed to the logger's handlers as ``Logger.info`` would hand it,
    its filters first. Making the record was most of what an access line cost a request
    (bench/figures.md)."""

    def __init__(self, logger: logging.Logger, log_format: str) -> None:
        super().__init__(logger, log_format)
        self._queue = only_queue(logger)  # aiohttp makes an access logger per connection

    @property
    def enabled(self) -> bool:
        """Whether lines would be written at all (aiohttp skips the timing and the call if not)."""
        return self.logger.isEnabledFor(logging.INFO)

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        """Write the request's line; an unreadable request has none (``unreadable`` says it).
        The duration is from the request's own clock (aiohttp's ``time`` is the event loop's,
        whole milliseconds under uvloop)."""
        if UNREADABLE in request or not self.logger.isEnabledFor(logging.INFO):
            return
        caller = request.get(CALLER)
        started = request.get(STARTED)
        seconds = perf_counter() - started if started is not None else time
        line = AccessLine(
            self.logger.name,
            now(),
            printable(remote(request)),
            printable(request.method),
            printable(request.rel_url.path),
            response.status,
            round(seconds * 1000, 3),
            printable(request.get(OPERATION) or "-"),
            printable(caller.name if caller is not None else "-"),
            printable(request.get(REQUEST_ID, "-")),
        )
        if self._queue is not None:
            self._queue.enqueue(line)
        else:
            self.logger.handle(line.record())


_outages = Throttled()
_unreadable = Throttled()


def log_outage(detail: str) -> None:
    """One warning a minute for a storage outage, whatever its kind: met by a thousand
    requests and every background round, it is still one line."""
    if _outages.allow("storage") is not None:
        log.warning("storage unavailable: %s (answering 503 until it recovers)", detail)


def unreadable(address: str, reason: str) -> None:
    """A request that could not be read: one line per address a minute, with how many more
    came from there since the last, and never a byte of what was sent."""
    held_back = _unreadable.allow(address)
    if held_back is not None:
        more = f" ({held_back} more from there since the last line)" if held_back else ""
        log.warning("400 bad request from %s: %s%s", printable(address), reason, more)
