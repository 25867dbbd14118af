"""The storage contract: the same cases on both adapters (SQLite, PostgreSQL)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import TypeAdapter

from relay_api import models as m
from relay_core.json_answers import answer_json
from relay_core.ports import Increment, StaleWrite, Storage, eq, gt, in_, lt, ne, not_in

NOW = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


def agent(agent_id: str, **fields: object) -> m.Agent:
    return m.Agent(agent_id=agent_id, created_at=NOW, updated_at=NOW, **fields)  # type: ignore[arg-type]


def message(to: str, text: str = "hi", status: m.MessageStatus = "pending") -> m.Message:
    return m.Message(from_agent="x", to=to, text=text, status=status, created_at=NOW)


async def seed_agents(storage: Storage, *ids: str) -> None:
    async with storage.unit_of_work(write=True) as uow:
        for agent_id in ids:
            await uow.agents.insert(agent(agent_id))
        await uow.commit()


async def test_insert_then_get_round_trips_every_field(storage: Storage) -> None:
    stored = agent(
        "a1",
        name="Alpha",
        capabilities=["x", "y"],
        metadata={"nested": {"k": [1, 2]}},
        last_seen_at=NOW,
        token_hash="h" * 64,
    )
    async with storage.unit_of_work(write=True) as uow:
        await uow.agents.insert(stored)
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        got = await uow.agents.get("a1")
    assert got == stored
    assert got is not None and got.created_at.tzinfo is not None
    assert got.token_hash == "h" * 64


async def test_generated_keys_increase(storage: Storage) -> None:
    await seed_agents(storage, "b")
    async with storage.unit_of_work(write=True) as uow:
        first = await uow.messages.insert(message("b"))
        second = await uow.messages.insert(message("b"))
        await uow.commit()
    assert first.message_id > 0
    assert second.message_id > first.message_id


async def test_leaving_without_commit_rolls_back(storage: Storage) -> None:
    await seed_agents(storage, "keep")
    async with storage.unit_of_work(write=True) as uow:
        await uow.agents.insert(agent("gone"))
        await uow.agents.update("keep", {"name": "changed"})
    async with storage.unit_of_work(write=False) as uow:
        assert await uow.agents.get("gone") is None
        kept = await uow.agents.get("keep")
    assert kept is not None and kept.name is None


async def test_an_error_inside_rolls_back(storage: Storage) -> None:
    with pytest.raises(RuntimeError):
        async with storage.unit_of_work(write=True) as uow:
            await uow.agents.insert(agent("ghost"))
            raise RuntimeError("boom")
    async with storage.unit_of_work(write=False) as uow:
        assert await uow.agents.get("ghost") is None


async def test_duplicate_key_is_a_stale_write(storage: Storage) -> None:
    await seed_agents(storage, "dup")
    with pytest.raises(StaleWrite):
        async with storage.unit_of_work(write=True) as uow:
            await uow.agents.insert(agent("dup"))


async def test_update_with_expect_is_compare_and_set(storage: Storage) -> None:
    await seed_agents(storage, "c")
    async with storage.unit_of_work(write=True) as uow:
        msg = await uow.messages.insert(message("c"))
        missed = await uow.messages.update(
            msg.message_id, {"status": "acked"}, expect={"status": "delivered"}
        )
        hit = await uow.messages.update(
            msg.message_id, {"status": "acked", "acked_at": NOW}, expect={"status": "pending"}
        )
        absent = await uow.messages.update(999_999, {"status": "acked"})
        await uow.commit()
    assert missed is None
    assert absent is None
    assert hit is not None and hit.status == "acked" and hit.acked_at == NOW


async def test_expect_none_matches_null(storage: Storage) -> None:
    await seed_agents(storage, "n")
    async with storage.unit_of_work(write=True) as uow:
        assert await uow.agents.update("n", {"name": "x"}, expect={"token_hash": None})
        assert await uow.agents.update("n", {"name": "y"}, expect={"token_hash": "t"}) is None
        await uow.commit()


async def test_expect_as_conditions(storage: Storage) -> None:
    await seed_agents(storage, "d", "e")
    async with storage.unit_of_work(write=True) as uow:
        msg = await uow.messages.insert(message("d", status="delivered"))
        unacked = in_("status", ("pending", "delivered"))
        other = await uow.messages.update(
            msg.message_id, {"status": "acked"}, expect=[eq("to", "e"), unacked]
        )
        hit = await uow.messages.update(
            msg.message_id, {"status": "acked"}, expect=[eq("to", "d"), unacked]
        )
        again = await uow.messages.update(
            msg.message_id, {"status": "acked"}, expect=[eq("to", "d"), unacked]
        )
        moved = await uow.messages.update(
            msg.message_id, {"text": "later"}, expect=[ne("status", "pending"), ne("to", None)]
        )
        await uow.commit()
    assert other is None
    assert hit is not None and hit.status == "acked"
    assert again is None
    assert moved is not None and moved.text == "later"


async def test_find_filters_orders_and_limits(storage: Storage) -> None:
    await seed_agents(storage, "d", "e")
    async with storage.unit_of_work(write=True) as uow:
        ids = [
            (await uow.messages.insert(message(to, text))).message_id
            for to, text in [("d", "1"), ("e", "2"), ("d", "3"), ("d", "4")]
        ]
        await uow.messages.update(ids[2], {"status": "acked"})
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        inbox = await uow.messages.find(eq("to", "d"), in_("status", ("pending", "delivered")))
        newest = await uow.messages.find(order_by="message_id", descending=True, limit=2)
        not_d = await uow.messages.find(ne("to", "d"))
        after = await uow.messages.find(gt("message_id", ids[1]), lt("message_id", ids[3]))
        from_second = await uow.messages.find(gt("message_id", ids[0]))
        nobody = await uow.messages.find(eq("room_id", None), eq("to", "zzz"))
    assert [x.text for x in inbox] == ["1", "4"]
    assert [x.text for x in newest] == ["4", "3"]
    assert [x.text for x in not_d] == ["2"]
    assert [x.text for x in after] == ["3"]
    assert len(from_second) == 3
    assert nobody == []


async def test_values_are_those_of_find(storage: Storage) -> None:
    """``find_values`` gives what ``find`` gives: the fields asked for."""
    await seed_agents(storage, "j", "k")
    async with storage.unit_of_work(write=True) as uow:
        for to, text in [("j", "1"), ("k", "2"), ("j", "3"), ("j", "4")]:
            await uow.messages.insert(message(to, text))
        await uow.messages.update_where([eq("text", "3")], {"delivery_count": Increment(2)})
        await uow.commit()
    for shape in [{}, {"order_by": "message_id", "descending": True, "limit": 2}]:
        async with storage.unit_of_work(write=True) as uow:
            found = await uow.messages.find(eq("to", "j"), **shape)  # type: ignore[arg-type]
            pairs = ("message_id", "text")
            values = await uow.messages.find_values(pairs, eq("to", "j"), **shape)  # type: ignore[arg-type]
        assert values == [(x.message_id, x.text) for x in found]
    assert [x.text for x in found] == ["4", "3"] and found[1].delivery_count == 2


async def test_an_encoded_array_is_the_json_of_the_models_in_key_order(storage: Storage) -> None:
    """``find_encoded_array``: the records in key order, as ``model_dump_json`` writes their
    list: the first ``limit``, or the newest; all of them without one; ``[]`` for none."""
    await seed_agents(storage, "j", "k")
    async with storage.unit_of_work(write=True) as uow:
        for to, text in [("j", "1"), ("k", "2"), ("j", "3"), ("j", "4"), ("j", "5")]:
            await uow.messages.insert(message(to, text))
        await uow.commit()
    adapter = TypeAdapter(list[m.Message])
    async with storage.unit_of_work(write=False) as uow:
        mine = await uow.messages.find(eq("to", "j"))
        arrays = {
            "all": await uow.messages.find_encoded_array(eq("to", "j")),
            "first": await uow.messages.find_encoded_array(eq("to", "j"), limit=2),
            "newest": await uow.messages.find_encoded_array(eq("to", "j"), limit=3, newest=True),
            "none": await uow.messages.find_encoded_array(eq("to", "nobody"), limit=3),
        }
    expected = {"all": mine, "first": mine[:2], "newest": mine[1:], "none": []}
    for name, array in arrays.items():
        assert array.json.encode() == adapter.dump_json(expected[name]), name
        assert len(array) == len(expected[name]), name
        assert list(array) == expected[name] and array == expected[name], name
        # An answer holding the array as stored is written as the answer of its models.
        held = m.InboxResponse.model_construct(
            agent_id="j", messages=array.as_field(), count=len(array)
        )
        built = m.InboxResponse(agent_id="j", messages=expected[name], count=len(array))
        assert answer_json(held) == built.model_dump_json().encode(), name


async def test_a_commit_not_waiting_for_the_disk_is_kept(storage: Storage) -> None:
    """Seen by the next write at once, by reads once it is committed, which it soon is."""
    await seed_agents(storage, "l")
    async with storage.unit_of_work(write=True) as uow:
        await uow.agents.update("l", {"name": "advice"})
        await uow.commit(durable=False)
    async with storage.unit_of_work(write=True) as uow:
        written = await uow.agents.get("l")
    assert written is not None and written.name == "advice"
    for _ in range(100):
        async with storage.unit_of_work(write=False) as uow:
            read = await uow.agents.get("l")
        if read is not None and read.name == "advice":
            break
        await asyncio.sleep(0.02)
    else:
        raise AssertionError("a read never saw the commit")


async def test_ordering_conditions_never_match_null(storage: Storage) -> None:
    await seed_agents(storage, "seen", "never")
    async with storage.unit_of_work(write=True) as uow:
        await uow.agents.update("seen", {"last_seen_at": NOW})
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        recent = await uow.agents.find(gt("last_seen_at", NOW - timedelta(seconds=1)))
        old = await uow.agents.count(lt("last_seen_at", NOW + timedelta(seconds=1)))
    assert [a.agent_id for a in recent] == ["seen"]
    assert old == 1


async def test_count_and_update_where(storage: Storage) -> None:
    await seed_agents(storage, "f")
    async with storage.unit_of_work(write=True) as uow:
        for _ in range(3):
            await uow.messages.insert(message("f"))
        changed = await uow.messages.update_where(
            [eq("to", "f"), eq("status", "pending")], {"status": "delivered"}
        )
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        assert await uow.messages.count(eq("status", "delivered")) == 3
        assert await uow.messages.count(eq("status", "pending")) == 0
    assert changed == 3


async def test_an_update_guarded_on_times_and_nulls_sets_only_the_rows_that_match(
    storage: Storage,
) -> None:
    """Guards whose values the store converts (times, in ``lt`` and ``in``), a NULL guard, and
    a value set to NULL, each in its place among the statement's parameters."""
    await seed_agents(storage, "w")
    later = NOW + timedelta(seconds=5)
    async with storage.unit_of_work(write=True) as uow:
        early = await uow.messages.insert(message("w"))
        late = await uow.messages.insert(message("w").model_copy(update={"created_at": later}))
        delivered = {"status": "delivered", "delivered_at": later, "acked_at": None}
        guards = [eq("acked_at", None), in_("created_at", [NOW, later]), lt("created_at", later)]
        changed = await uow.messages.update_where(guards, delivered)
        missed = await uow.messages.update(
            late.message_id, {"status": "acked"}, expect=[lt("created_at", NOW)]
        )
        hit = await uow.messages.update(
            late.message_id,
            {"delivery_count": Increment(3), "delivered_at": None},
            expect=[eq("delivered_at", None), in_("created_at", [later])],
        )
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        stored_early = await uow.messages.get(early.message_id)
    assert changed == 1 and missed is None
    assert stored_early is not None and stored_early.delivered_at == later
    assert stored_early.status == "delivered"
    assert hit is not None and hit.delivery_count == 3 and hit.delivered_at is None


async def test_count_by_counts_each_value_in_one_query(storage: Storage) -> None:
    await seed_agents(storage, "g1", "g2", "g3")
    async with storage.unit_of_work(write=True) as uow:
        for to, status in [
            ("g1", "pending"),
            ("g1", "pending"),
            ("g1", "acked"),
            ("g2", "pending"),
        ]:
            await uow.messages.insert(message(to, status=status))
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        counts = await uow.messages.count_by(
            "to", in_("to", ["g1", "g2", "g3"]), eq("status", "pending")
        )
        nothing = await uow.messages.count_by("to", in_("to", []))
    assert counts == {"g1": 2, "g2": 1}  # g3 has none, so it is absent
    assert nothing == {}


async def test_not_in_leaves_out_the_values_given_and_nothing_for_none(storage: Storage) -> None:
    await seed_agents(storage, "n1", "n2", "n3")
    async with storage.unit_of_work(write=True) as uow:
        for to in ("n1", "n2", "n3", "n3"):
            await uow.messages.insert(message(to))
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        counts = await uow.messages.count_by("to", not_in("to", ["n1", "n2"]))
        every = await uow.messages.count_by("to", not_in("to", []))
        found = await uow.messages.find(not_in("to", ["n3"]), order_by="to")
    assert counts == {"n3": 2}
    assert every == {"n1": 1, "n2": 1, "n3": 2}
    assert [record.to for record in found] == ["n1", "n2"]


async def test_newest_by_keeps_the_highest_key_of_each_value(storage: Storage) -> None:
    await seed_agents(storage, "h1", "h2", "h3")
    async with storage.unit_of_work(write=True) as uow:
        sent = [
            await uow.messages.insert(message(to, text=f"{to}-{n}"))
            for n in range(3)
            for to in ("h1", "h2")
        ]
        await uow.messages.insert(message("h3", status="acked"))
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        newest = await uow.messages.newest_by(
            "to", in_("to", ["h1", "h2", "h3"]), eq("status", "pending")
        )
    assert {to: record.text for to, record in newest.items()} == {"h1": "h1-2", "h2": "h2-2"}
    assert newest["h1"] == sent[-2]


async def test_json_columns_keep_strings_and_objects(storage: Storage) -> None:
    async with storage.unit_of_work(write=True) as uow:
        await uow.interventions.insert(
            m.Intervention(intervention_id="i", created_by="x", created_at=NOW, updated_at=NOW)
        )
        for content in ("plain text", {"disk": {"free": 3}}):
            await uow.diagnostics.insert(
                m.Diagnostic(
                    intervention_id="i", agent_id="x", summary="s", content=content, created_at=NOW
                )
            )
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        stored = await uow.diagnostics.find(eq("intervention_id", "i"))
    assert [d.content for d in stored] == ["plain text", {"disk": {"free": 3}}]


async def test_racing_compare_and_set_has_one_winner(storage: Storage) -> None:
    await seed_agents(storage, "g")
    async with storage.unit_of_work(write=True) as uow:
        msg = await uow.messages.insert(message("g"))
        await uow.commit()

    async def ack(name: str) -> bool:
        try:
            async with storage.unit_of_work(write=True) as uow:
                current = await uow.messages.get(msg.message_id)
                assert current is not None
                if current.status != "pending":
                    return False
                won = await uow.messages.update(
                    msg.message_id, {"status": "acked", "text": name}, expect={"status": "pending"}
                )
                await uow.commit()
                return won is not None
        except StaleWrite:
            return False

    results = await asyncio.gather(*(ack(f"w{i}") for i in range(10)))
    assert results.count(True) == 1


async def test_exclusive_has_one_holder_at_a_time(storage: Storage) -> None:
    async with storage.exclusive("poller") as first:
        async with storage.exclusive("poller") as second:
            assert first is True and second is False
        async with storage.exclusive("other") as unrelated:
            assert unrelated is True
    async with storage.exclusive("poller") as again:
        assert again is True


async def test_added_records_have_their_keys_once_flushed_or_committed(storage: Storage) -> None:
    await seed_agents(storage, "to")
    first, second = message("to", "first"), message("to", "second")
    async with storage.unit_of_work(write=True) as uow:
        await uow.messages.add(first)
        await uow.flush()
        assert first.message_id > 0
        await uow.messages.add(second)
        await uow.commit()
    assert second.message_id > first.message_id
    async with storage.unit_of_work(write=False) as uow:
        stored = await uow.messages.find(eq("to", "to"))
    assert [(s.message_id, s.text) for s in stored] == [
        (first.message_id, "first"),
        (second.message_id, "second"),
    ]


async def test_an_announced_event_names_the_record_it_is_about(storage: Storage) -> None:
    await seed_agents(storage, "to")
    added, inserted = message("to", "added"), message("to", "inserted")
    told = [
        m.Event(kind="told", audience="to", subject_id="", data={"n": n}, created_at=NOW)
        for n in (1, 2)
    ]
    async with storage.unit_of_work(write=True) as uow:
        await uow.messages.add(added)  # its key not known yet
        await uow.announce(told[0], about=added)
        await uow.messages.insert(inserted)  # its key known at once
        await uow.announce(told[1], about=inserted)
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        events = await uow.events.find(order_by="event_id")
    assert [(e.event_id, e.subject_id, e.data) for e in events] == [
        (told[0].event_id, str(added.message_id), {"message_id": added.message_id, "n": 1}),
        (told[1].event_id, str(inserted.message_id), {"message_id": inserted.message_id, "n": 2}),
    ]
    assert 0 < told[0].event_id < told[1].event_id


async def test_held_writes_are_seen_by_their_unit_and_end_with_it(storage: Storage) -> None:
    await seed_agents(storage, "to")
    async with storage.unit_of_work(write=True) as uow:
        await uow.messages.add(message("to"))
        assert await uow.messages.count(eq("to", "to")) == 1
    with pytest.raises(RuntimeError):
        async with storage.unit_of_work(write=True) as uow:
            await uow.messages.add(message("to"))
            raise RuntimeError("boom")
    async with storage.unit_of_work(write=False) as uow:
        assert await uow.messages.count(eq("to", "to")) == 0


async def test_a_held_write_that_conflicts_is_a_stale_write(storage: Storage) -> None:
    await seed_agents(storage, "dup")
    with pytest.raises(StaleWrite):
        async with storage.unit_of_work(write=True) as uow:
            await uow.agents.add(agent("dup"))
            await uow.commit()


async def test_held_writes_committed_without_waiting_are_kept(storage: Storage) -> None:
    await seed_agents(storage, "to")
    added = message("to")
    async with storage.unit_of_work(write=True) as uow:
        await uow.messages.add(added)
        await uow.commit(durable=False)
    assert added.message_id > 0
    async with storage.unit_of_work(write=True) as uow:
        assert await uow.messages.get(added.message_id) is not None
