"""The hooks' requests to Relay, with the standard library: JSON in, JSON out, no retry.

A coding agent runs ``relay hook`` on every tool call, edit, prompt and stop, and waits for it.
The SDK's HTTP client and its models cost several times the rest of the hook to import
(docs/performance.md); the few requests an event needs need neither, nor ``urllib.request``'s
openers (proxies, redirects, cookies: about 17 ms more): ``http.client`` alone, straight to
the configured URL. The configuration is the SDK's own (``ClientConfig``).
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

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
        data = None if body is None else json.dumps(body).encode()
        headers = self.config.headers()
        if data is not None:
            headers["Content-Type"] = "application/json"
        secure = where.scheme == "https"
        kind = http.client.HTTPSConnection if secure else http.client.HTTPConnection
        line = kind(where.netloc, timeout=self.connect_seconds + wait)
        try:
            line.request(method, target, body=data, headers=headers)
            answer = line.getresponse()
            status, reason, raw = answer.status, answer.reason, answer.read()
        except (OSError, http.client.HTTPException) as exc:
            raise Unreachable(f"cannot reach {self.config.url}: {exc}") from None
        finally:
            line.close()
        if status >= 300:  # no redirect is followed: Relay's API answers none
            raise Refused(status, _detail(raw, reason))
        found: JsonObject = json.loads(raw)
        return found


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
