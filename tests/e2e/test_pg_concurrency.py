"""Relay on PostgreSQL under the loads that deadlocked it: no 5xx, and every outcome once.

For ``RELAY_CONCURRENCY_SECONDS`` (30 by default), against one real server on PostgreSQL:
32 readers of one inbox while messages arrive and are acked; agents racing to claim tasks;
the operator racing approve against reject; agents heartbeating at once.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.test_instances import OPERATOR, instance

pytestmark = pytest.mark.postgres
SECONDS = float(os.environ.get("RELAY_CONCURRENCY_SECONDS", "30"))
READERS = 32


class Load:
    """What every worker saw: statuses, and the outcomes that must each happen once."""

    def __init__(self, url: str, deadline: float) -> None:
        self.url = url
        self.deadline = deadline
        self.statuses: Counter[int] = Counter()
        self.acked_at: dict[int, float] = {}
        self.redelivered_after_ack: list[int] = []
        self.claimed: dict[int, list[str]] = {}
        self.decided: dict[int, list[str]] = {}

    def running(self) -> bool:
        return time.monotonic() < self.deadline

    async def call(
        self, client: httpx.AsyncClient, method: str, path: str, body: Any = None
    ) -> httpx.Response:
        response = await client.request(method, path, json=body)
        self.statuses[response.status_code] += 1
        return response


def client(url: str, token: str = OPERATOR) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.AsyncClient(base_url=url, headers=headers, timeout=60)


async def register(op: httpx.AsyncClient, agent_id: str) -> str:
    response = await op.post("/v1/agents/register", json={"agent_id": agent_id})
    response.raise_for_status()
    return str(response.json()["token"])


async def sender(load: Load, op: httpx.AsyncClient, sent: list[int]) -> None:
    while load.running():
        response = await load.call(op, "POST", "/v1/messages", {"to": "inbox", "text": "x"})
        if response.status_code == 201:
            sent.append(response.json()["message_id"])
        await asyncio.sleep(0.005)


async def reader(load: Load, token: str) -> None:
    async with client(load.url, token) as me:
        while load.running():
            asked_at = time.monotonic()
            inbox = await load.call(me, "GET", "/v1/agents/inbox/inbox?limit=50")
            if inbox.status_code != 200:
                continue
            for message in inbox.json()["messages"]:
                message_id = message["message_id"]
                if load.acked_at.get(message_id, asked_at) < asked_at:
                    load.redelivered_after_ack.append(message_id)
                if random.random() < 0.5:  # some are left for another read: redelivered
                    continue
                path = f"/v1/messages/{message_id}/ack"
                acked = await load.call(me, "POST", path, {"agent_id": "inbox"})
                if acked.status_code == 200:
                    load.acked_at.setdefault(message_id, time.monotonic())


async def claimer(load: Load, agent_id: str, token: str) -> None:
    async with client(load.url, token) as me:
        while load.running():
            listed = await load.call(me, "GET", "/v1/tasks?status=open&limit=20")
            if listed.status_code != 200 or not listed.json()["tasks"]:
                await asyncio.sleep(0.01)
                continue
            task = random.choice(listed.json()["tasks"])
            path = f"/v1/tasks/{task['task_id']}/claim"
            claimed = await load.call(me, "POST", path, {"agent_id": agent_id})
            if claimed.status_code == 200:
                load.claimed.setdefault(task["task_id"], []).append(agent_id)
                finish = f"/v1/tasks/{task['task_id']}/complete"
                await load.call(me, "POST", finish, {"agent_id": agent_id})


async def task_maker(load: Load, op: httpx.AsyncClient) -> None:
    while load.running():
        await load.call(op, "POST", "/v1/tasks", {"title": "race"})
        await asyncio.sleep(0.01)


async def decider(load: Load, op: httpx.AsyncClient, n: int) -> None:
    while load.running():
        enrolled = await load.call(op, "POST", "/v1/enroll", {"agent_id": f"e{n}-{time.time_ns()}"})
        if enrolled.status_code != 201:
            await asyncio.sleep(0.05)
            continue
        approval_id = enrolled.json()["approval_id"]

        async def decide(verb: str, approval_id: int) -> None:
            response = await load.call(op, "POST", f"/v1/approvals/{approval_id}/{verb}", {})
            if response.status_code == 200:
                load.decided.setdefault(approval_id, []).append(response.json()["status"])

        await asyncio.gather(
            *(decide(verb, approval_id) for verb in ("approve", "reject", "approve"))
        )


async def heartbeater(load: Load, agent_id: str, token: str) -> None:
    async with client(load.url, token) as me:
        while load.running():
            await load.call(me, "POST", f"/v1/agents/{agent_id}/heartbeat", {"status": "busy"})


async def drive(url: str) -> tuple[Load, list[int]]:
    async with client(url) as op:
        inbox_token = await register(op, "inbox")
        workers = {f"w{n}": await register(op, f"w{n}") for n in range(16)}
        sent: list[int] = []
        for _ in range(10):  # a backlog, so every read takes a full page
            bodies = [{"to": "inbox", "text": "backlog"}] * 50
            for posted in await asyncio.gather(*(op.post("/v1/messages", json=b) for b in bodies)):
                sent.append(posted.json()["message_id"])
        load = Load(url, time.monotonic() + SECONDS)
        await asyncio.gather(
            *(sender(load, op, sent) for _ in range(4)),
            *(reader(load, inbox_token) for _ in range(READERS)),
            task_maker(load, op),
            *(claimer(load, agent, token) for agent, token in workers.items()),
            *(decider(load, op, n) for n in range(4)),
            *(heartbeater(load, agent, workers[agent]) for agent in ("w0", "w0", "w1", "w1")),
        )
        # Drain: in the end every message sent is acked, and none is left.
        async with client(url, inbox_token) as me:
            while True:
                inbox = (await me.get("/v1/agents/inbox/inbox?limit=1000")).json()
                if not inbox["messages"]:
                    break
                for message in inbox["messages"]:
                    path = f"/v1/messages/{message['message_id']}/ack"
                    (await me.post(path, json={"agent_id": "inbox"})).raise_for_status()
        return load, sent


def test_no_deadlock_and_no_5xx_under_concurrent_load(tmp_path: Path, database: str) -> None:  # noqa: F811
    env = {"RELAY_RATE_LIMIT": "0", "RELAY_ENROLL_RATE_LIMIT": "0"}
    with instance(tmp_path / "a", database, **env) as server:
        load, sent = asyncio.run(drive(server.url))
        log = server.log.read_text()
    errors = {status: n for status, n in load.statuses.items() if status >= 500}
    assert not errors, (errors, [line for line in log.splitlines() if "ERROR" in line][:5])
    assert "deadlock" not in log
    assert len(sent) > 500 and sum(load.statuses.values()) > 1000, load.statuses
    # Exactly once: one claimer per task, one decision per approval, every message acked.
    assert all(len(agents) == 1 for agents in load.claimed.values()), load.claimed
    assert load.claimed, "no task was claimed"
    assert all(len(set(outcomes)) == 1 for outcomes in load.decided.values()), load.decided
    assert not load.redelivered_after_ack
