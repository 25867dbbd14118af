"""The hooks' requests to Relay, with the standard library: JSON in, JSON out, no retry.

A coding agent runs ``relay hook`` before each permission prompt it shows, and waits for it.
The SDK's HTTP client and its models cost several times the rest of the hook to import
(docs/performance.md, "Figures behind the code"); the few requests a prompt needs (ask, then
wait for the decision) need neither. The configuration is the SDK's own (``ClientConfig``).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlencode

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
        wait: float = 0,
    ) -> JsonObject:
        """The answer to ``method path`` (with ``body``); a ``wait`` is the server's long-poll,
        which the request outlasts."""
        url = self.config.url + path + (f"?{urlencode({'wait': wait})}" if wait else "")
        data = None if body is None else json.dumps(body).encode()
        headers = self.config.headers()
        if data is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.connect_seconds + wait) as answer:
                found: JsonObject = json.loads(answer.read())
                return found
        except urllib.error.HTTPError as exc:
            raise Refused(exc.code, _detail(exc)) from None
        except (urllib.error.URLError, OSError) as exc:
            why = exc.reason if isinstance(exc, urllib.error.URLError) else exc
            raise Unreachable(f"cannot reach {self.config.url}: {why}") from None


def _detail(error: urllib.error.HTTPError) -> str:
    """What the server said: its ``detail`` (a 422's list, its first message)."""
    try:
        detail = json.loads(error.read()).get("detail")
    except (ValueError, AttributeError, OSError):
        return str(error.reason)
    if isinstance(detail, list) and detail and isinstance(detail[0], dict):
        return str(detail[0].get("msg", detail[0]))
    return str(detail or error.reason)
