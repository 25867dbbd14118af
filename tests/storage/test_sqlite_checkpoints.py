"""The SQLite checkpointer: it copies the WAL back a second apart, and often once the backstop
(SQLite's own checkpoint, inside a COMMIT) is near, so that the backstop finds little to copy."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

import pytest

from relay_api import models as m
from relay_core.storage.sqlite import SqliteStorage
from relay_core.storage.sqlite import storage as sqlite_storage
from relay_core.storage.sqlite.driver import sqlite3
from relay_core.storage.sqlite.storage import (
    CHECKPOINT_SECONDS,
    CLOSING_SECONDS,
    WAL_BACKSTOP_PAGES,
    CheckpointPace,
)

NOW = datetime.now(UTC)


def test_the_pace_quickens_when_the_next_interval_would_reach_the_backstop() -> None:
    pace = CheckpointPace()
    step = WAL_BACKSTOP_PAGES // 3 - 1  # frames an interval adds
    assert pace.after(step) == CHECKPOINT_SECONDS
    assert pace.after(2 * step) == CHECKPOINT_SECONDS
    assert pace.after(3 * step) == CLOSING_SECONDS  # one interval more would reach it
    assert pace.after(3 * step + 10) == CLOSING_SECONDS  # however little the short ones add
    assert pace.after(40) == CHECKPOINT_SECONDS  # the WAL started again
    assert pace.after(40 + step) == CHECKPOINT_SECONDS


async def test_near_the_backstop_the_copies_come_often_and_the_wal_starts_again(
    sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_storage, "WAL_BACKSTOP_PAGES", 400)
    monkeypatch.setattr(sqlite_storage, "CHECKPOINT_SECONDS", 0.3)
    monkeypatch.setattr(sqlite_storage, "CLOSING_SECONDS", 0.01)
    copies: list[tuple[float, int]] = []  # when each copy ended, and the WAL's frames then
    checkpoint = sqlite_storage._checkpoint

    def watched(conn: sqlite3.Connection) -> tuple[int, int]:
        busy, frames = checkpoint(conn)
        if not busy:
            copies.append((time.monotonic(), frames))
        return busy, frames

    monkeypatch.setattr(sqlite_storage, "_checkpoint", watched)
    store = SqliteStorage(sqlite_url)
    await store.migrate()

    async def add(agent_id: str) -> None:
        async with store.unit_of_work(write=True) as uow:
            await uow.agents.insert(m.Agent(agent_id=agent_id, created_at=NOW, updated_at=NOW))
            await uow.commit()

    def restarted() -> bool:
        frames = [count for _, count in copies]
        return any(later < earlier for earlier, later in zip(frames, frames[1:], strict=False))

    def gaps() -> list[float]:
        return [
            later - earlier for (earlier, _), (later, _) in zip(copies, copies[1:], strict=False)
        ]

    try:
        # Until the WAL has neared its backstop and started again: a loaded machine writes
        # slower, so that takes longer there; the deadline only ends a run that never would.
        added = 0
        deadline = time.monotonic() + 60
        while not (restarted() and min(gaps()) < 0.1) and time.monotonic() < deadline:
            await asyncio.gather(*(add(f"agent-{added + n}") for n in range(8)))
            added += 8
    finally:
        await store.close()

    assert restarted()
    assert min(gaps()) < 0.1  # copies at the closing pace, not only a second's apart
    assert max(count for _, count in copies) < 2 * 400  # the WAL never grew far past its backstop
