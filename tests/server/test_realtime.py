"""Long-poll inbox, the event feed and its SSE stream, over the real app on every backend."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import time
from typing import Any

import pytest

from relay_core.auth import Caller
from relay_core.services.base import REPOLL_SECONDS
from relay_server.app_keys import KEEPALIVES, SERVICES
from tests.conftest import other_application
from tests.server.conftest import ONE_BACKEND, OPERATOR_TOKEN, Api


async def test_long_poll_inbox_answers_when_a_message_commits(api: Api) -> None:
    await api.agent("alice")
    await api.agent("bob")

    async def send_later() -> None:
        await asyncio.sleep(0.3)
        await api.post("/v1/messages", {"to": "bob", "text": "wake up"}, as_="alice", expect=201)

    sender = asyncio.create_task(send_later())
    started = time.monotonic()
    inbox = await api.get("/v1/agents/bob/inbox", as_="bob", wait=10)
    elapsed = time.monotonic() - started
    await sender
    assert [m["text"] for m in inbox["messages"]] == ["wake up"]
    assert 0.25 < elapsed < 5


async def test_long_poll_inbox_times_out_empty_and_is_bounded(api: Api) -> None:
    await api.agent("bob")
    started = time.monotonic()
    inbox = await api.get("/v1/agents/bob/inbox", as_="bob", wait=0.4)
    assert inbox["count"] == 0 and time.monotonic() - started >= 0.35
    await api.get("/v1/agents/bob/inbox", as_="bob", wait=61, expect=422)
    await api.get("/v1/agents/bob/inbox", as_="bob", wait=-1, expect=422)
    immediate = await api.get("/v1/agents/bob/inbox", as_="bob")
    assert immediate["count"] == 0


async def test_event_feed_cursor_and_audience(api: Api) -> None:
    await api.agent("alice")
    await api.agent("bob")
    start = await api.get("/v1/events", as_="alice")
    assert start["events"] == []
    cursor = start["cursor"]

    await api.post("/v1/messages", {"to": "bob", "text": "private"}, as_="alice", expect=201)
    task = await api.post("/v1/tasks", {"title": "t"}, expect=201)
    await api.post(f"/v1/tasks/{task['task_id']}/claim", {"agent_id": "bob"}, as_="bob")

    for_alice = await api.get("/v1/events", as_="alice", after=cursor)
    assert [e["kind"] for e in for_alice["events"]] == ["task.created", "task.claimed"]
    for_bob = await api.get("/v1/events", as_="bob", after=cursor)
    assert [e["kind"] for e in for_bob["events"]] == [
        "message.created",
        "task.created",
        "task.claimed",
    ]
    assert for_bob["events"][0]["data"]["to"] == "bob"
    everything = await api.get("/v1/events", after=cursor)  # the operator sees all
    assert len(everything["events"]) == 3
    ids = [e["event_id"] for e in everything["events"]]
    assert ids == sorted(ids) and everything["cursor"] == ids[-1]

    page = await api.get("/v1/events", as_="bob", after=cursor, limit=2)
    rest = await api.get("/v1/events", as_="bob", after=page["cursor"])
    assert [e["event_id"] for e in page["events"] + rest["events"]] == [
        e["event_id"] for e in for_bob["events"]
    ]
    assert (await api.get("/v1/events", as_="bob", after=rest["cursor"]))["events"] == []
    await api.get("/v1/events", as_="bob", after=-1, expect=422)


async def test_event_feed_long_polls_from_now(api: Api) -> None:
    await api.agent("bob")

    async def create_later() -> None:
        await asyncio.sleep(0.3)
        await api.post("/v1/tasks", {"title": "fresh"}, expect=201)

    creator = asyncio.create_task(create_later())
    waited = await api.get("/v1/events", as_="bob", wait=10)
    await creator
    assert [e["kind"] for e in waited["events"]] == ["task.created"]


async def test_a_long_poll_answers_an_event_held_behind_another_transaction(api: Api) -> None:
    """On PostgreSQL an event is readable once every older transaction of the cluster has
    ended. When the one it waits for belongs to another application, nothing announces its
    end: the long poll answers when it ends, not at its next re-poll."""
    if (await api.get("/v1/status"))["storage"] != "postgresql":
        pytest.skip("only PostgreSQL holds events behind older transactions")
    cursor = (await api.get("/v1/events"))["cursor"]
    async with other_application() as other:
        await api.post("/v1/tasks", {"title": "held"}, expect=201)
        assert (await api.get("/v1/events", after=cursor))["events"] == []

        async def end_later() -> None:
            await asyncio.sleep(0.5)
            await other.execute("ROLLBACK")

        ender = asyncio.create_task(end_later())
        started = time.monotonic()
        waited = await api.get("/v1/events", after=cursor, wait=30)
        waited_for = time.monotonic() - started
        await ender
    assert [e["kind"] for e in waited["events"]] == ["task.created"]
    assert waited_for < REPOLL_SECONDS - 1, waited_for


async def test_an_agents_long_poll_answers_its_message_held_behind_another_transaction(
    api: Api,
) -> None:
    """An agent's reader waits on its own audiences' topics: when the event it waits for is
    held behind another application's transaction, the poke after that one ends wakes it too,
    not only the operator's readers."""
    if (await api.get("/v1/status"))["storage"] != "postgresql":
        pytest.skip("only PostgreSQL holds events behind older transactions")
    await api.agent("bob")
    cursor = (await api.get("/v1/events", as_="bob"))["cursor"]
    async with other_application() as other:
        await api.post("/v1/messages", {"to": "bob", "text": "held"}, expect=201)
        assert (await api.get("/v1/events", as_="bob", after=cursor))["events"] == []

        async def end_later() -> None:
            await asyncio.sleep(0.5)
            await other.execute("ROLLBACK")

        ender = asyncio.create_task(end_later())
        started = time.monotonic()
        waited = await api.get("/v1/events", as_="bob", after=cursor, wait=30)
        waited_for = time.monotonic() - started
        await ender
    assert [e["kind"] for e in waited["events"]] == ["message.created"]
    assert waited_for < REPOLL_SECONDS - 1, waited_for


def count_feed_reads(api: Api, monkeypatch: pytest.MonkeyPatch, *agents: str) -> dict[str, int]:
    """How many times each of ``agents``' readers reads the feed, from now on."""
    reads = dict.fromkeys(agents, 0)
    events = type(api.client.server.app[SERVICES].events)
    page = events._page

    async def counted(self: Any, uow: Any, after: Any, limit: int, readable: Any) -> Any:
        for agent in reads:
            if readable is not None and agent in readable:
                reads[agent] += 1
        return await page(self, uow, after, limit, readable)

    monkeypatch.setattr(events, "_page", counted)
    return reads


async def test_an_event_held_behind_another_transaction_wakes_only_its_readers(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A message to bob held behind another application's transaction: once it ends, bob's
    waiting reader is woken, and carol's is not (every agent reads everyone's audience, which
    the held row is not in)."""
    if (await api.get("/v1/status"))["storage"] != "postgresql":
        pytest.skip("only PostgreSQL holds events behind older transactions")
    for agent in ("bob", "carol"):
        await api.agent(agent)
    bobs_cursor = (await api.get("/v1/events", as_="bob"))["cursor"]
    carols_cursor = (await api.get("/v1/events", as_="carol"))["cursor"]
    reads = count_feed_reads(api, monkeypatch, "bob", "carol")
    async with other_application() as other:
        await api.post("/v1/messages", {"to": "bob", "text": "held"}, expect=201)
        carols = asyncio.create_task(
            api.get("/v1/events", as_="carol", after=carols_cursor, wait=30)
        )
        bobs = asyncio.create_task(api.get("/v1/events", as_="bob", after=bobs_cursor, wait=30))

        async def both_waiting() -> None:
            while reads["bob"] < 1 or reads["carol"] < 1:
                await asyncio.sleep(0.01)

        await asyncio.wait_for(both_waiting(), 10)
        await other.execute("ROLLBACK")
        waited = await asyncio.wait_for(bobs, 10)
    assert [e["kind"] for e in waited["events"]] == ["message.created"]
    await asyncio.sleep(0.3)  # time for any wake to reach carol's reader
    carols.cancel()
    assert reads["carol"] == 1, reads


async def test_an_event_wakes_only_the_readers_it_is_for(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ten messages to alice: bob's waiting reader reads the feed once (its first read), not
    once a message; alice's answers with the first."""
    for agent in ("alice", "bob"):
        await api.agent(agent)
    reads = count_feed_reads(api, monkeypatch, "alice", "bob")
    cursor = (await api.get("/v1/events", as_="bob"))["cursor"]
    reads["bob"] = 0
    bobs = asyncio.create_task(api.get("/v1/events", as_="bob", after=cursor, wait=2))
    await asyncio.sleep(0.3)
    for n in range(10):
        await api.post("/v1/messages", {"to": "alice", "text": f"m{n}"}, expect=201)
    assert (await bobs)["events"] == []
    assert reads["bob"] <= 2, reads  # its first read, and at most one re-read at the end


async def test_approvals_and_interventions_reach_the_feed(api: Api) -> None:
    await api.agent("medic")
    cursor = (await api.get("/v1/events"))["cursor"]
    enrolled = await api.post("/v1/enroll", {"agent_id": "newbie"}, token="", expect=201)
    [requested] = (await api.get("/v1/events", after=cursor))["events"]
    assert requested["kind"] == "approval.requested"
    assert requested["data"]["approval_id"] == enrolled["approval_id"]
    assert requested["audience"] == "newbie"
    cursor = requested["event_id"]
    asked = await api.post(
        "/v1/interventions/i1/request-approval",
        {"title": "t", "reason": "r", "proposed_action": "p"},
        as_="medic",
        expect=201,
    )
    await api.post(f"/v1/approvals/{asked['approval_id']}/approve", {})
    kinds = [e["kind"] for e in (await api.get("/v1/events", as_="medic", after=cursor))["events"]]
    assert kinds == [
        "approval.requested",
        "intervention.updated",
        "intervention.updated",
        "approval.decided",
    ]


async def read_frames(response: Any, count: int) -> list[dict[str, str]]:
    frames: list[dict[str, str]] = []
    current: dict[str, str] = {}
    while len(frames) < count:
        line = (await asyncio.wait_for(response.content.readline(), 10)).decode().rstrip("\n")
        if not line:
            if current:
                frames.append(current)
            current = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(": ")
            current[name] = value
    return frames


async def test_sse_stream_resumes_from_last_event_id(api: Api) -> None:
    await api.agent("bob")
    headers = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
    first = await api.post("/v1/tasks", {"title": "one"}, expect=201)
    await api.post("/v1/tasks", {"title": "two"}, expect=201)

    response = await api.client.get("/v1/events/stream", params={"after": 0}, headers=headers)
    assert response.status == 200
    assert response.headers["Content-Type"] == "text/event-stream"
    frames = await read_frames(response, 2)
    assert [f["event"] for f in frames] == ["task.created", "task.created"]
    assert json.loads(frames[0]["data"])["data"]["task_id"] == first["task_id"]
    response.close()

    await api.post("/v1/tasks", {"title": "three"}, expect=201)
    resumed = await api.client.get(
        "/v1/events/stream", headers={**headers, "Last-Event-ID": frames[1]["id"]}
    )
    [third] = await read_frames(resumed, 1)
    assert int(third["id"]) > int(frames[1]["id"])
    assert json.loads(third["data"])["kind"] == "task.created"
    resumed.close()

    bad = await api.client.get(
        "/v1/events/stream", headers={**headers, "Last-Event-ID": "yesterday"}
    )
    assert bad.status == 422


async def comments_and_frames(response: Any, seconds: float) -> list[str]:
    """What a stream sent in ``seconds``: ``:`` for a keep-alive, an event's kind for a frame."""
    said: list[str] = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            line = await asyncio.wait_for(response.content.readline(), left)
        except TimeoutError:
            break
        if line.startswith(b": keep-alive"):
            said.append(":")
        elif line.startswith(b"event: "):
            said.append(line[7:].decode().strip())
    return said


@ONE_BACKEND
async def test_a_quiet_stream_is_kept_alive_and_a_busy_one_is_not(api: Api) -> None:
    """One timer sends every stream quiet for the keep-alive interval a comment line; a stream
    that just sent a frame waits the whole interval again; one whose client left is let go."""
    keepalives = api.client.app[KEEPALIVES]
    keepalives.seconds = 0.4
    await api.agent("bob")
    headers = {"Authorization": f"Bearer {api.tokens['bob']}"}
    quiet = await api.client.get("/v1/events/stream", headers=headers)
    said = await comments_and_frames(quiet, 1.5)
    assert 2 <= said.count(":") <= 4 and set(said) == {":"}, said

    async def busy() -> None:
        for n in range(6):
            await api.post("/v1/messages", {"to": "bob", "text": f"{n}"}, expect=201)
            await asyncio.sleep(0.2)

    sending = asyncio.create_task(busy())
    said = await comments_and_frames(quiet, 1.1)
    await sending
    assert said.count("message.created") >= 4 and ":" not in said, said
    quiet.close()
    deadline = time.monotonic() + 5
    while len(keepalives) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert len(keepalives) == 0  # the stream ended, and its keep-alives with it


async def test_an_agents_stream_hears_a_room_it_joins_while_it_streams(api: Api) -> None:
    """The stream waits on its agent's audiences alone; joining a room wakes it, and the
    room's posts reach it from then on, at once (not at a re-read)."""
    for agent in ("alice", "bob"):
        await api.agent(agent)
    await api.post("/v1/rooms/ops/join", {"agent_id": "alice"}, as_="alice", expect=201)
    response = await api.client.get(
        "/v1/events/stream", headers={"Authorization": f"Bearer {api.tokens['bob']}"}
    )
    assert response.status == 200
    await asyncio.sleep(0.2)  # the stream is waiting
    await api.post("/v1/rooms/ops/join", {"agent_id": "bob"}, as_="bob", expect=201)
    await asyncio.sleep(0.2)
    started = time.monotonic()
    post = await api.post("/v1/messages", {"room_id": "ops", "text": "hi"}, as_="alice", expect=201)
    [frame] = await asyncio.wait_for(read_frames(response, 1), 3)
    assert frame["event"] == "message.posted"
    assert json.loads(frame["data"])["subject_id"] == str(post["message_id"])
    assert time.monotonic() - started < 2
    response.close()


async def test_shutdown_wakes_long_polls(make_api: Any) -> None:
    api: Api = await make_api()
    await api.agent("bob")
    poll = asyncio.create_task(api.get("/v1/agents/bob/inbox", as_="bob", wait=60))
    await asyncio.sleep(0.2)
    started = time.monotonic()
    await api.client.server.app.shutdown()  # what aiohttp runs first on SIGTERM
    inbox = await asyncio.wait_for(poll, 5)
    assert inbox["count"] == 0 and time.monotonic() - started < 2


async def rotate(api: Api, agent_id: str) -> None:
    body = {"agent_id": agent_id, "rotate_token": True}
    api.tokens[agent_id] = (await api.post("/v1/agents/register", body, expect=201))["token"]


async def test_a_rotation_ends_a_long_poll_begun_with_the_old_token(api: Api) -> None:
    await api.agent("bob")
    for path, params in (("/v1/agents/bob/inbox", {"wait": 30}), ("/v1/events", {"wait": 30})):
        old = api.tokens["bob"]
        poll = asyncio.create_task(
            api.client.get(path, params=params, headers=api.headers(None, old))
        )
        await asyncio.sleep(0.2)
        assert not poll.done()
        await rotate(api, "bob")
        rotated_at = time.monotonic()
        response = await asyncio.wait_for(poll, 5)
        assert response.status == 401, await response.text()
        assert time.monotonic() - rotated_at < 1.0
        assert "rotated" in (await response.json())["detail"]
    # Nothing sent after the rotation reaches the old token.
    await api.post("/v1/messages", {"to": "bob", "text": "after"}, expect=201)
    await api.get("/v1/agents/bob/inbox", token=old, expect=401)


async def test_a_rotation_closes_a_stream_opened_with_the_old_token(api: Api) -> None:
    await api.agent("bob")
    old = api.tokens["bob"]
    stream = await api.client.get("/v1/events/stream", headers=api.headers(None, old))
    assert stream.status == 200
    await api.post("/v1/messages", {"to": "bob", "text": "before"}, expect=201)
    [before] = await read_frames(stream, 1)
    assert before["event"] == "message.created"
    await rotate(api, "bob")
    rotated_at = time.monotonic()
    rest = await asyncio.wait_for(stream.content.read(), 5)  # the server ends the stream
    assert time.monotonic() - rotated_at < 1.0
    assert b"event: unauthenticated" in rest and b"message.created" not in rest


async def test_a_long_poll_of_the_operator_is_not_watched_for_rotation(api: Api) -> None:
    await api.agent("bob")
    poll = asyncio.create_task(api.get("/v1/agents/bob/inbox", wait=0.5))
    await asyncio.sleep(0.1)
    await rotate(api, "bob")
    assert (await poll)["count"] == 0


async def test_a_stream_from_now_starts_where_the_feed_stood_when_it_was_asked_for(
    api: Api,
) -> None:
    """The stream's start is fixed before it is answered: an event committed once the client
    holds the answer is in it, however late the stream's first read comes (it came after such
    a message now and then on PostgreSQL, which the stream then never showed)."""
    await api.agent("bob")
    events = await api.client.app[SERVICES].events.stream(Caller("agent", "bob"), None)
    await api.post("/v1/messages", {"to": "bob", "text": "sent once it was answered"}, expect=201)
    first = await asyncio.wait_for(anext(events), 10)
    await events.aclose()  # type: ignore[attr-defined]
    assert (first.kind, first.data["to"]) == ("message.created", "bob")


async def test_a_stream_ticket_opens_the_stream_without_authorization(api: Api) -> None:
    """For a browser's EventSource: a ticket in the URL opens the caller's own stream, for a
    minute, and nothing else."""
    await api.agent("bob")
    issued = await api.post("/v1/events/ticket", {}, as_="bob")
    ticket = issued["ticket"]
    assert ticket.startswith("rly_ticket_")
    stream = await api.client.get("/v1/events/stream", params={"ticket": ticket})
    assert stream.status == 200
    await api.post("/v1/messages", {"to": "bob", "text": "for bob"}, expect=201)
    await api.post("/v1/tasks", {"title": "everyone's"}, expect=201)
    frames = await read_frames(stream, 2)
    assert [f["event"] for f in frames] == ["message.created", "task.created"]
    stream.close()

    # It is random, carries nothing of the token (nor its hash) and is not kept as given.
    again = (await api.post("/v1/events/ticket", {}, as_="bob"))["ticket"]
    assert again != ticket
    token_hash = hashlib.sha256(api.tokens["bob"].encode()).hexdigest()
    opaque = ticket.removeprefix("rly_ticket_")
    decoded = base64.urlsafe_b64decode(opaque + "=" * (-len(opaque) % 4))
    assert token_hash not in ticket and token_hash.encode() not in decoded
    assert bytes.fromhex(token_hash) not in decoded
    if api.db_path.exists():
        assert ticket.encode() not in api.db_path.read_bytes()
    # It opens nothing else, altered it opens nothing, and it expires.
    assert (await api.client.get("/v1/tasks", params={"ticket": ticket})).status == 401
    altered = ticket[:-1] + ("A" if ticket[-1] != "A" else "B")
    assert (await api.client.get("/v1/events/stream", params={"ticket": altered})).status == 401
    api.clock.advance(61)
    expired = await api.client.get("/v1/events/stream", params={"ticket": ticket})
    assert expired.status == 401
    assert "POST /v1/events/ticket" in (await expired.json())["detail"]


async def test_a_rotated_token_voids_its_tickets(api: Api) -> None:
    await api.agent("bob")
    ticket = (await api.post("/v1/events/ticket", {}, as_="bob"))["ticket"]
    await rotate(api, "bob")
    refused = await api.client.get("/v1/events/stream", params={"ticket": ticket})
    assert refused.status == 401
