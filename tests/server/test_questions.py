"""Questions: an agent asks with options (``kind: question``), the operator answers with a label,
several, or their own words; the first answer stands. Over HTTP on every backend."""

from __future__ import annotations

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

    # The first answer stands.
    again = await api.post(f"{path}/answer", {"answer": ["SQLite"]})
    assert again["changed"] is False and again["answer"] == ["Postgres"]


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
