"""A rejection's reason, and a rejection that asks the agent to stop (``interrupt``): kept on
the approval, told in its event, refused on an approval; over HTTP on every backend."""

from __future__ import annotations

from tests.server.conftest import Api
from tests.server.test_approval_edits import prompt
from tests.server.test_approval_requests import events_of


async def test_a_rejection_that_stops_the_agent_tells_it_why(api: Api) -> None:
    await api.agent("builder")
    asked = await api.post(
        "/v1/approvals", prompt("claude-code", "git push -f"), as_="builder", expect=201
    )
    path = f"/v1/approvals/{asked['approval_id']}"
    await api.post(f"{path}/approve", {"interrupt": True}, expect=422)
    decided = await api.post(f"{path}/reject", {"note": "wait for me", "interrupt": True})
    assert decided["status"] == "rejected" and decided["interrupt"] is True
    shown = await api.get(path, as_="builder")
    assert shown["interrupt"] is True and shown["note"] == "wait for me"
    [told] = await events_of(api, "builder", asked["approval_id"], "approval.decided")
    assert told["data"]["note"] == "wait for me" and told["data"]["interrupt"] is True

    # A plain rejection is no stop; its note is the reason all the same.
    other = await api.post("/v1/approvals", prompt("codex", "ls"), as_="builder", expect=201)
    plain = await api.post(f"/v1/approvals/{other['approval_id']}/reject", {"note": "no"})
    assert plain["interrupt"] is False
    [told] = await events_of(api, "builder", other["approval_id"], "approval.decided")
    assert told["data"]["note"] == "no" and told["data"]["interrupt"] is False
