"""The storage contract: the same cases on both adapters (SQLite, PostgreSQL)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from relay_api import models as m
from relay_core.ports import StaleWrite, Storage, eq, gt, in_, lt, ne, not_in

NOW = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


def agent(agent_id: str, **fields: object) -> m.Agent:
    return m.Agent(agent_id=agent_id, created_at=NOW, updated_at=NOW, **fields)  # type: ignore[arg-type]


def note(
    agent_id: str, text: str = "hi", status: m.NotificationStatus = "pending"
) -> m.Notification:
    """A record of a table with generated keys that the generic verbs still serve."""
    return m.Notification(agent_id=agent_id, text=text, bridge="b", status=status, created_at=NOW)


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
        first = await uow.notifications.insert(note("b"))
        second = await uow.notifications.insert(note("b"))
        await uow.commit()
    assert first.notification_id > 0
    assert second.notification_id > first.notification_id


async def test_leaving_without_commit_rolls_back(storage: Storage) -> None:
    await seed_agents(storage, "keep")
    async with storage.unit_of_work(write=True) as uow:
        await uow.agents.insert(agent("gone"))
        await uow.agents.register_again("keep", {"name": "changed"}, None, NOW)
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
        msg = await uow.notifications.insert(note("c"))
        missed = await uow.notifications.update(
            msg.notification_id, {"status": "failed"}, expect={"status": "sent"}
        )
        hit = await uow.notifications.update(
            msg.notification_id, {"status": "failed", "sent_at": NOW}, expect={"status": "pending"}
        )
        absent = await uow.notifications.update(999_999, {"status": "failed"})
        await uow.commit()
    assert missed is None
    assert absent is None
    assert hit is not None and hit.status == "failed" and hit.sent_at == NOW


async def test_expect_none_matches_null(storage: Storage) -> None:
    await seed_agents(storage, "n")
    async with storage.unit_of_work(write=True) as uow:
        key = (await uow.notifications.insert(note("n"))).notification_id
        assert await uow.notifications.update(key, {"text": "x"}, expect={"error": None})
        assert await uow.notifications.update(key, {"text": "y"}, expect={"error": "t"}) is None
        await uow.commit()


async def test_expect_as_conditions(storage: Storage) -> None:
    await seed_agents(storage, "d", "e")
    async with storage.unit_of_work(write=True) as uow:
        msg = await uow.notifications.insert(note("d", status="sent"))
        unacked = in_("status", ("pending", "sent"))
        other = await uow.notifications.update(
            msg.notification_id, {"status": "failed"}, expect=[eq("agent_id", "e"), unacked]
        )
        hit = await uow.notifications.update(
            msg.notification_id, {"status": "failed"}, expect=[eq("agent_id", "d"), unacked]
        )
        again = await uow.notifications.update(
            msg.notification_id, {"status": "failed"}, expect=[eq("agent_id", "d"), unacked]
        )
        moved = await uow.notifications.update(
            msg.notification_id,
            {"text": "later"},
            expect=[ne("status", "pending"), ne("agent_id", None)],
        )
        await uow.commit()
    assert other is None
    assert hit is not None and hit.status == "failed"
    assert again is None
    assert moved is not None and moved.text == "later"


async def test_find_filters_orders_and_limits(storage: Storage) -> None:
    await seed_agents(storage, "d", "e")
    async with storage.unit_of_work(write=True) as uow:
        ids = [
            (await uow.notifications.insert(note(to, text))).notification_id
            for to, text in [("d", "1"), ("e", "2"), ("d", "3"), ("d", "4")]
        ]
        await uow.notifications.update(ids[2], {"status": "failed"})
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        inbox = await uow.notifications.find(
            eq("agent_id", "d"), in_("status", ("pending", "sent"))
        )
        newest = await uow.notifications.find(order_by="notification_id", descending=True, limit=2)
        not_d = await uow.notifications.find(ne("agent_id", "d"))
        after = await uow.notifications.find(
            gt("notification_id", ids[1]), lt("notification_id", ids[3])
        )
        from_second = await uow.notifications.find(gt("notification_id", ids[0]))
        nobody = await uow.notifications.find(eq("error", None), eq("agent_id", "zzz"))
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
            await uow.notifications.insert(note(to, text))
        await uow.notifications.update_where([eq("text", "3")], {"error": "e"})
        await uow.commit()
    for shape in [{}, {"order_by": "notification_id", "descending": True, "limit": 2}]:
        async with storage.unit_of_work(write=True) as uow:
            found = await uow.notifications.find(eq("agent_id", "j"), **shape)  # type: ignore[arg-type]
            pairs = ("notification_id", "text")
            values = await uow.notifications.find_values(pairs, eq("agent_id", "j"), **shape)  # type: ignore[arg-type]
        assert values == [(x.notification_id, x.text) for x in found]
    assert [x.text for x in found] == ["4", "3"] and found[1].error == "e"


async def test_a_commit_not_waiting_for_the_disk_is_kept(storage: Storage) -> None:
    """Seen by the next write at once, by reads once it is committed, which it soon is."""
    await seed_agents(storage, "l")
    async with storage.unit_of_work(write=True) as uow:
        await uow.agents.register_again("l", {"name": "advice"}, None, NOW)
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
        await uow.notifications.insert(note("seen").model_copy(update={"sent_at": NOW}))
        await uow.notifications.insert(note("never"))
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        recent = await uow.notifications.find(gt("sent_at", NOW - timedelta(seconds=1)))
        old = await uow.notifications.count(lt("sent_at", NOW + timedelta(seconds=1)))
    assert [n.agent_id for n in recent] == ["seen"]
    assert old == 1


async def test_count_and_update_where(storage: Storage) -> None:
    await seed_agents(storage, "f")
    async with storage.unit_of_work(write=True) as uow:
        for _ in range(3):
            await uow.notifications.insert(note("f"))
        changed = await uow.notifications.update_where(
            [eq("agent_id", "f"), eq("status", "pending")], {"status": "sent"}
        )
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        assert await uow.notifications.count(eq("status", "sent")) == 3
        assert await uow.notifications.count(eq("status", "pending")) == 0
    assert changed == 3


async def test_an_update_guarded_on_times_and_nulls_sets_only_the_rows_that_match(
    storage: Storage,
) -> None:
    """Guards whose values the store converts (times, in ``lt`` and ``in``), a NULL guard, and
    a value set to NULL, each in its place among the statement's parameters."""
    await seed_agents(storage, "w")
    later = NOW + timedelta(seconds=5)
    async with storage.unit_of_work(write=True) as uow:
        early = await uow.notifications.insert(note("w"))
        late = await uow.notifications.insert(note("w").model_copy(update={"created_at": later}))
        delivered = {"status": "sent", "sent_at": later, "error": None}
        guards = [eq("sent_at", None), in_("created_at", [NOW, later]), lt("created_at", later)]
        changed = await uow.notifications.update_where(guards, delivered)
        missed = await uow.notifications.update(
            late.notification_id, {"status": "failed"}, expect=[lt("created_at", NOW)]
        )
        hit = await uow.notifications.update(
            late.notification_id,
            {"text": "again", "sent_at": None},
            expect=[eq("sent_at", None), in_("created_at", [later])],
        )
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        stored_early = await uow.notifications.get(early.notification_id)
    assert changed == 1 and missed is None
    assert stored_early is not None and stored_early.sent_at == later
    assert stored_early.status == "sent"
    assert hit is not None and hit.text == "again" and hit.sent_at is None


async def test_count_by_counts_each_value_in_one_query(storage: Storage) -> None:
    await seed_agents(storage, "g1", "g2", "g3")
    async with storage.unit_of_work(write=True) as uow:
        for to, status in [
            ("g1", "pending"),
            ("g1", "pending"),
            ("g1", "failed"),
            ("g2", "pending"),
        ]:
            await uow.notifications.insert(note(to, status=status))
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        counts = await uow.notifications.count_by(
            "agent_id", in_("agent_id", ["g1", "g2", "g3"]), eq("status", "pending")
        )
        nothing = await uow.notifications.count_by("agent_id", in_("agent_id", []))
    assert counts == {"g1": 2, "g2": 1}  # g3 has none, so it is absent
    assert nothing == {}


async def test_not_in_leaves_out_the_values_given_and_nothing_for_none(storage: Storage) -> None:
    await seed_agents(storage, "n1", "n2", "n3")
    async with storage.unit_of_work(write=True) as uow:
        for to in ("n1", "n2", "n3", "n3"):
            await uow.notifications.insert(note(to))
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        counts = await uow.notifications.count_by("agent_id", not_in("agent_id", ["n1", "n2"]))
        every = await uow.notifications.count_by("agent_id", not_in("agent_id", []))
        found = await uow.notifications.find(not_in("agent_id", ["n3"]), order_by="agent_id")
    assert counts == {"n3": 2}
    assert every == {"n1": 1, "n2": 1, "n3": 2}
    assert [record.agent_id for record in found] == ["n1", "n2"]


async def test_newest_by_keeps_the_highest_key_of_each_value(storage: Storage) -> None:
    await seed_agents(storage, "h1", "h2", "h3")
    async with storage.unit_of_work(write=True) as uow:
        sent = [
            await uow.notifications.insert(note(to, text=f"{to}-{n}"))
            for n in range(3)
            for to in ("h1", "h2")
        ]
        await uow.notifications.insert(note("h3", status="failed"))
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        newest = await uow.notifications.newest_by(
            "agent_id", in_("agent_id", ["h1", "h2", "h3"]), eq("status", "pending")
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
        msg = await uow.notifications.insert(note("g"))
        await uow.commit()

    async def ack(name: str) -> bool:
        try:
            async with storage.unit_of_work(write=True) as uow:
                current = await uow.notifications.get(msg.notification_id)
                assert current is not None
                if current.status != "pending":
                    return False
                won = await uow.notifications.update(
                    msg.notification_id,
                    {"status": "failed", "text": name},
                    expect={"status": "pending"},
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
    first, second = note("to", "first"), note("to", "second")
    async with storage.unit_of_work(write=True) as uow:
        await uow.notifications.add(first)
        await uow.flush()
        assert first.notification_id > 0
        await uow.notifications.add(second)
        await uow.commit()
    assert second.notification_id > first.notification_id
    async with storage.unit_of_work(write=False) as uow:
        stored = await uow.notifications.find(eq("agent_id", "to"))
    assert [(s.notification_id, s.text) for s in stored] == [
        (first.notification_id, "first"),
        (second.notification_id, "second"),
    ]


async def test_held_writes_are_seen_by_their_unit_and_end_with_it(storage: Storage) -> None:
    await seed_agents(storage, "to")
    async with storage.unit_of_work(write=True) as uow:
        await uow.notifications.add(note("to"))
        assert await uow.notifications.count(eq("agent_id", "to")) == 1
    with pytest.raises(RuntimeError):
        async with storage.unit_of_work(write=True) as uow:
            await uow.notifications.add(note("to"))
            raise RuntimeError("boom")
    async with storage.unit_of_work(write=False) as uow:
        assert await uow.notifications.count(eq("agent_id", "to")) == 0


async def test_a_held_write_that_conflicts_is_a_stale_write(storage: Storage) -> None:
    held = m.Intervention(intervention_id="dup", created_by="x", created_at=NOW, updated_at=NOW)
    async with storage.unit_of_work(write=True) as uow:
        await uow.interventions.insert(held)
        await uow.commit()
    with pytest.raises(StaleWrite):
        async with storage.unit_of_work(write=True) as uow:
            await uow.interventions.add(held)
            await uow.commit()


async def test_held_writes_committed_without_waiting_are_kept(storage: Storage) -> None:
    await seed_agents(storage, "to")
    added = note("to")
    async with storage.unit_of_work(write=True) as uow:
        await uow.notifications.add(added)
        await uow.commit(durable=False)
    assert added.notification_id > 0
    async with storage.unit_of_work(write=True) as uow:
        assert await uow.notifications.get(added.notification_id) is not None
