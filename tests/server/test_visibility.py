"""Reads that stay within what the caller may see (hardening round three): reserved actor
names, replies into conversations, the status counts, and who a decision is recorded as."""

from __future__ import annotations

import pytest

from tests.server.conftest import Api


@pytest.mark.parametrize(
    "name", ["anonymous", "Anonymous", "operator", "deadline", "system", "policy:1@1"]
)
async def test_relays_own_actor_names_cannot_be_taken(api: Api, name: str) -> None:
    await api.post("/v1/agents/register", {"agent_id": name}, expect=422)
    await api.post("/v1/enroll", {"agent_id": name}, token="", expect=422)


async def test_a_reply_needs_the_message_replied_to_to_be_readable(api: Api) -> None:
    for agent in ("ann", "bob", "eve"):
        await api.agent(agent)
    private = await api.post(
        "/v1/messages", {"to": "bob", "text": "just us"}, as_="ann", expect=201
    )
    sneaked = {"to": "bob", "text": "me too", "reply_to": private["message_id"]}
    hidden = await api.post("/v1/messages", sneaked, as_="eve", expect=404)
    missing = await api.post("/v1/messages", sneaked | {"reply_to": 999_999}, as_="eve", expect=404)
    assert hidden["detail"].replace(str(private["message_id"]), "N") == missing["detail"].replace(
        "999999", "N"
    )
    answer = {"to": "ann", "text": "ok", "reply_to": private["message_id"]}
    replied = await api.post("/v1/messages", answer, as_="bob", expect=201)
    assert replied["thread_id"] == private["thread_id"]
    await api.post("/v1/rooms/ops/join", {}, as_="ann", expect=201)
    post = await api.post("/v1/messages", {"room_id": "ops", "text": "hi"}, as_="ann", expect=201)
    outside = {"to": "ann", "text": "x", "reply_to": post["message_id"]}
    await api.post("/v1/messages", outside, as_="eve", expect=404)
    await api.post("/v1/rooms/ops/join", {}, as_="eve", expect=201)
    await api.post("/v1/messages", outside, as_="eve", expect=201)


async def test_an_agents_status_counts_what_it_can_see(api: Api) -> None:
    await api.agent("ann")
    await api.agent("bob")
    await api.post("/v1/approvals", {"title": "ann's private ask"}, as_="ann", expect=201)
    await api.post("/v1/approvals", {"title": "and another"}, as_="ann", expect=201)
    await api.post("/v1/approvals", {"title": "bob's"}, as_="bob", expect=201)
    counts = (await api.get("/v1/status", as_="bob"))["counts"]
    assert counts["pending_approvals"] == 1
    assert (await api.get("/v1/status", as_="ann"))["counts"]["pending_approvals"] == 2
    assert (await api.get("/v1/status"))["counts"]["pending_approvals"] == 3


@pytest.mark.parametrize("label", ["policy:1@1", "deadline", "system", "anonymous"])
async def test_a_persons_decision_is_never_labelled_as_relays(api: Api, label: str) -> None:
    await api.agent("ann")
    asked = await api.post("/v1/approvals", {"title": "t"}, as_="ann", expect=201)
    path = f"/v1/approvals/{asked['approval_id']}/approve"
    await api.post(path, {"decided_by": label}, expect=422)
    decided = await api.post(path, {"decided_by": "slack:U0AB"})
    assert decided["decided_by"] == "slack:U0AB"
