"""The messages and events stores: every named statement of ``queries/messages.sql`` and
``queries/events.sql`` run through its store method on both adapters; SQLite's JSON of a
message (its view, messages_encoded), byte for byte what ``model_dump_json`` writes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import TypeAdapter

from relay_api import models as m
from relay_core.json_answers import answer_json
from relay_core.ports import Storage
from relay_core.storage.sqlite import SqliteStorage
from relay_core.storage.sqlite.driver import sqlite3

NOW = datetime(2026, 11, 28, 14, 5, 9, 250001, tzinfo=UTC)
WHOLE_SECOND = NOW.replace(microsecond=0)  # pydantic writes it without ".000000"
MESSAGES = TypeAdapter(list[m.Message])


def direct(to: str, text: str = "hi", **fields: Any) -> m.Message:
    return m.Message(from_agent="ada", to=to, text=text, status="pending", created_at=NOW, **fields)


def post(room_id: str, text: str, **fields: Any) -> m.Message:
    return m.Message(
        from_agent="ada", room_id=room_id, text=text, status="posted", created_at=NOW, **fields
    )


async def seed(storage: Storage) -> None:
    async with storage.unit_of_work(write=True) as uow:
        for agent_id in ("ada", "bob", "cy"):
            await uow.agents.insert(m.Agent(agent_id=agent_id, created_at=NOW, updated_at=NOW))
        await uow.rooms.insert(m.Room(room_id="ops", name="ops", created_by="ada", created_at=NOW))
        await uow.commit()


async def test_a_direct_message_is_added_with_the_event_that_names_it(storage: Storage) -> None:
    await seed(storage)
    first, second = direct("bob", "one"), direct("bob", "two", payload={"é": [1, None]})
    async with storage.unit_of_work(write=True) as uow:
        await uow.messages.add_direct(first)
        await uow.flush()
        assert first.message_id > 0 and first.thread_id == first.message_id
        await uow.messages.add_direct(second)
        await uow.commit()
    assert second.message_id > first.message_id
    async with storage.unit_of_work(write=False) as uow:
        stored = [await uow.messages.get(message.message_id) for message in (first, second)]
        events = await uow.events.after(0, 10)
    assert stored == [first, second]
    assert [(e.kind, e.audience, e.subject_id, e.data) for e in events] == [
        (
            "message.created",
            "bob",
            str(message.message_id),
            {"message_id": message.message_id, "from_agent": "ada", "to": "bob"},
        )
        for message in (first, second)
    ]
    assert 0 < events[0].event_id < events[1].event_id


async def test_ack_and_delivery_change_only_what_they_may(storage: Storage) -> None:
    await seed(storage)
    later = NOW + timedelta(seconds=3)
    async with storage.unit_of_work(write=True) as uow:
        sent = await uow.messages.insert(direct("bob"))
        read = [await uow.messages.insert(direct("cy", str(n))) for n in range(3)]
        assert await uow.messages.ack(sent.message_id, "cy", later) is None  # not its recipient
        delivered = await uow.messages.deliver(sent.message_id, later)
        assert delivered is not None and delivered.status == "delivered"
        assert (delivered.delivered_at, delivered.delivery_count) == (later, 1)
        assert await uow.messages.deliver(sent.message_id, later) is None  # not pending
        acked = await uow.messages.ack(sent.message_id, "bob", later)
        assert acked is not None and (acked.status, acked.acked_at) == ("acked", later)
        assert await uow.messages.ack(sent.message_id, "bob", later) is None  # acked before
        assert await uow.messages.ack(999_999, "bob", later) is None
        first_read = await uow.messages.unacked_to("cy", 1)
        await uow.messages.count_reads("cy", [read[0].message_id])
        await uow.messages.mark_delivered([read[0].message_id], NOW)
        unacked = await uow.messages.unacked_to("cy", 2)
        await uow.messages.count_reads("cy", [message.message_id for message in read[:2]])
        await uow.messages.mark_delivered([read[1].message_id], later)
        assert await uow.messages.count_unacked_to("cy") == 3
        assert await uow.messages.count_unacked_to("bob") == 0
        assert await uow.messages.count_unacked_by_recipient(["bob", "cy", "nobody"]) == {"cy": 3}
        assert await uow.messages.count_unacked() == 3
        await uow.commit()
    assert first_read == [(read[0].message_id, "pending", "ada")]
    assert unacked == [
        (read[0].message_id, "delivered", "ada"),
        (read[1].message_id, "pending", "ada"),
    ]
    async with storage.unit_of_work(write=False) as uow:
        counted = [await uow.messages.get(message.message_id) for message in read]
    assert [(c.delivery_count, c.delivered_at) for c in counted if c] == [
        (2, NOW),  # delivered at its first read, counted at each
        (1, later),
        (0, None),
    ]


async def test_pages_are_the_json_of_their_models_in_order(storage: Storage) -> None:
    """Each array: the messages as ``model_dump_json`` writes their list (SQLite's, as it
    wrote them); an answer holding one is written as the answer of its models."""
    await seed(storage)
    async with storage.unit_of_work(write=True) as uow:
        inbox = [
            await uow.messages.insert(direct("bob", "plain")),
            await uow.messages.insert(direct("cy", "elsewhere")),
            await uow.messages.insert(
                direct("bob", "full", subject="s", payload={"n": 2**60, "t": "\"'<b>"}).model_copy(
                    update={"created_at": WHOLE_SECOND}
                )
            ),
            await uow.messages.insert(direct("bob", "ünï")),
        ]
        acked = await uow.messages.ack(inbox[3].message_id, "bob", NOW)
        first = await uow.messages.insert(post("ops", "first"))
        answer = await uow.messages.insert(post("ops", "answer", thread_id=first.message_id))
        other = await uow.messages.insert(post("ops", "other"))
        await uow.commit()
    assert acked is not None and first.thread_id == first.message_id
    async with storage.unit_of_work(write=False) as uow:
        stored = {
            key: await uow.messages.get(key)
            for key in (*(x.message_id for x in inbox), first.message_id, answer.message_id)
        } | {other.message_id: await uow.messages.get(other.message_id)}
        arrays = {
            "inbox": await uow.messages.inbox("bob", 10),
            "inbox of 1": await uow.messages.inbox("bob", 1),
            "picked": await uow.messages.array([inbox[2].message_id, inbox[0].message_id]),
            "room": await uow.messages.room_newest("ops", None, 2),
            "thread": await uow.messages.room_newest("ops", first.message_id, 10),
            "none": await uow.messages.inbox("ada", 10),
        }
        thread = await uow.messages.thread_after(first.message_id, 0, 10)
        after_first = await uow.messages.thread_after(first.message_id, first.message_id, 10)
    expected = {
        "inbox": [stored[inbox[0].message_id], stored[inbox[2].message_id]],
        "inbox of 1": [stored[inbox[0].message_id]],
        "picked": [stored[inbox[0].message_id], stored[inbox[2].message_id]],
        "room": [stored[answer.message_id], stored[other.message_id]],
        "thread": [stored[first.message_id], stored[answer.message_id]],
        "none": [],
    }
    assert stored[inbox[2].message_id] == inbox[2] and stored[inbox[3].message_id] == acked
    for name, array in arrays.items():
        assert array.json.encode() == MESSAGES.dump_json(expected[name]), name  # type: ignore[arg-type]
        assert len(array) == len(expected[name]) and array == expected[name], name
        held = m.InboxResponse.model_construct(
            agent_id="bob", messages=array.as_field(), count=len(array)
        )
        built = m.InboxResponse(agent_id="bob", messages=expected[name], count=len(array))  # type: ignore[arg-type]
        assert answer_json(held) == built.model_dump_json().encode(), name
    assert thread == expected["thread"] and after_first == [stored[answer.message_id]]


async def test_answers_to_a_notification_are_counted_and_the_first_found(
    storage: Storage,
) -> None:
    await seed(storage)
    async with storage.unit_of_work(write=True) as uow:
        notes = [
            await uow.notifications.insert(
                m.Notification(agent_id="bob", text=str(n), bridge="b", created_at=NOW)
            )
            for n in range(3)
        ]
        ids = [note.notification_id for note in notes]
        first = await uow.messages.insert(direct("bob", "a", reply_to_notification=ids[0]))
        await uow.messages.insert(direct("bob", "b", reply_to_notification=ids[0]))
        await uow.messages.insert(direct("bob", "c", reply_to_notification=ids[1]))
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        assert await uow.messages.count_replies(ids) == {ids[0]: 2, ids[1]: 1}
        assert await uow.messages.count_replies([]) == {}
        assert await uow.messages.first_reply_to_notification(ids[0]) == first
        assert await uow.messages.first_reply_to_notification(ids[2]) is None


async def test_the_feed_is_read_after_a_cursor_for_the_audiences_asked(storage: Storage) -> None:
    async with storage.unit_of_work(write=False) as uow:
        assert await uow.events.newest_id() == 0
        assert await uow.events.after(0, 10) == []
    told = [
        m.Event(kind="k", audience=audience, subject_id=str(n), data={"n": n}, created_at=NOW)
        for n, audience in enumerate(["*", "bob", "room:ops", "cy"])
    ]
    async with storage.unit_of_work(write=True) as uow:
        for event in told:
            await uow.announce(event)
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        every = await uow.events.after(0, 10)
        newest = await uow.events.newest_id()
        bobs = await uow.events.after(0, 10, ["*", "bob", "room:ops"])
        past_first = await uow.events.after(every[0].event_id, 2)
        none = await uow.events.after(0, 10, [])
    assert [(e.audience, e.subject_id, e.data, e.created_at) for e in every] == [
        (e.audience, e.subject_id, e.data, e.created_at) for e in told
    ]
    assert newest == every[-1].event_id
    assert bobs == every[:3] and past_first == every[1:3] and none == []


def encoded(path: Any) -> dict[int, str]:
    """Each message's JSON as SQLite writes it, read past the adapter."""
    with sqlite3.connect(path) as db:
        return dict(db.execute("SELECT message_id, encoded FROM messages_encoded").fetchall())


async def test_sqlite_writes_a_rows_json_as_pydantic_does(sqlite_url: str) -> None:
    storage = SqliteStorage(sqlite_url)
    await storage.migrate()
    await seed(storage)
    async with storage.unit_of_work(write=True) as uow:
        await uow.messages.insert(direct("bob", 'é\n"q"', payload={"a": [1.5, True, None]}))
        delivered = await uow.messages.insert(
            direct("bob").model_copy(update={"created_at": WHOLE_SECOND})
        )
        await uow.messages.deliver(delivered.message_id, NOW)
        await uow.messages.insert(post("ops", "p"))
        await uow.commit()
    kept = encoded(storage.path)
    async with storage.unit_of_work(write=False) as uow:
        read = {key: await uow.messages.get(key) for key in kept}
    await storage.close()
    assert len(kept) == 3
    assert kept == {key: found.model_dump_json() for key, found in read.items() if found}
