"""kill -9 at a random moment loses nothing acknowledged and duplicates nothing retried.

16 clients send messages with idempotency keys while readers ack them; the server is killed
with SIGKILL mid-stream and restarted on the same port and database. Clients retry every unknown
outcome with the same key. Then the database is read directly: every message answered 201 is
there exactly once, and no message acked before the crash was delivered again after it.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from relay_core.storage.sqlite.driver import sqlite3
from tests.live import start_relay

SENDERS = 16
PER_SENDER = 300
RECIPIENTS = 4


class Restartable:
    """``relay serve`` that the test can kill and start again on the same port and data."""

    def __init__(self, root: Path, **settings: str) -> None:
        self.settings = settings  # RELAY_… variables
        self.port: int | None = None  # chosen as it first starts
        self.data_dir = root / "data"
        self.log = root / "server.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Serve; again on the port of its first start."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
        env |= {"RELAY_DATA_DIR": str(self.data_dir), "RELAY_RATE_LIMIT": "0", **self.settings}
        self.process, self.port = start_relay(env, self.log, self.port)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)


async def with_retries(
    client: httpx.AsyncClient, method: str, path: str, **kwargs: Any
) -> tuple[httpx.Response, int]:
    """Repeat a request as it is (same key) until the server answers something other than a
    5xx; the answer and how many attempts it took."""
    attempts = 0
    while True:
        attempts += 1
        try:
            response = await client.request(method, path, **kwargs)
        except httpx.TransportError:
            await asyncio.sleep(0.05)
            continue
        if response.status_code < 500:
            return response, attempts
        await asyncio.sleep(0.05)


def test_sigkill_loses_nothing_and_duplicates_nothing(tmp_path: Path) -> None:
    server = Restartable(tmp_path)
    server.start()
    try:
        operator = (server.data_dir / "operator_token").read_text().strip()
        op = {"Authorization": f"Bearer {operator}"}
        tokens = {}
        for name in [f"sender-{i}" for i in range(SENDERS)] + [
            f"sink-{i}" for i in range(RECIPIENTS)
        ]:
            answer = httpx.post(
                f"{server.url}/v1/agents/register", json={"agent_id": name}, headers=op
            )
            tokens[name] = answer.json()["token"]
        report = asyncio.run(run(server, tokens))
    finally:
        server.stop()

    db = sqlite3.connect(server.data_dir / "relay.db")
    stored = Counter(text for (text,) in db.execute("SELECT text FROM messages"))
    acked_in_db = {
        mid for (mid,) in db.execute("SELECT message_id FROM messages WHERE status = 'acked'")
    }
    db.close()
    lost = [key for key in report["created"] if stored[key] == 0]
    duplicated = [text for text, count in stored.items() if count > 1]
    print(
        f"\ncrash test: {len(report['created'])} created, {report['recovered']} recovered after "
        f"unknown outcomes, lost {len(lost)}, duplicated {len(duplicated)}, "
        f"acked {len(report['acked'])}, redelivered after ack {len(report['redelivered'])}"
    )
    assert report["killed"], "the server was never killed"
    assert len(report["created"]) == SENDERS * PER_SENDER
    assert lost == [] and duplicated == []
    assert report["recovered"] > 0  # some outcomes really were unknown
    assert report["redelivered"] == []
    assert report["acked"] <= acked_in_db


async def run(server: Restartable, tokens: dict[str, str]) -> dict[str, object]:
    created: dict[str, int] = {}
    acked: set[int] = set()
    redelivered: list[int] = []
    recovered = 0
    killed = False
    senders_done = asyncio.Event()

    async def sender(n: int, client: httpx.AsyncClient) -> None:
        nonlocal recovered
        headers = {"Authorization": f"Bearer {tokens[f'sender-{n}']}"}
        for i in range(PER_SENDER):
            key = f"crash-test-s{n}-m{i}"
            response, attempts = await with_retries(
                client,
                "POST",
                "/v1/messages",
                json={"to": f"sink-{i % RECIPIENTS}", "text": key},
                headers={**headers, "Idempotency-Key": key},
            )
            assert response.status_code == 201, response.text
            created[key] = response.json()["message_id"]
            recovered += attempts > 1

    async def reader(n: int, client: httpx.AsyncClient) -> None:
        name = f"sink-{n}"
        headers = {"Authorization": f"Bearer {tokens[name]}"}
        while True:
            response, _ = await with_retries(
                client, "GET", f"/v1/agents/{name}/inbox", params={"limit": 200}, headers=headers
            )
            inbox = response.json()
            for message in inbox["messages"]:
                mid = message["message_id"]
                if mid in acked:
                    redelivered.append(mid)
                answer, _ = await with_retries(
                    client,
                    "POST",
                    f"/v1/messages/{mid}/ack",
                    json={"agent_id": name},
                    headers=headers,
                )
                if answer.status_code == 200:
                    acked.add(mid)
            if senders_done.is_set() and not inbox["messages"]:
                return

    async def killer() -> None:
        nonlocal killed
        await asyncio.sleep(random.uniform(0.5, 2.0))
        await asyncio.to_thread(server.kill)
        killed = True
        await asyncio.sleep(0.2)
        await asyncio.to_thread(server.start)

    async with httpx.AsyncClient(base_url=server.url, timeout=10) as client:
        readers = [asyncio.create_task(reader(n, client)) for n in range(RECIPIENTS)]
        kill = asyncio.create_task(killer())
        await asyncio.gather(*(sender(n, client) for n in range(SENDERS)))
        await kill
        senders_done.set()
        await asyncio.gather(*readers)
    return {
        "created": created,
        "acked": acked,
        "redelivered": redelivered,
        "recovered": recovered,
        "killed": killed,
    }
