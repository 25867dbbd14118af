"""The SQLite writer: units share commits, each is answered only once durable, and a failure
takes down exactly what it must — one unit, or a whole uncommitted batch."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest

from relay_api import models as m
from relay_core.storage.sqlite import SqliteStorage
from relay_core.storage.sqlite.driver import sqlite3

NOW = datetime.now(UTC)


@pytest.fixture
async def storage(sqlite_url: str) -> AsyncIterator[SqliteStorage]:
    store = SqliteStorage(sqlite_url)
    await store.migrate()
    yield store
    await store.close()


def agent(agent_id: str) -> m.Agent:
    return m.Agent(agent_id=agent_id, created_at=NOW, updated_at=NOW)


def stored_ids(storage: SqliteStorage) -> set[str]:
    """What a connection of another process would find in the file."""
    conn = sqlite3.connect(storage.path)
    try:
        return {row[0] for row in conn.execute("SELECT agent_id FROM agents")}
    finally:
        conn.close()


async def add(storage: SqliteStorage, agent_id: str, *, fail: bool = False) -> None:
    async with storage.unit_of_work(write=True) as uow:
        await uow.agents.insert(agent(agent_id))
        if fail:
            raise RuntimeError("this unit fails after writing")
        await uow.commit()


async def test_concurrent_units_share_commits_and_every_one_is_kept(
    storage: SqliteStorage,
) -> None:
    await asyncio.gather(*(add(storage, f"a{n}") for n in range(64)))
    assert stored_ids(storage) == {f"a{n}" for n in range(64)}
    writer = storage._writer_for_loop()
    assert 1 <= writer.commits < 64  # group commit: fewer transactions than units


async def test_commit_returns_only_once_the_row_is_in_the_file(storage: SqliteStorage) -> None:
    async with storage.unit_of_work(write=True) as uow:
        await uow.agents.insert(agent("durable"))
        assert "durable" not in stored_ids(storage)
        async with storage.unit_of_work(write=False) as reader:
            assert await reader.agents.get("durable") is None  # readers see committed rows only
        await uow.commit()
        assert "durable" in stored_ids(storage)


async def test_a_failing_unit_rolls_back_alone_within_its_batch(storage: SqliteStorage) -> None:
    results = await asyncio.gather(
        add(storage, "first"),
        add(storage, "broken", fail=True),
        add(storage, "third"),
        return_exceptions=True,
    )
    assert results[0] is None and results[2] is None
    assert isinstance(results[1], RuntimeError)
    assert stored_ids(storage) == {"first", "third"}


class HeldCommit:
    """The writer's connection, with each COMMIT held until the test lets it through (or, with
    ``fail``, failing as a full disk would, as a crash loses it)."""

    def __init__(self, conn: sqlite3.Connection, *, fail: bool = False) -> None:
        self._conn = conn
        self.fail = fail
        self.reached = threading.Event()
        self.passage = threading.Event()

    def commit(self) -> None:
        if self.fail:
            self.fail = False
            raise sqlite3.OperationalError("database or disk is full")
        self.reached.set()
        self.passage.wait(10)
        self._conn.commit()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


async def test_a_failed_commit_fails_every_unit_of_its_batch_and_keeps_none(
    storage: SqliteStorage,
) -> None:
    writer = storage._writer_for_loop()
    held = HeldCommit(writer.conn, fail=True)  # its next COMMIT fails as a full disk would
    held.passage.set()
    writer.conn = held  # type: ignore[assignment]
    results = await asyncio.gather(
        *(add(storage, f"lost{n}") for n in range(5)), return_exceptions=True
    )
    assert all(isinstance(r, sqlite3.OperationalError) for r in results), results
    assert stored_ids(storage) == set()
    await add(storage, "after")  # the writer carries on with the next batch
    assert stored_ids(storage) == {"after"}


async def test_a_lock_held_by_another_process_is_waited_for_without_blocking_the_loop(
    storage: SqliteStorage,
) -> None:
    other = sqlite3.connect(storage.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    waiting = asyncio.create_task(add(storage, "patient"))
    ticks = 0
    for _ in range(10):  # the event loop keeps running while the unit waits
        await asyncio.sleep(0.01)
        ticks += 1
    assert ticks == 10 and not waiting.done()
    other.execute("COMMIT")
    other.close()
    await asyncio.wait_for(waiting, 5)
    assert stored_ids(storage) == {"patient"}


async def test_a_unit_that_stops_waiting_leaves_its_batch_answered(storage: SqliteStorage) -> None:
    writer = storage._writer_for_loop()
    held = HeldCommit(writer.conn)
    writer.conn = held  # type: ignore[assignment]
    units = [asyncio.create_task(add(storage, f"u{n}")) for n in range(3)]
    assert await asyncio.to_thread(held.reached.wait, 5)  # all three wait on one COMMIT
    units[1].cancel()  # its client went away: it stops waiting, its write stays in the batch
    await asyncio.sleep(0.05)
    assert not units[0].done() and not units[2].done()  # still waiting for the disk
    held.passage.set()
    results = await asyncio.wait_for(asyncio.gather(*units, return_exceptions=True), 5)
    assert results[0] is None and results[2] is None
    assert isinstance(results[1], asyncio.CancelledError)
    assert stored_ids(storage) == {"u0", "u1", "u2"}
    assert writer.commits == 1
