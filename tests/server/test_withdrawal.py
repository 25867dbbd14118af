"""An agent withdraws a request nobody waits for any more (its coding session stopped waiting):
``withdrawn``, decided by nobody, on the agent's feed; only a pending request, only by the
agent that asked."""

from __future__ import annotations

from tests.server.conftest import Api


async def test_the_agent_that_asked_withdraws_its_pending_request(api: Api) -> None:
    for agent in ("ann", "bob"):
        await api.agent(agent)
    asked = await api.post("/v1/approvals", {"title": "Bash: make deploy"}, as_="ann", expect=201)
    path = f"/v1/approvals/{asked['approval_id']}/withdraw"
    await api.post(path, {}, as_="bob", expect=404)  # another agent's request does not exist
    refused = await api.post(path, {}, expect=403)  # the operator decides, not withdraws
    assert "only the agent that asked" in refused["detail"]
    withdrawn = await api.post(path, {"reason": "answered at the terminal"}, as_="ann")
    assert withdrawn["status"] == "withdrawn" and withdrawn["changed"] is True
    assert withdrawn["decided_by"] is None and withdrawn["decided_at"] is not None
    assert withdrawn["note"] == "answered at the terminal"
    again = await api.post(path, {}, as_="ann")
    assert again["changed"] is False and again["note"] == "answered at the terminal"
    late = await api.post(f"/v1/approvals/{asked['approval_id']}/approve", {}, expect=409)
    assert "already withdrawn" in late["detail"]
    events = (await api.get("/v1/events", as_="ann", after=0))["events"]
    decided = [e for e in events if e["kind"] == "approval.decided"]
    assert [e["data"]["status"] for e in decided] == ["withdrawn"]
    listed = await api.get("/v1/approvals", status="withdrawn")
    assert [a["approval_id"] for a in listed["approvals"]] == [asked["approval_id"]]


async def test_a_decided_request_or_another_kind_is_not_withdrawn(api: Api) -> None:
    await api.agent("ann")
    asked = await api.post("/v1/approvals", {"title": "t"}, as_="ann", expect=201)
    await api.post(f"/v1/approvals/{asked['approval_id']}/reject", {})
    taken = await api.post(
        f"/v1/approvals/{asked['approval_id']}/withdraw", {}, as_="ann", expect=409
    )
    assert taken["detail"] == f"approval {asked['approval_id']} is already rejected"
    body = {"agent_id": "ann", "title": "restart", "reason": "stuck", "proposed_action": "restart"}
    other = await api.post("/v1/interventions/i-1/request-approval", body, as_="ann", expect=201)
    path = f"/v1/approvals/{other['approval_id']}/withdraw"
    assert "no request" in (await api.post(path, {}, as_="ann", expect=409))["detail"]
    await api.post(path, {"reason": "x" * 5000}, as_="ann", expect=422)
