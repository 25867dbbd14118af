"""The storage contract: the same cases on both adapters (SQLite, PostgreSQL)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from relay_api import models as m
from relay_core.ports import StaleWrite, Storage

NOW = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


def agent(agent_id: str, **fields: object) -> m.Agent:
    return m.Agent(agent_id=agent_id, created_at=NOW, updated_at=NOW, **fields)  # type: ignore[arg-type]


def note(
    agent_id: str, text: str = "hi", status: m.NotificationStatus = "pending"
) -> m.Notification:
    """A record of a table with generated keys."""
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


async def test_exclusive_has_one_holder_at_a_time(storage: Storage) -> None:
    async with storage.exclusive("poller") as first:
        async with storage.exclusive("poller") as second:
            assert first is True and second is False
        async with storage.exclusive("other") as unrelated:
            assert unrelated is True
    async with storage.exclusive("poller") as again:
        assert again is True


async def test_a_held_write_that_conflicts_is_a_stale_write(storage: Storage) -> None:
    """A note on a task that does not exist, held back on PostgreSQL until the commit."""
    note = m.TaskEvent(task_id=999_999, kind="note", created_at=NOW)
    told = m.Event(kind="task.note", subject_id="999999", created_at=NOW)
    with pytest.raises(StaleWrite):
        async with storage.unit_of_work(write=True) as uow:
            await uow.task_events.note(note, told)
            await uow.commit()


async def test_racing_compare_and_set_has_one_winner(storage: Storage) -> None:
    async with storage.unit_of_work(write=True) as uow:
        await uow.spaces.insert(m.Space(space_id="raced", name="r", created_at=NOW))
        await uow.commit()

    async def archive() -> bool:
        try:
            async with storage.unit_of_work(write=True) as uow:
                won = await uow.spaces.archive("raced", NOW)
                await uow.commit()
                return won is not None
        except StaleWrite:
            return False

    results = await asyncio.gather(*(archive() for _ in range(10)))
    assert results.count(True) == 1


async def test_held_writes_are_seen_by_their_unit_and_end_with_it(storage: Storage) -> None:
    """A note added (held back on PostgreSQL until the unit's next statement) is read by the
    unit that added it, and rolled back with it."""
    await seed_agents(storage, "to")

    def trail_note(task_id: int) -> tuple[m.TaskEvent, m.Event]:
        event = m.TaskEvent(task_id=task_id, agent_id="to", kind="note", created_at=NOW)
        return event, m.Event(
            kind="task.note", audience="to", subject_id=str(task_id), created_at=NOW
        )

    async with storage.unit_of_work(write=True) as uow:
        task = await uow.tasks.insert(
            m.Task(title="t", created_by="to", created_at=NOW, updated_at=NOW)
        )
        await uow.commit()
    async with storage.unit_of_work(write=True) as uow:
        await uow.task_events.note(*trail_note(task.task_id))
        assert len(await uow.task_events.page(task.task_id, None, 10)) == 1
    with pytest.raises(RuntimeError):
        async with storage.unit_of_work(write=True) as uow:
            await uow.task_events.note(*trail_note(task.task_id))
            raise RuntimeError("boom")
    async with storage.unit_of_work(write=False) as uow:
        assert await uow.task_events.page(task.task_id, None, 10) == []
    async with storage.unit_of_work(write=True) as uow:
        await uow.task_events.note(*trail_note(task.task_id))
        await uow.commit(durable=False)
    async with storage.unit_of_work(write=True) as uow:  # committed, not waiting for the disk
        assert len(await uow.task_events.page(task.task_id, None, 10)) == 1
