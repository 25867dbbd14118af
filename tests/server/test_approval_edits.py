"""The operator approves an agent's request changed (``payload`` on approve): the approval keeps
what was asked and what was approved, and the agent reads the change wherever it reads the
decision; over HTTP on every backend."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.server.conftest import Api
from tests.server.test_approval_requests import events_of


def prompt(source: str, command: str) -> dict[str, Any]:
    """A coding agent's permission prompt to run ``command``, as ``relay hook`` files it."""
    return {
        "title": f"Bash: {command}",
        "payload": {
            "source": source,
            "tool_name": "Bash",
            "tool_input": {"command": command, "description": "run the tests"},
            "cwd": "/work/app",
        },
    }


async def test_the_operator_approves_a_request_changed(api: Api) -> None:
    await api.agent("builder")
    asked = await api.post(
        "/v1/approvals", prompt("claude-code", "npm test"), as_="builder", expect=201
    )
    path = f"/v1/approvals/{asked['approval_id']}"
    waiting = asyncio.create_task(api.get(path, as_="builder", wait=20))
    await asyncio.sleep(0.2)  # the wait is under way before the decision
    changed = {**asked["payload"], "tool_input": {"command": "npm test -- --runInBand"}}
    decided = await api.post(f"{path}/approve", {"payload": changed, "note": "one at a time"})
    assert decided["status"] == "approved" and decided["changed"] is True
    assert decided["payload"] == asked["payload"]  # as asked, kept
    assert decided["approved_payload"] == changed
    for shown in (await waiting, await api.get(path, as_="builder"), await api.get(path)):
        assert shown["status"] == "approved" and shown["note"] == "one at a time"
        assert shown["payload"] == asked["payload"] and shown["approved_payload"] == changed
    listed = (await api.get("/v1/approvals", as_="builder"))["approvals"]
    assert [a["approved_payload"] for a in listed] == [changed]
    [told] = await events_of(api, "builder", asked["approval_id"], "approval.decided")
    assert told["data"]["status"] == "approved" and told["data"]["approved_payload"] == changed


async def test_a_payload_as_asked_approves_it_as_asked(api: Api) -> None:
    await api.agent("builder")
    asked = await api.post("/v1/approvals", prompt("claude-code", "ls"), as_="builder", expect=201)
    path = f"/v1/approvals/{asked['approval_id']}"
    decided = await api.post(f"{path}/approve", {"payload": asked["payload"]})
    assert decided["status"] == "approved" and decided["approved_payload"] is None
    [told] = await events_of(api, "builder", asked["approval_id"], "approval.decided")
    assert told["data"]["approved_payload"] is None
    # Approving again, changed or not, changes nothing: the first decision stands.
    again = await api.post(f"{path}/approve", {"payload": {"tool_input": {"command": "rm"}}})
    assert again["changed"] is False and again["approved_payload"] is None


async def test_what_cannot_be_approved_changed(api: Api) -> None:
    await api.agent("builder")
    changed = {"tool_input": {"command": "true"}}
    asked = await api.post(
        "/v1/approvals", prompt("claude-code", "make"), as_="builder", expect=201
    )
    path = f"/v1/approvals/{asked['approval_id']}"
    refused = await api.post(f"{path}/reject", {"payload": changed}, expect=422)
    assert refused["detail"][0]["loc"] == ["body", "payload"]
    assert "only an approval" in refused["detail"][0]["msg"]
    # Hosts that run a prompt as asked or not at all: Codex's hook, a Claude Code channel.
    for source, host in (("codex", "Codex"), ("claude-code-channel", "channel")):
        theirs = await api.post("/v1/approvals", prompt(source, "make"), as_="builder", expect=201)
        theirs_path = f"/v1/approvals/{theirs['approval_id']}"
        conflict = await api.post(f"{theirs_path}/approve", {"payload": changed}, expect=409)
        assert conflict["code"] == "conflict" and host in conflict["detail"]
        assert (await api.get(theirs_path))["status"] == "pending"  # nothing decided
    # Only an agent's request is approved changed; an enrollment is let in or not.
    enrolled = await api.post("/v1/enroll", {"agent_id": "newbie"}, token="", expect=201)
    enrollment = f"/v1/approvals/{enrolled['approval_id']}"
    conflict = await api.post(f"{enrollment}/approve", {"payload": changed}, expect=409)
    assert "enrollment" in conflict["detail"]
    assert (await api.get(enrollment))["status"] == "pending"
    # A payload is an object, bounded like any request's.
    await api.post(f"{path}/approve", {"payload": "make test"}, expect=422)
    assert (await api.get(path))["status"] == "pending"


async def test_a_command_approves_the_request_to_run_it_instead(api: Api) -> None:
    """``command``: the request's payload as asked, its command replaced, in one request."""
    await api.agent("builder")
    asked = await api.post(
        "/v1/approvals", prompt("claude-code", "npm test"), as_="builder", expect=201
    )
    path = f"/v1/approvals/{asked['approval_id']}"
    refused = await api.post(f"{path}/reject", {"command": "npm test -- --ci"}, expect=422)
    assert refused["detail"][0]["loc"] == ["body", "command"]
    both = {"command": "make", "payload": asked["payload"]}
    refused = await api.post(f"{path}/approve", both, expect=422)
    assert "not both" in refused["detail"][0]["msg"]
    decided = await api.post(f"{path}/approve", {"command": "npm test -- --ci"})
    instead = {"command": "npm test -- --ci", "description": "run the tests"}
    assert decided["changed"] is True and decided["payload"] == asked["payload"]
    assert decided["approved_payload"] == {**asked["payload"], "tool_input": instead}
    # A request that runs no command has none to change: a conflict, nothing decided.
    edit = {"title": "Edit: a.py", "payload": {**asked["payload"], "tool_name": "Edit"}}
    edit["payload"]["tool_input"] = {"file_path": "a.py"}
    other = await api.post("/v1/approvals", edit, as_="builder", expect=201)
    other_path = f"/v1/approvals/{other['approval_id']}"
    conflict = await api.post(f"{other_path}/approve", {"command": "ls"}, expect=409)
    assert "runs no command" in conflict["detail"] or "no command" in conflict["detail"]
    assert (await api.get(other_path))["status"] == "pending"
