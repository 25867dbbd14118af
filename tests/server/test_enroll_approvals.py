"""Enrollment and approvals over HTTP."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.server.conftest import Api


async def enroll(api: Api, agent_id: str = "newbie") -> dict[str, Any]:
    created: dict[str, Any] = await api.post(
        "/v1/enroll",
        {"agent_id": agent_id, "name": "New", "capabilities": ["lint"], "reason": "hello"},
        token="",
        expect=201,
    )
    return created


async def test_enroll_approve_then_first_poll_delivers_the_token_once(api: Api) -> None:
    created = await enroll(api)
    assert created["status"] == "pending" and created["claim"].startswith("rly_claim_")
    path = f"/v1/enroll/{created['enroll_id']}"
    polled = await api.get(path, token="", claim=created["claim"])
    assert polled["status"] == "pending" and polled["token"] is None
    assert "claim_hash" not in polled

    approval = await api.get(f"/v1/approvals/{created['approval_id']}")
    assert approval["kind"] == "enrollment" and approval["status"] == "pending"
    assert approval["requested_by"] == "newbie" and approval["detail"] == "hello"
    pending = await api.get("/v1/approvals", status="pending")
    assert [a["approval_id"] for a in pending["approvals"]] == [created["approval_id"]]

    decided = await api.post(f"/v1/approvals/{created['approval_id']}/approve", {"note": "welcome"})
    assert decided["status"] == "approved" and decided["decided_by"] == "operator"
    assert decided["note"] == "welcome" and decided["decided_at"]
    assert decided["changed"] is True
    again = await api.post(f"/v1/approvals/{created['approval_id']}/approve", {"note": "late"})
    assert again == decided | {"changed": False}  # the same approval; nothing changed

    first = await api.get(path, token="", claim=created["claim"])
    assert first["status"] == "approved" and first["token"].startswith("rly_agent_")
    assert first["token_delivered"] is True
    second = await api.get(path, token="", claim=created["claim"])
    assert second["token"] is None and second["token_delivered"] is True

    beat = await api.post("/v1/agents/newbie/heartbeat", {}, token=first["token"])
    assert beat["name"] == "New" and beat["capabilities"] == ["lint"]
    await api.post(f"/v1/approvals/{created['approval_id']}/reject", {}, expect=409)


async def test_wrong_claim_looks_like_a_missing_enrollment(api: Api) -> None:
    created = await enroll(api)
    wrong = await api.get(f"/v1/enroll/{created['enroll_id']}", token="", claim="guess", expect=404)
    missing = await api.get("/v1/enroll/999999", token="", claim="guess", expect=404)
    assert wrong["code"] == missing["code"] == "not_found"
    assert wrong["detail"].replace(str(created["enroll_id"]), "N") == missing["detail"].replace(
        "999999", "N"
    )
    await api.get(f"/v1/enroll/{created['enroll_id']}", token="", expect=404)
    await api.get("/v1/enroll/abc", token="", claim="x", expect=422)


async def test_reject_and_conflicts(api: Api) -> None:
    await api.agent("taken")
    await api.post("/v1/enroll", {"agent_id": "taken"}, token="", expect=409)
    created = await enroll(api)
    approval_path = f"/v1/approvals/{created['approval_id']}"
    await api.agent("alice")
    await api.post(f"{approval_path}/approve", {}, as_="alice", expect=403)
    rejected = await api.post(f"{approval_path}/reject", {"note": "no", "decided_by": "Sam"})
    assert rejected["status"] == "rejected" and rejected["decided_by"] == "Sam"
    await api.post(f"{approval_path}/approve", {}, expect=409)
    polled = await api.get(f"/v1/enroll/{created['enroll_id']}", token="", claim=created["claim"])
    assert polled["status"] == "rejected" and polled["token"] is None
    await api.post("/v1/agents/newbie/heartbeat", {}, expect=404)
    await api.post("/v1/approvals/999999/approve", {}, expect=404)
    await api.get("/v1/approvals", status="maybe", expect=422)
    listed = await api.get("/v1/approvals", status="rejected")
    assert [a["approval_id"] for a in listed["approvals"]] == [created["approval_id"]]


async def test_approve_and_reject_at_once_decide_exactly_once(api: Api) -> None:
    created = await enroll(api)
    approval_path = f"/v1/approvals/{created['approval_id']}"
    headers = {"Authorization": "Bearer rly_op_test-operator-token-0123456789"}

    async def decide(verb: str) -> int:
        response = await api.client.post(f"{approval_path}/{verb}", json={}, headers=headers)
        await response.read()
        return response.status

    statuses = await asyncio.gather(*(decide(v) for v in ["approve", "reject"] * 5))
    final = await api.get(approval_path)
    winner = "approve" if final["status"] == "approved" else "reject"
    for verb, status in zip(["approve", "reject"] * 5, statuses, strict=True):
        assert status == (200 if verb == winner else 409)
    agents = await api.get("/v1/agents")
    assert [a["agent_id"] for a in agents["agents"]] == (["newbie"] if winner == "approve" else [])


async def test_pending_enrollment_expires(make_api: Any) -> None:
    api: Api = await make_api(enrollment_ttl_seconds=60)
    created = await enroll(api)
    api.clock.advance(61)
    polled = await api.get(f"/v1/enroll/{created['enroll_id']}", token="", claim=created["claim"])
    assert polled["status"] == "expired"
    approval = await api.get(f"/v1/approvals/{created['approval_id']}")
    assert approval["status"] == "expired"
    await api.post(f"/v1/approvals/{created['approval_id']}/approve", {}, expect=409)


async def test_deciding_an_expired_enrollment_keeps_it_expired(make_api: Any) -> None:
    # No sweep: the decision itself finds the expiry, and the 409 must not roll it back.
    api: Api = await make_api(enrollment_ttl_seconds=60, sweep_seconds=0)
    created = await enroll(api)
    api.clock.advance(61)
    refused = await api.post(f"/v1/approvals/{created['approval_id']}/approve", {}, expect=409)
    assert "expired" in refused["detail"]
    assert (await api.get("/v1/approvals", status="pending"))["approvals"] == []
    assert (await api.get("/v1/status"))["counts"]["pending_approvals"] == 0
    await api.post(f"/v1/approvals/{created['approval_id']}/reject", {}, expect=409)
    assert (await api.get(f"/v1/approvals/{created['approval_id']}"))["status"] == "expired"


async def test_the_sweep_expires_enrollments_nobody_touches(make_api: Any) -> None:
    api: Api = await make_api(enrollment_ttl_seconds=60, sweep_seconds=0.05)
    created = await enroll(api)
    assert (await api.get("/v1/status"))["counts"]["pending_approvals"] == 1
    api.clock.advance(61)
    deadline = asyncio.get_running_loop().time() + 5
    while (await api.get("/v1/approvals", status="pending"))["approvals"]:
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.05)
    assert (await api.get("/v1/status"))["counts"]["pending_approvals"] == 0
    approval = await api.get(f"/v1/approvals/{created['approval_id']}")
    assert approval["status"] == "expired" and approval["decided_by"] == "relay"
    feed = await api.get("/v1/events", after=0)
    assert [e["data"]["status"] for e in feed["events"] if e["kind"] == "approval.decided"] == [
        "expired"
    ]


async def test_an_enrollment_approval_shows_who_asks_and_approval_keeps_it(api: Api) -> None:
    created = await api.post(
        "/v1/enroll",
        {"agent_id": "scout", "name": "Scout", "kind": "crawler", "capabilities": ["fetch"]},
        token="",
        expect=201,
    )
    applicant = {"agent_id": "scout", "name": "Scout", "kind": "crawler", "capabilities": ["fetch"]}
    listed = await api.get("/v1/approvals", status="pending")
    [shown] = [a for a in listed["approvals"] if a["approval_id"] == created["approval_id"]]
    assert shown["applicant"] == applicant
    assert (await api.get(f"/v1/approvals/{created['approval_id']}"))["applicant"] == applicant
    await api.post(f"/v1/approvals/{created['approval_id']}/approve", {})
    [agent] = [a for a in (await api.get("/v1/agents"))["agents"] if a["agent_id"] == "scout"]
    assert (agent["name"], agent["kind"], agent["capabilities"]) == ("Scout", "crawler", ["fetch"])
