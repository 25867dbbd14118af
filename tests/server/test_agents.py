"""Agents over HTTP: register, heartbeat, presence, list, inbox; and the authentication rules."""

from __future__ import annotations

import asyncio

from tests.server.conftest import Api


async def test_register_issues_a_token_once_and_updates_in_place(api: Api) -> None:
    first = await api.post(
        "/v1/agents/register",
        {"agent_id": "alice", "name": "Alice", "capabilities": ["ops"]},
        expect=201,
    )
    assert first["token"].startswith("rly_agent_")
    assert first["agent_id"] == "alice" and first["capabilities"] == ["ops"]
    assert "token_hash" not in first

    again = await api.post("/v1/agents/register", {"agent_id": "alice", "kind": "bot"}, expect=201)
    assert again["token"] is None
    assert again["name"] == "Alice" and again["kind"] == "bot"  # omitted fields are kept

    # The first token still works; a rotation replaces it.
    await api.get("/v1/agents", token=first["token"])
    rotated = await api.post(
        "/v1/agents/register", {"agent_id": "alice", "rotate_token": True}, expect=201
    )
    assert rotated["token"] and rotated["token"] != first["token"]
    await api.get("/v1/agents", token=first["token"], expect=401)
    await api.get("/v1/agents", token=rotated["token"])


async def test_register_is_for_the_operator_only(api: Api) -> None:
    await api.agent("alice")
    body = await api.post("/v1/agents/register", {"agent_id": "mallory"}, as_="alice", expect=403)
    assert body == {"detail": "only the operator may do this", "code": "forbidden"}


async def test_register_validates_the_id(api: Api) -> None:
    bad = await api.post("/v1/agents/register", {"agent_id": "-bad id"}, expect=422)
    assert bad["detail"][0]["loc"] == ["body", "agent_id"]
    assert bad["detail"][0]["type"] == "string_pattern_mismatch"
    reserved = await api.post("/v1/agents/register", {"agent_id": "operator"}, expect=422)
    assert reserved["detail"][0]["loc"] == ["body"]
    unknown = await api.post(
        "/v1/agents/register", {"agent_id": "a", "status": "online"}, expect=422
    )
    assert unknown["detail"][0] | {"input": None} == {
        "type": "extra_forbidden",
        "loc": ["body", "status"],
        "msg": "Extra inputs are not permitted",
        "input": None,
    }


async def test_missing_bad_and_mismatched_credentials(api: Api) -> None:
    await api.agent("alice")
    await api.agent("bob")
    response = await api.client.get("/v1/agents")
    assert response.status == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert (await response.json())["code"] == "unauthenticated"

    bad = await api.get("/v1/agents", token="rly_agent_not-a-real-token", expect=401)
    assert bad["code"] == "unauthenticated"
    assert "rly_agent_not-a-real-token" not in bad["detail"]
    await api.get("/v1/agents", token="something-else", expect=401)
    malformed = await api.client.get("/v1/agents", headers={"Authorization": "Basic abc"})
    assert malformed.status == 401

    only_header = await api.client.get("/v1/agents", headers={"X-Agent-ID": "alice"})
    assert only_header.status == 401

    mismatch = await api.get("/v1/agents", as_="alice", headers={"X-Agent-ID": "bob"}, expect=403)
    assert mismatch["code"] == "forbidden"
    await api.get("/v1/agents", as_="alice", headers={"X-Agent-ID": "alice"})
    invalid = await api.get(
        "/v1/agents", as_="alice", headers={"X-Agent-ID": "no spaces"}, expect=422
    )
    assert invalid["detail"][0]["loc"] == ["header", "x-agent-id"]


async def test_heartbeat_sets_presence_and_counts_pending(api: Api) -> None:
    await api.agent("alice")
    await api.agent("bob")
    listed = await api.get("/v1/agents")
    assert {a["agent_id"]: a["presence"] for a in listed["agents"]} == {
        "alice": "offline",
        "bob": "offline",
    }
    await api.post("/v1/messages", {"to": "alice", "text": "one"}, as_="bob", expect=201)
    beat = await api.post(
        "/v1/agents/alice/heartbeat", {"status": "busy", "note": "indexing"}, as_="alice"
    )
    assert beat["presence"] == "online"
    assert beat["pending_messages"] == 1
    assert beat["status"] == "busy" and beat["last_seen_at"]

    api.clock.advance(61)
    listed = await api.get("/v1/agents")
    assert {a["agent_id"]: a["presence"] for a in listed["agents"]}["alice"] == "offline"


async def test_racing_heartbeats_all_land_and_keep_each_report(api: Api) -> None:
    await api.agent("alice")
    await api.post("/v1/messages", {"to": "alice", "text": "hi"}, expect=201)
    # Twenty at once with the same report (they may share writes), and two other reports.
    same = [api.post("/v1/agents/alice/heartbeat", {}, as_="alice") for _ in range(20)]
    busy = api.post("/v1/agents/alice/heartbeat", {"status": "busy"}, as_="alice")
    idle = api.post("/v1/agents/alice/heartbeat", {"status": "idle"}, as_="alice")
    answers = await asyncio.gather(*same, busy, idle)
    assert all(a["presence"] == "online" and a["pending_messages"] == 1 for a in answers)
    assert answers[-2]["status"] == "busy" and answers[-1]["status"] == "idle"
    (alice,) = (a for a in (await api.get("/v1/agents"))["agents"] if a["agent_id"] == "alice")
    assert alice["status"] in ("busy", "idle")
    assert alice["last_seen_at"] == max(a["last_seen_at"] for a in answers)


async def test_heartbeat_only_for_oneself(api: Api) -> None:
    await api.agent("alice")
    await api.agent("bob")
    await api.post("/v1/agents/bob/heartbeat", {}, as_="alice", expect=403)
    await api.post("/v1/agents/bob/heartbeat", {}, as_="operator")
    await api.post("/v1/agents/ghost/heartbeat", {}, expect=404)
    await api.post("/v1/agents/bad%20id/heartbeat", {}, expect=422)


async def test_inbox_moves_pending_to_delivered_oldest_first(api: Api) -> None:
    await api.agent("alice")
    await api.agent("bob")
    for text in ("first", "second", "third"):
        await api.post("/v1/messages", {"to": "bob", "text": text}, as_="alice", expect=201)
    inbox = await api.get("/v1/agents/bob/inbox", as_="bob")
    assert inbox["agent_id"] == "bob" and inbox["count"] == 3
    assert [m["text"] for m in inbox["messages"]] == ["first", "second", "third"]
    assert {m["status"] for m in inbox["messages"]} == {"delivered"}
    assert all(m["from_agent"] == "alice" for m in inbox["messages"])

    limited = await api.get("/v1/agents/bob/inbox", as_="bob", limit=2)
    assert [m["text"] for m in limited["messages"]] == ["first", "second"]

    await api.get("/v1/agents/bob/inbox", as_="alice", expect=403)
    await api.get("/v1/agents/ghost/inbox", expect=404)
    await api.get("/v1/agents/bob/inbox", as_="bob", limit=0, expect=422)


async def test_a_peek_at_the_inbox_delivers_nothing(api: Api) -> None:
    await api.agent("alice")
    await api.agent("bob")
    for text in ("first", "second"):
        await api.post("/v1/messages", {"to": "bob", "text": text}, as_="alice", expect=201)
    for _ in range(2):
        peeked = await api.get("/v1/agents/bob/inbox", as_="bob", peek="true")
        assert [(m["text"], m["status"], m["delivery_count"]) for m in peeked["messages"]] == [
            ("first", "pending", 0),
            ("second", "pending", 0),
        ]
    read = await api.get("/v1/agents/bob/inbox", as_="bob", limit=1)
    assert [(m["status"], m["delivery_count"]) for m in read["messages"]] == [("delivered", 1)]
    await api.get("/v1/agents/ghost/inbox", peek="true", expect=404)
    await api.get("/v1/agents/bob/inbox", as_="alice", peek="true", expect=403)
