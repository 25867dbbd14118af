"""What a row of the operation table declares, enforced by the server for every row: a create
that honours ``Idempotency-Key`` answers a retry with its first answer and makes nothing twice;
any other POST ignores the key; an operator-only row refuses an agent's token before anything
else is read."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import BaseModel

from relay_api.operations import OPERATIONS, Operation
from relay_server.app_keys import SERVES
from tests.server.conftest import OPERATOR_TOKEN, Api, AppFactory
from tests.server.test_authorization_matrix import BODIES, world

# SPEC.md: "Operator only: register, spaces create/archive/sync, rooms in spaces, approve/reject"
# (and answering notifications, adding an intervention's participants, policies and webhooks).
SPEC_OPERATOR_ONLY = {
    "agents.register",
    "spaces.create",
    "spaces.add_room",
    "spaces.sync",
    "spaces.archive",
    "approvals.approve",
    "approvals.reject",
    "approvals.answer",
    "notify.reply",
    "interventions.add_participant",
    *(f"policies.{verb}" for verb in ("create", "list", "show", "replace", "disable")),
    *(f"policies.{verb}" for verb in ("enable", "simulate")),
    *(f"webhooks.{verb}" for verb in ("create", "list", "show", "replace", "disable", "enable")),
    *(f"webhooks.{verb}" for verb in ("rotate_secret", "test", "deliveries", "retry")),
}
IDEMPOTENT = [op for op in OPERATIONS if op.idempotent]
OTHER_POSTS = [op for op in OPERATIONS if op.method == "POST" and not op.idempotent]
OPERATOR_ONLY = [op for op in OPERATIONS if op.operator_only]
# Who makes each create (the operator unless named): an agent's own acts, and the public route.
CREATOR = {
    "approvals.request": "alice",
    "notify.send": "alice",
    "interventions.request_approval": "alice",
    "interventions.diagnostic": "alice",
    "interventions.action": "alice",
    "enroll.request": "",
    "agents.me": "alice",
    "approvals.withdraw": "alice",
    "reservations.create": "alice",
    "a2a.send": "alice",
}


# Operations the world gives no successful request for: a delivery is failed only once the
# sender has given up on it (tests/server/test_webhooks.py retries one).
UNANSWERED_IN_THE_WORLD = {"webhooks.retry"}


def ids(ops: list[Operation[Any]]) -> list[str]:
    return [op.id for op in ops]


async def request_of(
    api: Api, op: Operation[Any], found: dict[str, str] | None = None
) -> tuple[str, dict[str, Any] | None, str]:
    """A request that ``op`` answers with success in the world ``found`` (a fresh one if
    none): its path, body and caller."""
    found = found or await world(api)
    body = BODIES.get(op.id) if op.body is not None else None
    if op.id == "notify.reply":  # a reply to the world's notification, as its platform names it
        note = await api.post("/v1/notify", {"text": "n"}, as_="alice", expect=201)
        body = {"platform_message_id": note["platform_message_id"], "text": "x"}
    if op.id == "interventions.action":  # a remediation needs its approval approved
        asked = await api.post(
            "/v1/interventions/inc-a/request-approval",
            BODIES["interventions.request_approval"],
            as_="alice",
            expect=201,
        )
        await api.post(f"/v1/approvals/{asked['approval_id']}/approve", {})
    if op.id == "tasks.event":  # progress is its claimer's
        body = {"agent_id": "alice", "message": "half way"}
    if op.id in ("approvals.reject", "approvals.withdraw"):  # one still pending, alice's
        asked = await api.post("/v1/approvals", {"title": "t"}, as_="alice", expect=201)
        found = {**found, "approval_id": str(asked["approval_id"])}
    if op.id == "approvals.answer":  # a question of alice's, still pending
        options = [{"label": "yes"}, {"label": "no"}]
        question = {"kind": "question", "title": "q?", "options": options}
        asked = await api.post("/v1/approvals", question, as_="alice", expect=201)
        found = {**found, "approval_id": str(asked["approval_id"])}
    if op.id == "tasks.fail":  # one still held (the world's may be completed by now)
        held = await api.post("/v1/tasks", {"title": "t"}, expect=201)
        await api.post(f"/v1/tasks/{held['task_id']}/claim", {"agent_id": "alice"}, as_="alice")
        found = {**found, "task_id": str(held["task_id"])}
    if op.id == "tasks.cancel":  # one not finished (the world's may be completed by now)
        fresh = await api.post("/v1/tasks", {"title": "t"}, expect=201)
        found = {**found, "task_id": str(fresh["task_id"])}
    path = re.sub(r"\{(\w+)\}", lambda match: found[match.group(1)], op.path)
    return path, body, CREATOR.get(op.id, "operator")


def keyed(api: Api, who: str, key: str) -> dict[str, str]:
    """The caller's headers (none for the public route), with a retry key."""
    if not who:
        return {"Idempotency-Key": key}
    token = OPERATOR_TOKEN if who == "operator" else api.tokens[who]
    return {"Authorization": f"Bearer {token}", "Idempotency-Key": key}


@pytest.mark.parametrize("op", IDEMPOTENT, ids=ids(IDEMPOTENT))
async def test_an_idempotent_create_answers_a_retry_with_its_first_answer(
    api: Api, op: Operation[Any]
) -> None:
    path, body, who = await request_of(api, op)
    headers = keyed(api, who, f"{op.id}-retry-key-0123456789")
    first = await api.client.post(path, json=body, headers=headers)
    again = await api.client.post(path, json=body, headers=headers)
    assert first.status == op.status, (op.id, await first.text())
    assert again.status == op.status and again.headers.get("Idempotent-Replayed") == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert await again.read() == await first.read(), op.id  # the very same bytes
    other = await api.client.post(path, json=body, headers=keyed(api, who, "another-key-0123456"))
    assert "Idempotent-Replayed" not in other.headers, op.id


@pytest.mark.parametrize("op", OTHER_POSTS, ids=ids(OTHER_POSTS))
async def test_any_other_post_ignores_the_key(api: Api, op: Operation[Any]) -> None:
    path, body, who = await request_of(api, op)
    headers = keyed(api, who, f"{op.id}-ignored-key-0123456789")
    for _ in range(2):
        response = await api.client.post(path, json=body, headers=headers)
        assert response.status < 500, (op.id, await response.text())
        assert "Idempotent-Replayed" not in response.headers, op.id


def test_the_operator_only_rows_are_the_specs() -> None:
    assert {op.id for op in OPERATOR_ONLY} == SPEC_OPERATOR_ONLY


@pytest.mark.parametrize("op", OPERATOR_ONLY, ids=ids(OPERATOR_ONLY))
async def test_an_operator_only_row_refuses_an_agent_before_reading_the_request(
    api: Api, op: Operation[Any]
) -> None:
    await api.agent("alice")
    path = re.sub(r"\{\w+\}", "1", op.path)
    headers = {"Authorization": f"Bearer {api.tokens['alice']}"}
    # A body that could not be read, and ids that name nothing: the refusal comes first.
    response = await api.client.request(op.method, path, data=b"{", headers=headers)
    body = await response.json()
    assert response.status == 403 and body["code"] == "forbidden", (op.id, body)


ANSWERING = [op for op in OPERATIONS if not op.stream]


async def test_every_answer_is_a_model_whose_json_is_the_body(make_api: AppFactory) -> None:
    """Each operation's service answers a pydantic model, and ``model_dump_json`` writes the
    very bytes the server sends (rows held as stored included)."""
    api = await make_api()
    found = await world(api)
    answers: dict[str, BaseModel] = {}
    serves = api.client.app[SERVES]
    for op in ANSWERING:

        async def kept(*args: Any, _serve: Any = serves[op.id], _id: str = op.id, **kw: Any) -> Any:
            answers[_id] = await _serve(*args, **kw)
            return answers[_id]

        serves[op.id] = kept
    answered = set()
    for op in ANSWERING:
        path, body, who = await request_of(api, op, found)
        params = {"enroll.status": {"claim": found["claim"]}, "search": {"q": "t"}}.get(op.id)
        headers = keyed(api, who, f"{op.id}-answer-key-0123456789")
        response = await api.client.request(
            op.method, path, json=body, params=params, headers=headers
        )
        if response.status >= 300:
            continue
        answered.add(op.id)
        answer = answers[op.id]
        assert isinstance(answer, op.response), op.id
        assert answer.model_dump_json().encode() == await response.read(), op.id
    missing = {op.id for op in ANSWERING} - UNANSWERED_IN_THE_WORLD - answered
    assert not missing, sorted(missing)
