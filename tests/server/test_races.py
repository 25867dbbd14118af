"""The races of the reliability promises, each run for many rounds."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from relay_core.services.base import SWEEP_BATCH
from tests.server.conftest import OPERATOR_TOKEN, Api, AppFactory

ROUNDS = 50
OP = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}


@pytest.fixture
async def api(make_api: Any) -> Api:
    """The app with the per-address enrollment limit off: these tests enroll in bulk."""
    built: Api = await make_api(enroll_rate_limit=0)
    return built


async def status_of(api: Api, method: str, path: str, **kw: Any) -> tuple[int, Any]:
    response = await api.client.request(method, path, **kw)
    return response.status, await response.json()


async def test_approve_against_reject_decides_once_every_round(api: Api) -> None:
    for n in range(ROUNDS):
        created = await api.post("/v1/enroll", {"agent_id": f"racer-{n}"}, token="", expect=201)
        path = f"/v1/approvals/{created['approval_id']}"
        (approve, _), (reject, _) = await asyncio.gather(
            status_of(api, "POST", f"{path}/approve", json={}, headers=OP),
            status_of(api, "POST", f"{path}/reject", json={}, headers=OP),
        )
        assert sorted([approve, reject]) == [200, 409], n
        final = await api.get(path)
        assert final["status"] == ("approved" if approve == 200 else "rejected")


async def test_concurrent_first_polls_deliver_the_token_once_every_round(api: Api) -> None:
    for n in range(ROUNDS):
        created = await api.post("/v1/enroll", {"agent_id": f"poller-{n}"}, token="", expect=201)
        await api.post(f"/v1/approvals/{created['approval_id']}/approve", {})
        polls = await asyncio.gather(
            *(
                status_of(
                    api,
                    "GET",
                    f"/v1/enroll/{created['enroll_id']}",
                    params={"claim": created["claim"]},
                )
                for _ in range(4)
            )
        )
        tokens = [body["token"] for status, body in polls if status == 200 and body["token"]]
        assert all(status == 200 for status, _ in polls)
        assert len(tokens) == 1, n


async def test_claim_race_has_one_winner_every_round(api: Api) -> None:
    agents = [f"c{i}" for i in range(4)]
    for agent in agents:
        await api.agent(agent)
    for n in range(ROUNDS):
        task = await api.post("/v1/tasks", {"title": f"r{n}"}, expect=201)
        results = await asyncio.gather(
            *(
                status_of(
                    api,
                    "POST",
                    f"/v1/tasks/{task['task_id']}/claim",
                    json={"agent_id": agent},
                    headers={"Authorization": f"Bearer {api.tokens[agent]}"},
                )
                for agent in agents
            )
        )
        assert sorted(status for status, _ in results) == [200, 409, 409, 409], n


async def test_reads_while_leases_keep_lapsing_reap_every_task_once(make_api: AppFactory) -> None:
    """Leases lapse all along while 16 readers read tasks, more at once than one read reaps
    (SWEEP_BATCH): readers share the reaping (none waits on or collides with another), none
    is refused, and each task is reaped once. The background sweep is off: the readers' reaping
    is what is tested, and a read skips the rows a sweep's batch holds, so the last read could
    show tasks the sweep was reopening at that moment."""
    api = await make_api(sweep_seconds=0)
    await api.agent("w")
    lapsing = SWEEP_BATCH + 100
    for n in range(lapsing):
        task = await api.post("/v1/tasks", {"title": f"l{n}"}, expect=201)
        claim = {"agent_id": "w", "lease_seconds": 5 + n // 10}  # 10 lapse each second
        await api.post(f"/v1/tasks/{task['task_id']}/claim", claim, as_="w")
    api.clock.advance(5 + SWEEP_BATCH // 10)  # SWEEP_BATCH have lapsed
    reading = True

    async def time_passes() -> None:
        while reading:
            api.clock.advance(1)
            await asyncio.sleep(0.005)

    clock = asyncio.create_task(time_passes())
    for _ in range(5):
        answers = await asyncio.gather(
            *(status_of(api, "GET", "/v1/tasks?status=open", headers=OP) for _ in range(16))
        )
        assert {status for status, _ in answers} == {200}, answers
    reading = False
    await clock
    api.clock.advance(lapsing)
    still_held = await api.get("/v1/tasks", status="claimed")
    assert still_held["tasks"] == []
    reaped: list[str] = []
    cursor = 0
    while page := (await api.get("/v1/events", after=cursor, limit=500))["events"]:
        reaped += [e["subject_id"] for e in page if e["kind"] == "task.lease_expired"]
        cursor = page[-1]["event_id"]
    assert len(reaped) == len(set(reaped)) == lapsing
