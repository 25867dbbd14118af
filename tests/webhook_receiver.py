"""A webhook receiver for the tests that run Relay as a process: a threaded HTTP server that
verifies every request with the ``standardwebhooks`` package, as receivers do."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from standardwebhooks.webhooks import Webhook


class Receiver(ThreadingHTTPServer):
    """Verifies each request with the endpoint's secret and keeps, per message, the
    ``webhook-id``s it came with, and per ``webhook-id`` how many requests carried it. With
    ``fail_first``, the first request of each ``webhook-id`` is answered 500."""

    def __init__(self, fail_first: bool = False) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fail_first = fail_first
        self.verifier: Webhook | None = None
        self.seen: dict[int, set[str]] = defaultdict(set)
        self.attempts: dict[str, int] = defaultdict(int)
        self.forged = 0
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/relay"


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
        body = self.rfile.read(int(self.headers["content-length"])).decode()
        assert self.server.verifier is not None
        try:
            event: Any = self.server.verifier.verify(body, dict(self.headers))
        except Exception:
            with self.server.lock:
                self.server.forged += 1
            self._answer(400)
            return
        webhook_id = self.headers["webhook-id"]
        with self.server.lock:
            self.server.attempts[webhook_id] += 1
            first = self.server.attempts[webhook_id] == 1
            if "message_id" in event["data"]:  # a message.created event
                self.server.seen[event["data"]["message_id"]].add(webhook_id)
        self._answer(500 if first and self.server.fail_first else 204)

    def _answer(self, status: int) -> None:
        self.send_response(status)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def receiving(fail_first: bool = False) -> Iterator[Receiver]:
    """A receiver serving in a thread until the block ends."""
    receiver = Receiver(fail_first)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    try:
        yield receiver
    finally:
        receiver.shutdown()
        receiver.server_close()
