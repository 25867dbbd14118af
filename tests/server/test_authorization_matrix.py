"""Who may call what: every operation of the route table × six identities, against objects
owned by agent A, and every create body with server-owned fields smuggled in.

Driven by the route table, so a new route without an entry below fails here.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from relay_api.operations import OPERATIONS, Operation
from tests.server.conftest import ONE_BACKEND, OPERATOR_TOKEN, Api, AppFactory

# Operations that act as, or read what belongs to, agent A: refused to agent B.
A_ONLY = {
    "agents.heartbeat",
    "agents.a2a",
    "agents.inbox",
    "messages.ack",
    "rooms.join",
    "rooms.messages",
    "tasks.claim",
    "tasks.event",
    "tasks.complete",
    "tasks.fail",
    "notify.retry",
    # SPEC.md: "an intervention is changed only by the agent that created it and the
    # participants the operator adds".
    "interventions.request_approval",
    "interventions.diagnostic",
    "interventions.action",
    "reservations.renew",
    "reservations.release",
}
# A public address (a literal, so nothing is resolved); nothing listens there.
HOOK = "https://93.184.215.14/hook"
# An external A2A agent's address that is refused at once (a loopback one, not allowed).
REFUSED_AGENT = "http://127.0.0.1:9/agent"
# An agent's own acts: the operator must name the agent (X-Agent-ID), else 403.
AGENTS_ONLY = {"approvals.request", "reservations.create"}
# Only the agent that asked an approval withdraws it; the world's approval is an enrollment,
# asked by none of the identities here.
REQUESTER_ONLY = {"approvals.withdraw"}
# Only a task's creator, or the operator, cancels it; the world's task is the operator's.
CREATOR_ONLY = {"tasks.cancel"}
BODIES: dict[str, dict[str, Any]] = {
    "approvals.request": {"title": "t"},
    "policies.create": {"name": "p", "decision": "approve", "enabled": False},
    "policies.replace": {"name": "p", "decision": "approve", "enabled": False},
    "policies.simulate": {"agent_id": "alice", "title": "t"},
    "webhooks.create": {"url": HOOK},
    "webhooks.replace": {"url": HOOK},
    "reservations.create": {"workspace": "repo-a", "paths": ["docs/**"]},
    "reservations.renew": {"ttl_seconds": 3600},
    "a2a.send": {"url": REFUSED_AGENT, "text": "x"},
    "agents.register": {"agent_id": "carol"},
    "agents.heartbeat": {},
    "agents.a2a": {"enabled": True},
    "messages.send": {"to": "alice", "text": "x"},
    "messages.ack": {"agent_id": "alice"},
    "notify.send": {"text": "x"},
    "notify.reply": {"platform_message_id": "local-1", "text": "x"},
    "rooms.join": {"agent_id": "alice"},
    "spaces.create": {"name": "S"},
    "spaces.add_room": {"name": "R"},
    "tasks.create": {"title": "t"},
    "tasks.claim": {"agent_id": "alice"},
    "tasks.event": {"agent_id": "alice"},
    "tasks.complete": {"agent_id": "alice"},
    "tasks.fail": {"agent_id": "alice"},
    "tasks.cancel": {"reason": "r"},
    "actions.record": {"action": "x"},
    "enroll.request": {"agent_id": "dave"},
    "approvals.approve": {},
    "approvals.reject": {},
    "approvals.answer": {"answer": ["yes"]},
    "approvals.withdraw": {},
    "interventions.request_approval": {"title": "t", "reason": "r", "proposed_action": "p"},
    "interventions.diagnostic": {"summary": "s", "content": "c"},
    "interventions.add_participant": {"agent_id": "bob"},
    "interventions.action": {
        "action": "a",
        "status": "succeeded",
        "evidence_before": "b",
        "evidence_after": "c",
    },
}
SMUGGLED = ("status", "claimed_by", "decided_by", "from_agent", "created_at")
# Fields of those names that a body legitimately declares (and the service checks).
DECLARED = {
    ("AgentHeartbeat", "status"),  # the agent's self-reported status
    ("InterventionActionCreate", "status"),  # the remediation's outcome
    ("MessageCreate", "from_agent"),  # the operator's only (403 for an agent)
    ("ApprovalDecision", "decided_by"),  # a label, operator only
    ("ApprovalAnswer", "decided_by"),  # the same label, on an answer
}
IDENTITIES = ("none", "bad", "A", "B", "A as B", "operator")


async def world(api: Api) -> dict[str, str]:
    """Objects owned by agent A (alice); B is bob."""
    await api.agent("alice")
    await api.agent("bob")
    message = await api.post("/v1/messages", {"to": "alice", "text": "m"}, as_="bob", expect=201)
    await api.post("/v1/rooms/room-a/join", {"agent_id": "alice"}, as_="alice", expect=201)
    await api.post("/v1/spaces", {"space_id": "space-a", "name": "S"}, expect=201)
    task = await api.post("/v1/tasks", {"title": "t"}, expect=201)
    await api.post(f"/v1/tasks/{task['task_id']}/claim", {"agent_id": "alice"}, as_="alice")
    enrolled = await api.post("/v1/enroll", {"agent_id": "erin"}, token="", expect=201)
    await api.post(
        "/v1/interventions/inc-a/diagnostic",
        {"summary": "s", "content": "c"},
        as_="alice",
        expect=201,
    )
    note = await api.post("/v1/notify", {"text": "n"}, as_="alice", expect=201)
    rule = {"name": "p", "decision": "approve", "match": {"agents": ["nobody"]}}
    kept = await api.post("/v1/policies", rule, expect=201)
    hook = await api.post("/v1/webhooks", {"url": HOOK}, expect=201)
    tested = await api.post(f"/v1/webhooks/{hook['webhook_id']}/test")
    held = {"workspace": "repo-a", "paths": ["src/**"]}
    reserved = await api.post("/v1/reservations", held, as_="alice", expect=201)
    called = {"url": REFUSED_AGENT, "text": "x"}
    call = await api.post("/v1/a2a/send", called, as_="alice", expect=201)
    return {
        "agent_id": "alice",
        "message_id": str(message["message_id"]),
        "room_id": "room-a",
        "space_id": "space-a",
        "task_id": str(task["task_id"]),
        "enroll_id": str(enrolled["enroll_id"]),
        "approval_id": str(enrolled["approval_id"]),
        "intervention_id": "inc-a",
        "claim": enrolled["claim"],
        "notification_id": str(note["notification_id"]),
        "policy_id": str(kept["policy_id"]),
        "webhook_id": str(hook["webhook_id"]),
        "delivery_id": str(tested["delivery_id"]),
        "reservation_id": str(reserved["reservation_id"]),
        "call_id": str(call["call_id"]),
    }


def headers(api: Api, who: str) -> dict[str, str]:
    return {
        "none": {},
        "bad": {"Authorization": "Bearer rly_agent_forged"},
        "A": {"Authorization": f"Bearer {api.tokens['alice']}"},
        "B": {"Authorization": f"Bearer {api.tokens['bob']}"},
        "A as B": {"Authorization": f"Bearer {api.tokens['alice']}", "X-Agent-ID": "bob"},
        "operator": {"Authorization": f"Bearer {OPERATOR_TOKEN}"},
    }[who]


def expected(route: Operation[Any], who: str) -> str:
    """'401', '403' or 'allowed' (any answer that is not a refusal nor a server error)."""
    if route.access == "public":
        return "allowed"
    if who in ("none", "bad"):
        return "401"
    if who == "A as B":
        return "403"
    if route.id in REQUESTER_ONLY:
        return "403"
    if route.id in CREATOR_ONLY:
        return "allowed" if who == "operator" else "403"
    if who == "operator":
        return "403" if route.id in AGENTS_ONLY else "allowed"
    if route.operator_only:  # the row's set: tests/server/test_operation_rows.py
        return "403"
    if who == "B" and route.id in A_ONLY:
        return "403"
    return "allowed"


async def test_authorization_matrix(make_api: AppFactory) -> None:
    # Hundreds of refusals from one address: the refusal limit is another test's subject.
    api = await make_api(refusal_rate_limit=0)
    ids = await world(api)
    outcomes: dict[tuple[str, str], tuple[str, int]] = {}
    for route in OPERATIONS:
        path = re.sub(r"\{(\w+)\}", lambda match: ids[match.group(1)], route.path)
        for who in IDENTITIES:
            body = BODIES[route.id] if route.body is not None else None
            if route.id == "enroll.request":
                body = {"agent_id": f"dave-{IDENTITIES.index(who)}"}
            params = {"claim": ids["claim"]} if route.id == "enroll.status" else None
            response = await api.client.request(
                route.method, path, json=body, params=params, headers=headers(api, who)
            )
            want = expected(route, who)
            got = str(response.status) if response.status in (401, 403) else "allowed"
            if route.stream and response.status == 200:
                response.close()  # an allowed stream never ends on its own
                outcomes[(route.id, who)] = (want, response.status)
                assert got == want, (route.id, who)
                continue
            assert response.status < 500, (route.id, who, await response.text())
            outcomes[(route.id, who)] = (want, response.status)
            assert got == want, (route.id, who, response.status, await response.text())
    assert len(outcomes) == len(OPERATIONS) * len(IDENTITIES)


@ONE_BACKEND
@pytest.mark.parametrize("route", [r for r in OPERATIONS if r.body is not None], ids=lambda r: r.id)
async def test_server_owned_fields_are_never_accepted(api: Api, route: Operation[Any]) -> None:
    assert route.body is not None
    declared = set(route.body.model_fields)
    for field in SMUGGLED:
        if field in declared:
            assert (route.body.__name__, field) in DECLARED, (route.id, field)
            continue
        body = {**BODIES[route.id], field: "smuggled"}
        path = re.sub(r"\{\w+\}", "1", route.path)  # "1" is a valid id of either kind
        response = await api.client.request(
            route.method, path, json=body, headers={"Authorization": f"Bearer {OPERATOR_TOKEN}"}
        )
        detail = (await response.json())["detail"]
        assert response.status == 422, (route.id, field, detail)
        assert any(d["loc"] == ["body", field] and d["type"] == "extra_forbidden" for d in detail)
