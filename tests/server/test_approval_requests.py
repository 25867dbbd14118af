"""Any agent can ask (approvals of kind ``request``), waits for the decision, and a deadline
ends the wait: over HTTP on every backend."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from relay_server.app_keys import SERVICES
from tests.server.conftest import Api, AppFactory

ASK = {
    "title": "Bash: npm publish --tag next",
    "detail": "publishing 2.0.0-rc.1",
    "payload": {"tool_name": "Bash", "tool_input": {"command": "npm publish --tag next"}},
}


async def events_of(api: Api, as_: str, subject: int, kind: str) -> list[dict[str, Any]]:
    """The caller's events of that kind about the approval, once there is one. On PostgreSQL
    the feed shows a transaction's events once every older transaction of the cluster ended,
    which another application's may delay."""
    deadline = time.monotonic() + 20
    while True:
        page = await api.get("/v1/events", as_=as_, after=0, limit=1000)
        found = [e for e in page["events"] if e["kind"] == kind and e["subject_id"] == str(subject)]
        if found or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.1)


async def test_an_agent_asks_and_the_operator_decides(api: Api) -> None:
    await api.agent("builder")
    asked = await api.post("/v1/approvals", {**ASK, "expires_in": 600}, as_="builder", expect=201)
    assert asked["kind"] == "request" and asked["status"] == "pending"
    assert asked["requested_by"] == "builder" and asked["payload"] == ASK["payload"]
    assert asked["expires_at"] is not None and asked["decided_by"] is None
    forever = await api.post("/v1/approvals", {"title": "no deadline"}, as_="builder", expect=201)
    assert forever["expires_at"] is None and forever["payload"] is None
    pending = (await api.get("/v1/approvals", status="pending"))["approvals"]
    assert [a["approval_id"] for a in pending] == [forever["approval_id"], asked["approval_id"]]
    decided = await api.post(f"/v1/approvals/{asked['approval_id']}/approve", {"note": "ok"})
    assert decided["status"] == "approved" and decided["decided_by"] == "operator"
    shown = await api.get(f"/v1/approvals/{asked['approval_id']}", as_="builder")
    assert shown["status"] == "approved" and shown["note"] == "ok"
    assert await events_of(api, "builder", asked["approval_id"], "approval.decided")


async def test_a_request_is_seen_only_by_the_agent_that_asked_and_the_operator(api: Api) -> None:
    await api.agent("builder")
    await api.agent("other")
    enrolled = await api.post("/v1/enroll", {"agent_id": "newbie"}, token="", expect=201)
    asked = await api.post("/v1/approvals", ASK, as_="builder", expect=201)
    path = f"/v1/approvals/{asked['approval_id']}"
    missing = await api.get(path, as_="other", expect=404)
    assert missing["code"] == "not_found"
    await api.get(path, as_="other", wait=1, expect=404)
    seen_by_other = [
        a["approval_id"] for a in (await api.get("/v1/approvals", as_="other"))["approvals"]
    ]
    assert seen_by_other == [enrolled["approval_id"]]  # an enrollment stays everyone's to see
    seen_by_builder = {
        a["approval_id"] for a in (await api.get("/v1/approvals", as_="builder"))["approvals"]
    }
    assert seen_by_builder == {enrolled["approval_id"], asked["approval_id"]}
    assert (await api.get(path))["title"] == ASK["title"]  # the operator sees it
    assert await events_of(api, "builder", asked["approval_id"], "approval.requested")
    assert not [
        e
        for e in (await api.get("/v1/events", as_="other", after=0, limit=1000))["events"]
        if e["subject_id"] == str(asked["approval_id"])
    ]


async def test_what_a_request_may_be(api: Api) -> None:
    await api.agent("builder")
    for bad in (
        {"title": ""},
        {"title": "x" * 501},
        {"title": "t", "expires_in": 0},
        {"title": "t", "expires_in": 604_801},
        {"title": "t", "payload": ["not", "an", "object"]},
        {"title": "t", "detail": "d" * 65_537},
        {"title": "t", "payload": {"big": "x" * 65_536}},
        {"title": "t", "status": "approved"},
    ):
        await api.post("/v1/approvals", bad, as_="builder", expect=422)
    refused = await api.post("/v1/approvals", {"title": "t"}, expect=403)  # the operator alone
    assert "X-Agent-ID" in refused["detail"]
    acting = await api.post(
        "/v1/approvals", {"title": "t"}, headers={"X-Agent-ID": "builder"}, expect=201
    )
    assert acting["requested_by"] == "builder"
    await api.get(f"/v1/approvals/{acting['approval_id']}", wait=61, expect=422)


async def test_a_key_makes_a_request_once(api: Api) -> None:
    await api.agent("builder")
    key = {"Idempotency-Key": "ask-once-0123456789"}
    first = await api.post("/v1/approvals", ASK, as_="builder", headers=key, expect=201)
    again = await api.post("/v1/approvals", ASK, as_="builder", headers=key, expect=201)
    assert again == first
    assert len((await api.get("/v1/approvals"))["approvals"]) == 1


async def test_a_wait_answers_as_soon_as_the_approval_is_decided(api: Api) -> None:
    await api.agent("builder")
    asked = await api.post("/v1/approvals", ASK, as_="builder", expect=201)
    path = f"/v1/approvals/{asked['approval_id']}"
    started = time.monotonic()
    still = await api.get(path, as_="builder", wait=0.3)
    assert still["status"] == "pending" and time.monotonic() - started >= 0.3

    async def decide_soon() -> None:
        await asyncio.sleep(0.3)
        await api.post(f"{path}/reject", {"note": "not on a Friday"})

    deciding = asyncio.create_task(decide_soon())
    started = time.monotonic()
    answered = await api.get(path, as_="builder", wait=30)
    waited = time.monotonic() - started
    await deciding
    assert answered["status"] == "rejected" and answered["note"] == "not on a Friday"
    assert waited < 10  # woken by the decision, not by the end of the wait


async def test_a_deadline_expires_the_request_once(api: Api) -> None:
    await api.agent("builder")
    asked = await api.post("/v1/approvals", {**ASK, "expires_in": 10}, as_="builder", expect=201)
    path = f"/v1/approvals/{asked['approval_id']}"
    api.clock.advance(11)
    expired = await api.get(path, as_="builder", wait=5)  # found due: expired, at once
    assert expired["status"] == "expired" and expired["decided_by"] == "deadline"
    again = await api.get(path)
    assert again == expired
    for verb in ("approve", "reject"):
        conflict = await api.post(f"{path}/{verb}", {}, expect=409)
        assert "expired" in conflict["detail"] and "deadline" in conflict["detail"]
    decided = await events_of(api, "builder", asked["approval_id"], "approval.decided")
    assert len(decided) == 1 and decided[0]["data"]["status"] == "expired"


async def test_the_sweep_expires_what_nobody_reads(make_api: AppFactory) -> None:
    api = await make_api(sweep_seconds=0)  # the test sweeps by hand
    await api.agent("builder")
    due = [
        await api.post(
            "/v1/approvals", {"title": f"t{n}", "expires_in": 5}, as_="builder", expect=201
        )
        for n in range(3)
    ]
    later = await api.post(
        "/v1/approvals", {"title": "later", "expires_in": 60}, as_="builder", expect=201
    )
    services = api.client.server.app[SERVICES]
    assert await services.approvals.sweep() == 0
    api.clock.advance(6)
    assert await services.approvals.sweep(limit=2) == 2
    assert await services.approvals.sweep() == 1
    assert await services.approvals.sweep() == 0
    statuses = {
        a["approval_id"]: a["status"] for a in (await api.get("/v1/approvals"))["approvals"]
    }
    assert [statuses[a["approval_id"]] for a in due] == ["expired"] * 3
    assert statuses[later["approval_id"]] == "pending"
    assert (await api.get("/v1/status"))["counts"]["pending_approvals"] == 1
