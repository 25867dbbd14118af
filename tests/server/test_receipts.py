"""Receipts: a direct message's ``delivered_at`` and ``acked_at``, shown by
``GET /v1/messages/{message_id}`` to whoever may read it, and told on the sender's feed; a room
post told on its members' feeds."""

from __future__ import annotations

from typing import Any

from tests.server.conftest import Api


async def feed(api: Api, as_: str) -> list[dict[str, Any]]:
    return list((await api.get("/v1/events", as_=as_, after=0, limit=1000))["events"])


async def told(api: Api, as_: str, kind: str) -> list[dict[str, Any]]:
    """The ``kind`` events on the agent's feed, once one is there: delivery marks, and their
    receipts, reach the disk with SQLite's next group commit, after the read's answer."""
    cursor = 0
    found: list[dict[str, Any]] = []
    while not found:
        page = await api.get("/v1/events", as_=as_, after=cursor, limit=1000, wait=5)
        assert page["events"], f"no {kind} on {as_}'s feed"
        cursor = page["cursor"]
        found = [e for e in page["events"] if e["kind"] == kind]
    return found


async def test_a_message_shows_when_it_was_delivered_and_acknowledged(api: Api) -> None:
    for agent in ("ann", "bob", "eve"):
        await api.agent(agent)
    sent = await api.post("/v1/messages", {"to": "bob", "text": "ship it"}, as_="ann", expect=201)
    path = f"/v1/messages/{sent['message_id']}"

    shown = await api.get(path, as_="ann")
    assert (shown["status"], shown["delivered_at"], shown["acked_at"]) == ("pending", None, None)
    assert (await api.get(path))["status"] == "pending"  # the operator reads: no delivery
    await api.get(path, as_="eve", expect=404)
    missing = await api.get("/v1/messages/999999", as_="eve", expect=404)
    assert missing["detail"] == "message 999999 does not exist"
    await api.get("/v1/messages/nope", expect=422)

    read = await api.get(path, as_="bob")  # its recipient reading it is a delivery
    assert read["status"] == "delivered" and read["delivered_at"] is not None
    assert read["delivery_count"] == 1
    assert (await api.get(path, as_="bob"))["delivered_at"] == read["delivered_at"]
    told = [e for e in await feed(api, "ann") if e["kind"] == "message.delivered"]
    assert [(e["subject_id"], e["data"]["to"]) for e in told] == [(str(sent["message_id"]), "bob")]
    assert not [e for e in await feed(api, "eve") if e["kind"].startswith("message.")]

    await api.post(f"{path}/ack", {}, as_="bob")
    acked = await api.get(path, as_="ann")
    assert acked["status"] == "acked" and acked["acked_at"] is not None
    assert acked["delivered_at"] == read["delivered_at"]
    told = [e for e in await feed(api, "ann") if e["kind"] == "message.acked"]
    assert [e["subject_id"] for e in told] == [str(sent["message_id"])]
    await api.post(f"{path}/ack", {}, as_="bob")  # twice: the same, told once
    assert len([e for e in await feed(api, "ann") if e["kind"] == "message.acked"]) == 1


async def test_an_inbox_read_is_a_delivery_told_to_each_sender(api: Api) -> None:
    for agent in ("ann", "bob", "cal"):
        await api.agent(agent)
    one = await api.post("/v1/messages", {"to": "cal", "text": "1"}, as_="ann", expect=201)
    two = await api.post("/v1/messages", {"to": "cal", "text": "2"}, as_="bob", expect=201)
    await api.get("/v1/agents/cal/inbox", as_="cal")
    for sender, sent in (("ann", one), ("bob", two)):
        receipts = await told(api, sender, "message.delivered")
        assert [e["subject_id"] for e in receipts] == [str(sent["message_id"])]
        assert (await api.get(f"/v1/messages/{sent['message_id']}", as_=sender))["delivered_at"]


async def test_a_post_is_shown_and_told_to_the_rooms_members(api: Api) -> None:
    for agent in ("ann", "bob", "eve"):
        await api.agent(agent)
    for agent in ("ann", "bob"):
        await api.post("/v1/rooms/ops/join", {}, as_=agent, expect=201)
    post = await api.post("/v1/messages", {"room_id": "ops", "text": "hi"}, as_="ann", expect=201)
    path = f"/v1/messages/{post['message_id']}"
    assert (await api.get(path, as_="bob"))["status"] == "posted"
    await api.get(path, as_="eve", expect=404)
    told = [e for e in await feed(api, "bob") if e["kind"] == "message.posted"]
    assert [(e["subject_id"], e["data"]["room_id"]) for e in told] == [
        (str(post["message_id"]), "ops")
    ]
    assert not [e for e in await feed(api, "eve") if e["kind"] == "message.posted"]
    await api.post("/v1/rooms/ops/join", {}, as_="eve", expect=201)
    assert [e for e in await feed(api, "eve") if e["kind"] == "message.posted"]
