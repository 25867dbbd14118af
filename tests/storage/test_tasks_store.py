"""The tasks store: every named statement of ``sqlite/queries/tasks.sql`` and
``postgres/queries/tasks.sql`` run through its store method on both adapters (the statements'
files: test_named_statements.py); and SQLite's
stored JSON, byte for byte what ``model_dump_json`` writes."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from relay_api import models as m
from relay_core.ports import StaleWrite, Storage
from relay_core.storage.sqlite import SqliteStorage
from relay_core.storage.sqlite.driver import sqlite3
from relay_core.storage.tasks import EVERY_TASK, TaskRange

NOW = datetime(2026, 11, 28, 9, 30, 15, 123456, tzinfo=UTC)


def task(title: str, **fields: Any) -> m.Task:
    return m.Task(title=title, created_by="operator", created_at=NOW, updated_at=NOW, **fields)


async def test_every_statement_through_its_store_method(storage: Storage) -> None:
    lease = 60
    later = NOW + timedelta(seconds=lease + 1)
    async with storage.unit_of_work(write=True) as uow:
        full = await uow.tasks.insert(
            task("full", description="d", payload={"n": 2**70, "é": [1, None]}, priority=3)
        )
        mine = await uow.tasks.insert(task("mine", assignee="ada"))
        other = await uow.tasks.insert(task("other", assignee="bob"))
        assert 0 < full.task_id < mine.task_id < other.task_id
        assert await uow.tasks.get(full.task_id) == full
        assert await uow.tasks.get(10**9) is None
        assert await uow.tasks.count_open() == 3

        claimed = await uow.tasks.claim_open(mine.task_id, "ada", NOW, lease)
        assert claimed is not None and (claimed.status, claimed.claimed_by) == ("claimed", "ada")
        assert (claimed.attempts, claimed.claimed_at) == (1, NOW)
        assert claimed.lease_expires_at == NOW + timedelta(seconds=lease)
        assert await uow.tasks.claim_open(mine.task_id, "ada", NOW, lease) is None  # held
        assert await uow.tasks.claim_open(other.task_id, "ada", NOW, lease) is None  # bob's
        assert await uow.tasks.claim_open(10**9, "ada", NOW, lease) is None

        progressed = await uow.tasks.record_progress(claimed, 40, later, NOW)
        assert progressed is not None and progressed.status == "in_progress"
        assert (progressed.progress, progressed.lease_expires_at) == (40, later)
        # A change of a task as it was read no longer: nothing changes.
        assert await uow.tasks.record_progress(claimed, 50, later, NOW) is None
        assert await uow.tasks.complete(claimed, {"r": 1}, None, NOW) is None
        kept = await uow.tasks.record_progress(progressed, None, later, NOW)
        assert kept is not None and kept.progress == 40  # no progress given: kept

        among = TaskRange(assignee="ada", after=mine.task_id - 1, through=mine.task_id)
        assert await uow.tasks.count_lapsed(later, among) == 0  # the lease ends at ``later``
        after_lease = later + timedelta(seconds=1)
        assert await uow.tasks.count_lapsed(after_lease, among) == 1
        assert await uow.tasks.count_lapsed(after_lease, TaskRange(claimed_by="bob")) == 0
        assert await uow.tasks.count_lapsed(after_lease, TaskRange(after=mine.task_id)) == 0
        [lapsed] = await uow.tasks.lapsed(after_lease, EVERY_TASK, 10)
        assert lapsed == kept
        reopened = await uow.tasks.reopen_lapsed(lapsed, after_lease)
        assert reopened is not None and (reopened.status, reopened.claimed_by) == ("open", None)
        assert reopened.lease_expires_at is None
        assert await uow.tasks.reopen_lapsed(lapsed, after_lease) is None

        again = await uow.tasks.claim_open(mine.task_id, "ada", NOW, lease)
        assert again is not None and again.attempts == 2
        retried = await uow.tasks.retry(again, {"partial": True}, "flaky", NOW)
        assert retried is not None and (retried.status, retried.claimed_by) == ("open", None)
        assert (retried.result, retried.error) == ({"partial": True}, "flaky")
        done = await uow.tasks.claim_open(full.task_id, "cy", NOW, lease)
        assert done is not None
        completed = await uow.tasks.complete(done, {"ok": True}, None, NOW)
        assert completed is not None and completed.status == "completed"
        assert (completed.progress, completed.finished_at) == (100, NOW)
        assert completed.lease_expires_at is None
        held = await uow.tasks.claim_open(other.task_id, "bob", NOW, lease)
        assert held is not None
        failed = await uow.tasks.fail(held, None, "broken", NOW)
        assert failed is not None and (failed.status, failed.error) == ("failed", "broken")
        await uow.commit()

    async with storage.unit_of_work(write=False) as uow:
        stored = {t: await uow.tasks.get(t) for t in (full.task_id, mine.task_id, other.task_id)}
        every = await uow.tasks.page(
            status=None, assignee=None, claimed_by=None, after=None, limit=10
        )
        first = await uow.tasks.page(
            status=None, assignee=None, claimed_by=None, after=None, limit=1
        )
        rest = await uow.tasks.page(
            status=None, assignee=None, claimed_by=None, after=full.task_id, limit=10
        )
        open_ = await uow.tasks.page(
            status="open", assignee=None, claimed_by=None, after=None, limit=10
        )
        bobs = await uow.tasks.page(
            status="failed", assignee="bob", claimed_by="bob", after=None, limit=10
        )
        nobody = await uow.tasks.page(
            status=None, assignee="zed", claimed_by=None, after=None, limit=10
        )
    # A page is each task's id and the JSON model_dump_json writes for it.
    assert every == [(key, found.model_dump_json()) for key, found in stored.items() if found]
    assert first == every[:1] and rest == every[1:]
    assert [key for key, _ in open_] == [mine.task_id]
    assert [key for key, _ in bobs] == [other.task_id]
    assert nobody == []


async def test_one_claimer_of_twenty_wins(storage: Storage) -> None:
    async with storage.unit_of_work(write=True) as uow:
        open_task = await uow.tasks.insert(task("race"))
        await uow.commit()

    async def claim(name: str) -> bool:
        try:
            async with storage.unit_of_work(write=True) as uow:
                won = await uow.tasks.claim_open(open_task.task_id, name, NOW, 60)
                await uow.commit()
                return won is not None
        except StaleWrite:
            return False

    results = await asyncio.gather(*(claim(f"w{i}") for i in range(20)))
    assert results.count(True) == 1


def encoded(path: Path) -> dict[int, str]:
    """Each task's JSON as SQLite keeps it, read past the adapter."""
    with sqlite3.connect(path) as db:
        return dict(db.execute("SELECT task_id, encoded FROM tasks").fetchall())


async def test_sqlite_keeps_each_tasks_json_through_every_write(sqlite_url: str) -> None:
    storage = SqliteStorage(sqlite_url)
    await storage.migrate()
    async with storage.unit_of_work(write=True) as uow:
        bare = await uow.tasks.insert(task("bare"))
        full = await uow.tasks.insert(task("full", description="é", payload={"n": [1, 2.5]}))
        claimed = await uow.tasks.claim_open(full.task_id, "ada", NOW.replace(microsecond=0), 9)
        assert claimed is not None
        await uow.tasks.record_progress(claimed, 10, NOW, NOW)
        await uow.commit()
    path = storage.path
    # A row written past the adapter (a restore, the benchmark's seeding) gets its JSON too.
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO tasks (title, payload, priority, status, created_by, attempts, "
            "max_attempts, created_at, updated_at) VALUES ('raw', '{}', 0, 'open', 'operator', "
            "0, 1, '2026-11-22 21:35:25.000000', '2026-11-22 21:35:25.000000')"
        )
    kept = encoded(path)
    async with storage.unit_of_work(write=False) as uow:
        read = {key: await uow.tasks.get(key) for key in kept}
    await storage.close()
    assert kept == {key: found.model_dump_json() for key, found in read.items() if found}
    assert len(kept) == 3 and bare.task_id in kept
    assert '"created_at":"2026-11-22T21:35:25Z"' in kept[max(kept)]  # no ".000000"


async def test_a_tasks_trail_noted_with_its_event_and_read_by_page(storage: Storage) -> None:
    async with storage.unit_of_work(write=True) as uow:
        kept = await uow.tasks.insert(task("trail"))
        first = await uow.task_events.insert(
            m.TaskEvent(task_id=kept.task_id, kind="progress", progress=5, created_at=NOW)
        )
        noted = m.TaskEvent(
            task_id=kept.task_id, agent_id="ada", kind="claimed", message="m", created_at=NOW
        )
        told = m.Event(kind="task.claimed", subject_id=str(kept.task_id), created_at=NOW)
        await uow.task_events.note(noted, told.model_copy(update={"data": {"n": [1, None]}}))
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        trail = await uow.task_events.page(kept.task_id, None, 10)
        after_first = await uow.task_events.page(kept.task_id, first.event_id, 10)
        one = await uow.task_events.page(kept.task_id, None, 1)
        feed = await uow.events.after(0, 10)
    assert first.event_id > 0 and trail[0] == first
    assert [(n.kind, n.agent_id, n.message, n.data) for n in trail[1:]] == [
        ("claimed", "ada", "m", {})
    ]
    assert after_first == trail[1:] and one == trail[:1]
    assert [(e.kind, e.subject_id, e.data) for e in feed] == [
        ("task.claimed", str(kept.task_id), {"n": [1, None]})
    ]
