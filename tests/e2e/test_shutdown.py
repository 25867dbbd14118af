"""A long-poll is not held open past shutdown."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from tests.live import live_server


def test_a_sixty_second_long_poll_ends_with_the_server(tmp_path: Path) -> None:
    with live_server(tmp_path) as server:
        op = {"Authorization": f"Bearer {server.operator_token}"}
        httpx.post(f"{server.url}/v1/agents/register", json={"agent_id": "bob"}, headers=op)
        answer: dict[str, Any] = {}

        def poll() -> None:
            try:
                response = httpx.get(
                    f"{server.url}/v1/agents/bob/inbox", params={"wait": 60}, headers=op, timeout=90
                )
                answer["status"] = response.status_code
            except httpx.TransportError as exc:
                answer["error"] = exc
            answer["at"] = time.monotonic()

        poller = threading.Thread(target=poll)
        poller.start()
        time.sleep(0.5)
        stopped_at = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=10) == 0
        poller.join(timeout=10)
        assert answer.get("status") == 200, answer
        assert answer["at"] - stopped_at < 3
