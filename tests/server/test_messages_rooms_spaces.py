"""Messages, rooms and spaces over HTTP."""

from __future__ import annotations

from tests.server.conftest import Api


async def test_message_lifecycle_pending_delivered_acked(api: Api) -> None:
    await api.agent("alice")
    await api.agent("bob")
    sent = await api.post(
        "/v1/messages",
        {"to": "bob", "text": "deploy done", "subject": "deploy", "payload": {"build": 7}},
        as_="alice",
        expect=201,
    )
    assert sent["status"] == "pending" and sent["from_agent"] == "alice"
    assert sent["payload"] == {"build": 7}
    message_id = sent["message_id"]

    inbox = await api.get("/v1/agents/bob/inbox", as_="bob")
    assert [m["message_id"] for m in inbox["messages"]] == [message_id]

    acked = await api.post(f"/v1/messages/{message_id}/ack", {"agent_id": "bob"}, as_="bob")
    assert acked["status"] == "acked" and acked["acked_at"]
    again = await api.post(f"/v1/messages/{message_id}/ack", {"agent_id": "bob"}, as_="bob")
    assert again == acked
    assert (await api.get("/v1/agents/bob/inbox", as_="bob"))["count"] == 0

    reply = await api.post(
        "/v1/messages",
        {"to": "alice", "text": "thanks", "reply_to": message_id},
        as_="bob",
        expect=201,
    )
    assert reply["reply_to"] == message_id


async def test_ack_rules(api: Api) -> None:
    await api.agent("alice")
    await api.agent("bob")
    sent = await api.post("/v1/messages", {"to": "bob", "text": "x"}, as_="alice", expect=201)
    path = f"/v1/messages/{sent['message_id']}/ack"
    await api.post(path, {"agent_id": "alice"}, as_="alice", expect=403)  # not the recipient
    await api.post(path, {"agent_id": "bob"}, as_="alice", expect=403)  # not oneself
    await api.post(path, {"agent_id": "bob"}, as_="operator")  # on behalf of bob
    await api.post("/v1/messages/999999/ack", {"agent_id": "bob"}, as_="bob", expect=404)
    bad = await api.post("/v1/messages/abc/ack", {"agent_id": "bob"}, as_="bob", expect=422)
    assert bad["detail"][0]["loc"] == ["path", "message_id"]
    assert bad["detail"][0]["type"] == "int_parsing"


async def test_send_validation_and_errors(api: Api) -> None:
    await api.agent("alice")
    both = await api.post(
        "/v1/messages", {"to": "alice", "room_id": "r", "text": "x"}, as_="alice", expect=422
    )
    assert "exactly one" in both["detail"][0]["msg"]
    await api.post("/v1/messages", {"text": "x"}, as_="alice", expect=422)
    await api.post("/v1/messages", {"to": "alice", "text": ""}, as_="alice", expect=422)
    missing = await api.post("/v1/messages", {"to": "ghost", "text": "x"}, as_="alice", expect=404)
    assert missing["code"] == "not_found"
    await api.agent("ghost")  # an unknown recipient is not remembered as unknown
    await api.post("/v1/messages", {"to": "ghost", "text": "x"}, as_="alice", expect=201)
    await api.post(
        "/v1/messages", {"to": "alice", "text": "x", "reply_to": 424242}, as_="alice", expect=404
    )
    spoof = await api.post(
        "/v1/messages", {"to": "alice", "text": "x", "from_agent": "bob"}, as_="alice", expect=403
    )
    assert spoof["code"] == "forbidden"
    by_operator = await api.post(
        "/v1/messages", {"to": "alice", "text": "x", "from_agent": "bob"}, expect=201
    )
    assert by_operator["from_agent"] == "bob"
    as_operator = await api.post("/v1/messages", {"to": "alice", "text": "x"}, expect=201)
    assert as_operator["from_agent"] == "operator"


async def test_rooms_join_post_and_read(api: Api) -> None:
    await api.agent("alice")
    await api.agent("bob")
    await api.agent("eve")
    joined = await api.post("/v1/rooms/ops/join", {"agent_id": "alice"}, as_="alice", expect=201)
    assert joined == {"room_id": "ops", "agent_id": "alice", "joined_at": joined["joined_at"]}
    again = await api.post("/v1/rooms/ops/join", {"agent_id": "alice"}, as_="alice", expect=201)
    assert again == joined
    await api.post("/v1/rooms/ops/join", {"agent_id": "bob"}, as_="bob", expect=201)
    await api.post("/v1/rooms/ops/join", {"agent_id": "bob"}, as_="alice", expect=403)

    rooms = await api.get("/v1/rooms", as_="eve")
    assert [r["room_id"] for r in rooms["rooms"]] == ["ops"]

    for i in range(5):
        posted = await api.post(
            "/v1/messages", {"room_id": "ops", "text": f"m{i}"}, as_="alice", expect=201
        )
        assert posted["status"] == "posted"
    page = await api.get("/v1/rooms/ops/messages", as_="bob", limit=3)
    assert [m["text"] for m in page["messages"]] == ["m2", "m3", "m4"]
    assert page["count"] == 3
    everything = await api.get("/v1/rooms/ops/messages", as_="bob")
    assert len(everything["messages"]) == 5
    # Room posts never land in an inbox.
    assert (await api.get("/v1/agents/bob/inbox", as_="bob"))["count"] == 0

    await api.get("/v1/rooms/ops/messages", as_="eve", expect=403)
    await api.post("/v1/messages", {"room_id": "ops", "text": "x"}, as_="eve", expect=403)
    await api.get("/v1/rooms/ops/messages")  # the operator reads everything
    await api.get("/v1/rooms/nowhere/messages", expect=404)
    await api.post("/v1/messages", {"room_id": "nowhere", "text": "x"}, as_="eve", expect=404)
    for limit in (0, 1001, "many"):
        bad = await api.get("/v1/rooms/ops/messages", as_="bob", limit=limit, expect=422)
        assert bad["detail"][0]["loc"] == ["query", "limit"]


async def test_spaces_create_list_add_room_archive(api: Api) -> None:
    await api.agent("alice")
    created = await api.post(
        "/v1/spaces", {"name": "Ops Team", "description": "on call"}, expect=201
    )
    assert created["space_id"] == "ops-team" and created["status"] == "active"
    second = await api.post("/v1/spaces", {"name": "Ops Team"}, expect=201)
    assert second["space_id"] == "ops-team-2"
    explicit = await api.post("/v1/spaces", {"space_id": "lab", "name": "Lab"}, expect=201)
    assert explicit["space_id"] == "lab"
    await api.post("/v1/spaces", {"space_id": "lab", "name": "Lab"}, expect=409)
    await api.post("/v1/spaces", {"name": "x"}, as_="alice", expect=403)

    room = await api.post("/v1/spaces/lab/rooms", {"name": "Bench 1", "topic": "t"}, expect=201)
    assert room["room_id"] == "bench-1" and room["space_id"] == "lab"
    await api.post("/v1/spaces/lab/rooms", {"room_id": "bench-1", "name": "x"}, expect=409)
    await api.post("/v1/spaces/nope/rooms", {"name": "x"}, expect=404)
    await api.post("/v1/spaces/lab/rooms", {"name": "x"}, as_="alice", expect=403)

    await api.post("/v1/rooms/bench-1/join", {"agent_id": "alice"}, as_="alice", expect=201)
    await api.post(
        "/v1/messages", {"room_id": "bench-1", "text": "before"}, as_="alice", expect=201
    )

    archived = await api.post("/v1/spaces/lab/archive")
    assert archived["status"] == "archived" and archived["archived_at"]
    assert await api.post("/v1/spaces/lab/archive") == archived
    await api.post("/v1/spaces/lab/archive", as_="alice", expect=403)
    await api.post("/v1/spaces/nope/archive", expect=404)

    listed = await api.get("/v1/spaces", as_="alice")
    assert [s["space_id"] for s in listed["spaces"]] == ["ops-team", "ops-team-2"]
    all_spaces = await api.get("/v1/spaces", as_="alice", include_archived="true")
    assert [s["space_id"] for s in all_spaces["spaces"]] == ["lab", "ops-team", "ops-team-2"]

    readonly = await api.post(
        "/v1/messages", {"room_id": "bench-1", "text": "after"}, as_="alice", expect=409
    )
    assert readonly["code"] == "conflict"
    history = await api.get("/v1/rooms/bench-1/messages", as_="alice")
    assert [m["text"] for m in history["messages"]] == ["before"]
    await api.post("/v1/spaces/lab/rooms", {"name": "late"}, expect=409)


async def test_spaces_sync_reports_on_the_local_bridge(api: Api) -> None:
    await api.post("/v1/spaces", {"space_id": "s", "name": "S"}, expect=201)
    await api.post("/v1/spaces/s/rooms", {"room_id": "r1", "name": "R1"}, expect=201)
    report = await api.post("/v1/spaces/sync")
    assert report["bridge"] == "local" and report["supports_topics"] is False
    assert report["found"] == ["r1"] and report["created"] == [] and report["failed"] == []
    await api.agent("alice")
    await api.post("/v1/spaces/sync", as_="alice", expect=403)


async def test_a_conversation_is_one_thread_whichever_message_names_it(api: Api) -> None:
    """Direct messages and room posts answering each other share the first one's thread; a
    reader sees only what the API lets it read, and nothing of a thread it has no part in."""
    for agent in ("alice", "bob", "carol"):
        await api.agent(agent)
    await api.post("/v1/rooms/ops/join", {"agent_id": "alice"}, as_="alice", expect=201)
    await api.post("/v1/rooms/ops/join", {"agent_id": "bob"}, as_="bob", expect=201)
    root = await api.post(
        "/v1/messages", {"room_id": "ops", "text": "disk 92%"}, as_="alice", expect=201
    )
    assert root["thread_id"] == root["message_id"]
    answer = {"room_id": "ops", "text": "on it", "reply_to": root["message_id"]}
    post = await api.post("/v1/messages", answer, as_="bob", expect=201)
    aside = {"to": "alice", "text": "it was the logs", "reply_to": post["message_id"]}
    direct = await api.post("/v1/messages", aside, as_="bob", expect=201)
    lunch = {"room_id": "ops", "text": "lunch?"}
    other = await api.post("/v1/messages", lunch, as_="bob", expect=201)
    assert post["thread_id"] == direct["thread_id"] == root["message_id"]
    assert other["thread_id"] == other["message_id"]

    thread = [post["message_id"], root["message_id"], direct["message_id"]]
    everything = [root["message_id"], post["message_id"], direct["message_id"]]
    for named in thread:
        seen = await api.get(f"/v1/messages/{named}/thread", as_="alice")
        assert seen["thread_id"] == root["message_id"]
        assert [m["message_id"] for m in seen["messages"]] == everything
        assert "next_cursor" not in seen
    await api.post("/v1/rooms/ops/join", {"agent_id": "carol"}, as_="carol", expect=201)
    joined = await api.get(f"/v1/messages/{direct['message_id']}/thread", as_="carol")
    assert [m["message_id"] for m in joined["messages"]] == everything[:2]  # not the aside
    operator = await api.get(f"/v1/messages/{root['message_id']}/thread", as_="operator")
    assert [m["message_id"] for m in operator["messages"]] == everything
    room = await api.get("/v1/rooms/ops/messages", as_="bob", thread_id=thread[1])
    assert [m["message_id"] for m in room["messages"]] == everything[:2]

    await api.agent("dave")
    psst = {"to": "bob", "text": "psst"}
    private = await api.post("/v1/messages", psst, as_="alice", expect=201)
    await api.get(f"/v1/messages/{private['message_id']}/thread", as_="dave", expect=404)
    await api.get("/v1/messages/999999/thread", as_="alice", expect=404)


async def test_a_thread_comes_a_page_at_a_time(api: Api) -> None:
    await api.agent("alice")
    await api.agent("bob")
    first = await api.post("/v1/messages", {"to": "bob", "text": "0"}, as_="alice", expect=201)
    ids, last = [first["message_id"]], first["message_id"]
    for n in range(1, 5):
        answer = {"to": "bob", "text": str(n), "reply_to": last}
        sent = await api.post("/v1/messages", answer, as_="alice", expect=201)
        ids.append(last := sent["message_id"])
    path = f"/v1/messages/{last}/thread"
    pages, cursor = [], None
    while True:
        params = {"limit": "2"} | ({"cursor": cursor} if cursor else {})
        page = await api.get(path, as_="bob", **params)
        pages.append([m["message_id"] for m in page["messages"]])
        cursor = page.get("next_cursor")
        if cursor is None:
            break
    assert pages == [ids[0:2], ids[2:4], ids[4:5]]
    await api.get(path, as_="bob", limit="1001", expect=422)
    await api.get(path, as_="bob", cursor="forged", expect=422)


async def test_the_operators_answers_to_one_notification_are_one_thread(api: Api) -> None:
    await api.agent("alice")
    asked = await api.post("/v1/notify", {"text": "may I?"}, as_="alice", expect=201)
    reply = {"platform_message_id": asked["platform_message_id"], "text": "yes"}
    first = await api.post("/v1/notify/replies", reply, expect=201)
    second = await api.post("/v1/notify/replies", reply | {"text": "and be quick"}, expect=201)
    assert first["thread_id"] == first["message_id"]
    assert second["thread_id"] == first["message_id"]
