"""Tasks over HTTP: the state machine, leases, and exactly one claimer under concurrency."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.server.conftest import Api


async def make_task(api: Api, **fields: object) -> int:
    task = await api.post("/v1/tasks", {"title": "reindex", **fields}, expect=201)
    assert task["status"] == "open"
    return int(task["task_id"])


async def test_create_list_and_filter(api: Api) -> None:
    await api.agent("alice")
    await api.agent("bob")
    first = await make_task(api, priority=5, payload={"shard": 1})
    second = await make_task(api, assignee="bob")
    created = await api.get(f"/v1/tasks/{first}", as_="alice")
    assert created["payload"] == {"shard": 1} and created["created_by"] == "operator"
    await api.post(f"/v1/tasks/{first}/claim", {"agent_id": "alice"}, as_="alice")

    everything = await api.get("/v1/tasks", as_="alice")
    assert [t["task_id"] for t in everything["tasks"]] == [first, second]
    open_ = await api.get("/v1/tasks", as_="alice", status="open")
    assert [t["task_id"] for t in open_["tasks"]] == [second]
    mine = await api.get("/v1/tasks", as_="alice", claimed_by="alice")
    assert [t["task_id"] for t in mine["tasks"]] == [first]
    bobs = await api.get("/v1/tasks", as_="alice", assignee="bob")
    assert [t["task_id"] for t in bobs["tasks"]] == [second]
    await api.get("/v1/tasks", as_="alice", status="sleeping", expect=422)

    await api.post("/v1/tasks", {"title": "x", "assignee": "ghost"}, expect=404)
    await api.post("/v1/tasks", {"title": "x", "room_id": "ghost"}, expect=404)
    await api.post("/v1/tasks", {"title": ""}, expect=422)
    await api.post("/v1/tasks", {"title": "x", "status": "completed"}, expect=422)
    await api.get("/v1/tasks/999999", expect=404)


async def test_a_refused_claim_leaves_the_task_open(api: Api) -> None:
    """A claim is tried on the open task first; whatever refuses it after undoes it."""
    await api.agent("alice")
    task_id = await make_task(api)
    await api.post("/v1/tasks/999999/claim", {"agent_id": "alice"}, as_="alice", expect=404)
    await api.post(f"/v1/tasks/{task_id}/claim", {"agent_id": "ghost"}, expect=404)
    assigned = await api.post("/v1/tasks", {"title": "t", "assignee": "alice"}, expect=201)
    await api.agent("bob")
    await api.post(
        f"/v1/tasks/{assigned['task_id']}/claim", {"agent_id": "bob"}, as_="bob", expect=403
    )
    for unclaimed in (task_id, assigned["task_id"]):
        task = await api.get(f"/v1/tasks/{unclaimed}")
        assert task["status"] == "open" and task["attempts"] == 0 and task["claimed_by"] is None
    trail = await api.get(f"/v1/tasks/{task_id}/events")
    assert trail["events"] == []


async def test_claim_progress_complete(api: Api) -> None:
    await api.agent("alice")
    await api.agent("bob")
    task_id = await make_task(api)
    claimed = await api.post(
        f"/v1/tasks/{task_id}/claim", {"agent_id": "alice", "lease_seconds": 30}, as_="alice"
    )
    assert claimed["status"] == "claimed" and claimed["claimed_by"] == "alice"
    assert claimed["attempts"] == 1 and claimed["lease_expires_at"]
    again = await api.post(f"/v1/tasks/{task_id}/claim", {"agent_id": "alice"}, as_="alice")
    assert again == claimed
    taken = await api.post(f"/v1/tasks/{task_id}/claim", {"agent_id": "bob"}, as_="bob", expect=409)
    assert taken["code"] == "conflict"

    event = await api.post(
        f"/v1/tasks/{task_id}/events",
        {"agent_id": "alice", "message": "halfway", "progress": 50},
        as_="alice",
        expect=201,
    )
    assert event["kind"] == "progress" and event["progress"] == 50
    progressed = await api.get(f"/v1/tasks/{task_id}")
    assert progressed["status"] == "in_progress" and progressed["progress"] == 50
    await api.post(f"/v1/tasks/{task_id}/events", {"agent_id": "bob"}, as_="bob", expect=409)
    await api.post(
        f"/v1/tasks/{task_id}/events",
        {"agent_id": "alice", "progress": 101},
        as_="alice",
        expect=422,
    )

    await api.post(f"/v1/tasks/{task_id}/complete", {"agent_id": "bob"}, as_="bob", expect=409)
    await api.post(f"/v1/tasks/{task_id}/complete", {"agent_id": "alice"}, as_="bob", expect=403)
    done = await api.post(
        f"/v1/tasks/{task_id}/complete", {"agent_id": "alice", "result": {"rows": 3}}, as_="alice"
    )
    assert done["status"] == "completed" and done["result"] == {"rows": 3}
    assert done["finished_at"] and done["lease_expires_at"] is None
    repeat = await api.post(f"/v1/tasks/{task_id}/complete", {"agent_id": "alice"}, as_="alice")
    assert repeat == done
    await api.post(f"/v1/tasks/{task_id}/fail", {"agent_id": "alice"}, as_="alice", expect=409)
    await api.post(f"/v1/tasks/{task_id}/claim", {"agent_id": "bob"}, as_="bob", expect=409)

    trail = await api.get(f"/v1/tasks/{task_id}/events")
    assert [e["kind"] for e in trail["events"]] == ["claimed", "progress", "completed"]


async def test_fail_with_and_without_retry(api: Api) -> None:
    await api.agent("alice")
    task_id = await make_task(api, max_attempts=2)
    await api.post(f"/v1/tasks/{task_id}/claim", {"agent_id": "alice"}, as_="alice")
    retried = await api.post(
        f"/v1/tasks/{task_id}/fail",
        {"agent_id": "alice", "error": "disk full", "retry": True},
        as_="alice",
    )
    assert retried["status"] == "open" and retried["claimed_by"] is None
    assert retried["error"] == "disk full"

    await api.post(f"/v1/tasks/{task_id}/claim", {"agent_id": "alice"}, as_="alice")
    final = await api.post(
        f"/v1/tasks/{task_id}/fail",
        {"agent_id": "alice", "error": "still full", "retry": True},
        as_="alice",
    )
    assert final["status"] == "failed" and final["attempts"] == 2  # no attempts left
    again = await api.post(f"/v1/tasks/{task_id}/fail", {"agent_id": "alice"}, as_="alice")
    assert again == final
    await api.post(f"/v1/tasks/{task_id}/complete", {"agent_id": "alice"}, as_="alice", expect=409)
    unclaimed = await make_task(api)
    await api.post(f"/v1/tasks/{unclaimed}/fail", {"agent_id": "alice"}, as_="alice", expect=409)


async def test_assigned_task_only_for_its_assignee(api: Api) -> None:
    await api.agent("alice")
    await api.agent("bob")
    task_id = await make_task(api, assignee="bob")
    denied = await api.post(
        f"/v1/tasks/{task_id}/claim", {"agent_id": "alice"}, as_="alice", expect=403
    )
    assert denied["code"] == "forbidden"
    await api.post(f"/v1/tasks/{task_id}/claim", {"agent_id": "bob"}, as_="bob")


async def test_a_lapsed_lease_reopens_the_task_and_fences_the_old_claimer(api: Api) -> None:
    await api.agent("alice")
    await api.agent("bob")
    task_id = await make_task(api)
    await api.post(
        f"/v1/tasks/{task_id}/claim", {"agent_id": "alice", "lease_seconds": 10}, as_="alice"
    )
    api.clock.advance(8)
    await api.post(f"/v1/tasks/{task_id}/events", {"agent_id": "alice"}, as_="alice", expect=201)
    api.clock.advance(8)  # the event renewed the lease: still held
    assert (await api.get(f"/v1/tasks/{task_id}"))["claimed_by"] == "alice"

    api.clock.advance(3)
    reopened = await api.get(f"/v1/tasks/{task_id}")
    assert reopened["status"] == "open" and reopened["claimed_by"] is None
    trail = await api.get(f"/v1/tasks/{task_id}/events")
    assert trail["events"][-1]["kind"] == "lease_expired"

    await api.post(f"/v1/tasks/{task_id}/claim", {"agent_id": "bob"}, as_="bob")
    late = await api.post(
        f"/v1/tasks/{task_id}/complete", {"agent_id": "alice"}, as_="alice", expect=409
    )
    assert late["code"] == "conflict"


async def test_lapsed_leases_are_swept_without_any_task_operation(make_api: Any) -> None:
    api: Api = await make_api(sweep_seconds=0.05)
    await api.agent("alice")
    task_ids = [await make_task(api) for _ in range(3)]
    for task_id in task_ids:
        await api.post(
            f"/v1/tasks/{task_id}/claim", {"agent_id": "alice", "lease_seconds": 5}, as_="alice"
        )
    api.clock.advance(6)
    # Only the event feed is read (it reaps nothing): the sweep alone reopens the tasks.
    deadline = asyncio.get_running_loop().time() + 5
    while True:
        feed = await api.get("/v1/events", after=0, limit=100)
        swept = {int(e["subject_id"]) for e in feed["events"] if e["kind"] == "task.lease_expired"}
        if swept == set(task_ids):
            break
        assert asyncio.get_running_loop().time() < deadline, swept
        await asyncio.sleep(0.05)
    for task_id in task_ids:
        assert (await api.get(f"/v1/tasks/{task_id}"))["status"] == "open"


async def test_twenty_agents_claim_one_task_exactly_one_wins(api: Api) -> None:
    agents = [f"worker-{i}" for i in range(20)]
    for agent_id in agents:
        await api.agent(agent_id)
    task_id = await make_task(api)

    async def claim(agent_id: str) -> int:
        response = await api.client.post(
            f"/v1/tasks/{task_id}/claim",
            json={"agent_id": agent_id},
            headers={"Authorization": f"Bearer {api.tokens[agent_id]}"},
        )
        await response.read()
        return response.status

    statuses = await asyncio.gather(*(claim(a) for a in agents))
    assert sorted(statuses) == [200] + [409] * 19
    task = await api.get(f"/v1/tasks/{task_id}")
    assert task["claimed_by"] in agents and task["attempts"] == 1
    trail = await api.get(f"/v1/tasks/{task_id}/events")
    assert [e["kind"] for e in trail["events"]] == ["claimed"]


async def lease_expired_events(api: Api) -> list[int]:
    feed = await api.get("/v1/events", after=0, limit=1000)
    return [int(e["subject_id"]) for e in feed["events"] if e["kind"] == "task.lease_expired"]


async def test_a_read_reopens_the_lapsed_tasks_it_could_show_and_no_other(make_api: Any) -> None:
    """After a mass lapse a read reaps only what its answer could show (the sweep, off here,
    does the rest in small batches), so no read waits on reaping it does not need; and no
    answer shows a lapsed claim as held."""
    api: Api = await make_api(sweep_seconds=0)
    await api.agent("alice")
    task_ids = [await make_task(api) for _ in range(150)]
    for task_id in task_ids:
        claim = {"agent_id": "alice", "lease_seconds": 5}
        await api.post(f"/v1/tasks/{task_id}/claim", claim, as_="alice")
    api.clock.advance(6)

    first = await api.get("/v1/tasks", limit=10)  # a full page: tasks 1 to 10
    assert [t["status"] for t in first["tasks"]] == ["open"] * 10
    assert sorted(await lease_expired_events(api)) == task_ids[:10]

    one = await api.get(f"/v1/tasks/{task_ids[-1]}")
    assert one["status"] == "open"
    assert sorted(await lease_expired_events(api)) == [*task_ids[:10], task_ids[-1]]

    # Open tasks after the cursor: the lapsed ones among them are open too, and shown.
    second = await api.get("/v1/tasks", status="open", limit=20, cursor=first["next_cursor"])
    assert [t["task_id"] for t in second["tasks"]] == task_ids[10:30]
    claimed = await api.get("/v1/tasks", status="claimed", limit=1000)
    assert claimed["tasks"] == []  # every lapsed claim it could show was reopened first
    assert len(set(await lease_expired_events(api))) == 150
