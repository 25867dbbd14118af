"""The hooks' requests to Relay: JSON in, JSON out, one connection a request, no retry.

A coding agent runs ``relay hook`` on every tool call, edit, prompt and stop, and waits for it,
so the hook's start is most of what it costs. The SDK's HTTP client and models cost several
times the rest of the hook to import; so do the standard library's: ``http.client`` (and
``h11``) import about 27 ms of email parsing and TLS on each start, ``urllib.request`` 17 ms
more (docs/performance.md). The few requests an event makes need none of that: each is one
HTTP/1.1 exchange with ``Connection: close`` on a socket of its own, its answer read by its
``Content-Length``, its chunks, or to the end; TLS (``ssl``) is loaded for an ``https`` URL
alone. No proxy is used and no redirect followed: the hook goes straight to the configured
URL. The configuration is the SDK's own (``ClientConfig``).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping
from typing import Any, BinaryIO
from urllib.parse import SplitResult, quote, urlencode, urlsplit

from relay_client.config import ClientConfig

JsonObject = dict[str, Any]


class Refused(Exception):
    """Relay answered with an error status; its words are the server's."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"{detail} (HTTP {status})")
        self.status = status


class Unreachable(Exception):
    """Relay could not be reached, or did not answer in time."""


class Wire:
    """Requests to one Relay as one caller."""

    def __init__(self, config: ClientConfig, connect_seconds: float) -> None:
        self.config = config
        self.connect_seconds = connect_seconds

    def call(
        self,
        method: str,
        path: str,
        body: JsonObject | None = None,
        *,
        query: Mapping[str, Any] | None = None,
        wait: float = 0,
    ) -> JsonObject:
        """The answer to ``method path`` (with ``body``, and ``query``'s parameters but the
        ones None); a ``wait`` is the server's long-poll, which the request outlasts."""
        asked = {k: v for k, v in (query or {}).items() if v is not None}
        if wait:
            asked["wait"] = wait
        where = urlsplit(self.config.url)
        target = where.path + path + (f"?{urlencode(asked)}" if asked else "")
        data = b"" if body is None else json.dumps(body).encode()
        headers = self.config.headers()
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            status, reason, raw = _exchange(
                where,
                _head(method, target, where, headers, len(data)) + data,
                self.connect_seconds + wait,
            )
        except (OSError, NotHTTP) as exc:
            raise Unreachable(f"cannot reach {self.config.url}: {exc}") from None
        if status >= 300:  # no redirect is followed: Relay's API answers none
            raise Refused(status, _detail(raw, reason))
        found: JsonObject = json.loads(raw)
        return found


class NotHTTP(Exception):
    """The answer is not one HTTP/1.1 answer within ``MAX_ANSWER`` bytes."""


MAX_ANSWER = 32 * 1024 * 1024  # bytes: far above any answer of Relay's a hook reads
MAX_LINE = 64 * 1024  # of a status line, a header or a chunk's size
MAX_HEADERS = 100


def _head(
    method: str, target: str, where: SplitResult, headers: dict[str, str], size: int
) -> bytes:
    """The request's line and headers; a line break in any of them (a token or an agent id
    holding one) is refused, never sent as a header of its own."""
    host = where.netloc.rpartition("@")[2]
    lines = [f"{method} {target or '/'} HTTP/1.1", f"Host: {host}", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    lines.append(f"Content-Length: {size}")
    if any(c in line for line in lines for c in "\r\n\0"):
        raise ValueError("a request header holds a line break")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _exchange(where: SplitResult, request: bytes, timeout: float) -> tuple[int, str, bytes]:
    """``request`` sent on a connection of its own to ``where``; the answer's status, reason
    and body."""
    secure = where.scheme == "https"
    host = where.hostname or "localhost"
    line = socket.create_connection((host, where.port or (443 if secure else 80)), timeout)
    try:
        if secure:
            import ssl  # TLS: loaded for an https URL alone

            line = ssl.create_default_context().wrap_socket(line, server_hostname=host)
        line.sendall(request)
        with line.makefile("rb") as answer:
            return _answer(answer)
    finally:
        line.close()


def _answer(answer: BinaryIO) -> tuple[int, str, bytes]:
    """The status, reason and body of the HTTP/1.1 answer read from ``answer``."""
    version, _, rest = _line(answer).partition(" ")
    code, _, reason = rest.partition(" ")
    if not version.startswith("HTTP/1.") or not (code.isdigit() and len(code) == 3):
        raise NotHTTP("the answer is not HTTP/1.1")
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADERS + 1):
        header = _line(answer)
        if not header:
            break
        name, _, value = header.partition(":")
        headers[name.strip().lower()] = value.strip()
    else:
        raise NotHTTP(f"the answer has over {MAX_HEADERS} headers")
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return int(code), reason, _chunks(answer)
    length = headers.get("content-length")
    if length is None:
        return int(code), reason, _read(answer, None)
    if not length.isdigit():
        raise NotHTTP("the answer's Content-Length is no number")
    return int(code), reason, _read(answer, int(length))


def _line(answer: BinaryIO) -> str:
    """One line of the answer's head, without its line break."""
    line = answer.readline(MAX_LINE + 1)
    if len(line) > MAX_LINE:
        raise NotHTTP("a line of the answer is too long")
    return line.decode("latin-1").rstrip("\r\n")


def _read(answer: BinaryIO, size: int | None) -> bytes:
    """``size`` bytes of the body (None: all until the connection closes), at most
    ``MAX_ANSWER``."""
    if size is not None and size > MAX_ANSWER:
        raise NotHTTP(f"the answer is over {MAX_ANSWER} bytes")
    body = answer.read(MAX_ANSWER + 1 if size is None else size)
    if len(body) > MAX_ANSWER:
        raise NotHTTP(f"the answer is over {MAX_ANSWER} bytes")
    if size is not None and len(body) < size:
        raise NotHTTP("the answer was cut short")
    return body


def _chunks(answer: BinaryIO) -> bytes:
    """A chunked body, whole (its trailer read and left)."""
    body = bytearray()
    while True:
        size = _line(answer).partition(";")[0].strip()
        try:
            count = int(size, 16)
        except ValueError:
            raise NotHTTP("a chunk's size is no number") from None
        if count == 0:
            break
        if len(body) + count > MAX_ANSWER:
            raise NotHTTP(f"the answer is over {MAX_ANSWER} bytes")
        body += _read(answer, count)
        _line(answer)  # the line break after the chunk
    while _line(answer):  # the trailer's fields, if any
        pass
    return bytes(body)


def _detail(raw: bytes, reason: str) -> str:
    """What the server said: its ``detail`` (a 422's list, its first message), else the status's
    reason."""
    try:
        detail = json.loads(raw).get("detail")
    except (ValueError, AttributeError):
        return reason
    if isinstance(detail, list) and detail and isinstance(detail[0], dict):
        return str(detail[0].get("msg", detail[0]))
    return str(detail or reason)


def segment(value: str | int) -> str:
    """``value`` as one segment of a path (an agent's id may hold any character)."""
    return quote(str(value), safe="")
