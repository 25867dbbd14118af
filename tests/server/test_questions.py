"""Questions: an agent asks with options (``kind: question``), the operator answers with a label,
several, or their own words; the first answer stands. Over HTTP on every backend."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from tests.server.conftest import Api
from tests.server.test_approval_requests import events_of

OPTIONS = [{"label": "Postgres", "description": "the shared cluster"}, {"label": "SQLite"}]


async def ask(api: Api, **more: Any) -> dict[str, Any]:
    body = {"kind": "question", "title": "Which database?", "options": OPTIONS} | more
    return await api.post("/v1/approvals", body, as_="builder", expect=201)


async def test_the_operator_answers_a_question_with_an_option(api: Api) -> None:
    await api.agent("builder")
    asked = await ask(api)
    assert asked["kind"] == "question" and asked["status"] == "pending"
    assert asked["options"] == [OPTIONS[0], {"label": "SQLite", "description": None}]
    assert asked["multiple"] is False and asked["allow_other"] is False and asked["answer"] is None
    path = f"/v1/approvals/{asked['approval_id']}"
    await api.post(f"{path}/approve", {}, expect=409)  # a question is answered, not approved
    await api.post(f"{path}/answer", {"answer": ["MySQL"]}, expect=422)
    await api.post(f"{path}/answer", {"answer": ["Postgres", "SQLite"]}, expect=422)
    answered = await api.post(f"{path}/answer", {"answer": ["Postgres"], "note": "the usual"})
    assert answered["status"] == "answered" and answered["answer"] == ["Postgres"]
    assert answered["changed"] is True and answered["decided_by"] == "operator"
    shown = await api.get(path, as_="builder")
    assert shown["answer"] == ["Postgres"] and shown["note"] == "the usual"
    [told] = await events_of(api, "builder", asked["approval_id"], "approval.decided")
    assert told["data"]["status"] == "answered" and told["data"]["answer"] == ["Postgres"]

    # The first answer stands: the same again changes nothing, another is a conflict.
    again = await api.post(f"{path}/answer", {"answer": ["Postgres"]})
    assert again["changed"] is False and again["answer"] == ["Postgres"]
    other = await api.post(f"{path}/answer", {"answer": ["SQLite"]}, expect=409)
    assert other["code"] == "conflict" and "already answered (Postgres)" in other["detail"]
    assert (await api.get(path))["answer"] == ["Postgres"]


async def test_several_options_or_the_operators_own_words(api: Api) -> None:
    await api.agent("builder")
    several = await ask(api, multiple=True)
    path = f"/v1/approvals/{several['approval_id']}/answer"
    answered = await api.post(path, {"answer": ["SQLite", "Postgres", "SQLite"]})
    assert answered["answer"] == ["SQLite", "Postgres"]
    other = await ask(api, allow_other=True)
    path = f"/v1/approvals/{other['approval_id']}/answer"
    await api.post(path, {"answer": ["DuckDB", "Postgres"]}, expect=422)
    answered = await api.post(path, {"answer": ["DuckDB, in memory"]})
    assert answered["answer"] == ["DuckDB, in memory"]


async def test_what_a_question_is_not(api: Api) -> None:
    await api.agent("builder")
    base = {"kind": "question", "title": "Which?"}
    for wrong in (
        base,  # no options
        base | {"options": [{"label": "one"}]},  # fewer than two
        base | {"options": [{"label": "a"}] * 2},  # the same label twice
        base | {"options": [{"label": f"o{n}"} for n in range(11)]},  # more than ten
        base | {"options": [{"label": "x" * 101}, {"label": "y"}]},
        {"title": "Deploy?", "options": OPTIONS},  # options on a request
        {"title": "Deploy?", "multiple": True},
    ):
        await api.post("/v1/approvals", wrong, as_="builder", expect=422)
    request = await api.post("/v1/approvals", {"title": "Deploy?"}, as_="builder", expect=201)
    await api.post(
        f"/v1/approvals/{request['approval_id']}/answer", {"answer": ["yes"]}, expect=409
    )
    await api.post("/v1/approvals/999999/answer", {"answer": ["yes"]}, expect=404)
    asked = await ask(api)
    await api.post(f"/v1/approvals/{asked['approval_id']}/answer", {"answer": []}, expect=422)
    await api.post(
        f"/v1/approvals/{asked['approval_id']}/answer",
        {"answer": ["SQLite"]},
        as_="builder",
        expect=403,
    )
    # The agent may withdraw it; the operator may decline it (reject).
    withdrawn = await api.post(f"/v1/approvals/{asked['approval_id']}/withdraw", {}, as_="builder")
    assert withdrawn["status"] == "withdrawn"
    declined = await ask(api)
    rejected = await api.post(
        f"/v1/approvals/{declined['approval_id']}/reject", {"note": "ask me later"}
    )
    assert rejected["status"] == "rejected"


async def test_policies_never_approve_a_question(api: Api) -> None:
    await api.agent("builder")
    await api.post("/v1/policies", {"name": "all", "decision": "approve"}, expect=201)
    assert (await ask(api))["status"] == "pending"
    await api.post(
        "/v1/policies",
        {"name": "no questions", "decision": "reject", "match": {"kinds": ["question"]}},
        expect=201,
    )
    assert (await ask(api))["status"] == "rejected"


async def test_a_policy_answers_a_question_with_a_fixed_option(api: Api) -> None:
    await api.agent("builder")
    for refused in (
        {"name": "n", "decision": "answer"},  # no answer
        {"name": "n", "decision": "approve", "answer": ["Postgres"]},
        {"name": "n", "decision": "answer", "answer": []},
        {"name": "n", "decision": "answer", "answer": ["x" * 101]},
    ):
        await api.post("/v1/policies", refused, expect=422)
    body = {"name": "the usual", "decision": "answer", "answer": ["Postgres"], "note": "always"}
    usual = await api.post("/v1/policies", body, expect=201)
    assert usual["answer"] == ["Postgres"]
    answered = await ask(api)
    assert answered["status"] == "answered" and answered["answer"] == ["Postgres"]
    assert answered["decided_by"] == f"policy:{usual['policy_id']}@1"
    assert answered["note"] == "always"
    shown = await api.get(f"/v1/approvals/{answered['approval_id']}", as_="builder")
    assert shown["answer"] == ["Postgres"]
    [decided] = await events_of(api, "builder", answered["approval_id"], "approval.decided")
    assert decided["data"]["status"] == "answered" and decided["data"]["answer"] == ["Postgres"]

    # Not offered, or several where one is taken, or not a question: the operator decides.
    other = [{"label": "MySQL"}, {"label": "SQLite"}]
    assert (await ask(api, options=other))["status"] == "pending"
    both = {"name": "both", "decision": "answer", "answer": ["Postgres", "SQLite"], "priority": 5}
    await api.post("/v1/policies", body | both, expect=201)
    assert (await ask(api))["answer"] == ["Postgres"]  # one is taken: the priority 0 one
    assert (await ask(api, multiple=True))["answer"] == ["Postgres", "SQLite"]
    request = await api.post("/v1/approvals", {"title": "Deploy?"}, as_="builder", expect=201)
    assert request["status"] == "pending"
    simulated = await api.post(
        "/v1/policies/simulate",
        {"agent_id": "builder", "kind": "question", "title": "Which?", "options": OPTIONS},
    )
    assert simulated["decision"] == "answer" and simulated["answer"] == ["Postgres"]


async def test_an_ask_policy_leaves_it_to_the_operator_with_its_own_reminder(api: Api) -> None:
    await api.agent("builder")
    for refused in (
        {"name": "n", "decision": "approve", "remind_after": 60},
        {"name": "n", "decision": "ask", "limit": {"count": 1, "per_seconds": 60}},
        {"name": "n", "decision": "ask", "remind_after": 0},
    ):
        await api.post("/v1/policies", refused, expect=422)
    await api.post("/v1/policies", {"name": "deploys pass", "decision": "approve"}, expect=201)
    careful = {
        "name": "prod is asked",
        "decision": "ask",
        "match": {"title": "prod"},
        "remind_after": 120,
    }
    ask_policy = await api.post("/v1/policies", careful, expect=201)
    assert ask_policy["remind_after"] == 120 and ask_policy["escalate_after"] is None
    routine = await api.post(
        "/v1/approvals", {"title": "Deploy staging"}, as_="builder", expect=201
    )
    assert routine["status"] == "approved"
    mine = {"title": "Deploy prod", "remind_after": 5}
    held = await api.post("/v1/approvals", mine, as_="builder", expect=201)
    # Before the approve policy (more cautious at one priority), and its reminder wins.
    assert held["status"] == "pending" and held["decided_by"] is None
    due = datetime.fromisoformat(held["created_at"]) + timedelta(seconds=120)
    assert datetime.fromisoformat(held["remind_at"]) == due
    simulated = await api.post(
        "/v1/policies/simulate", {"agent_id": "builder", "title": "Deploy prod"}
    )
    assert simulated["decision"] == "ask" and simulated["policy_id"] == ask_policy["policy_id"]
