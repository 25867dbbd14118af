"""The event feed on PostgreSQL: commits in any order, and a cursor still never skips a row.

Feed rows are keyed by their transaction and read below the horizon of the oldest transaction
still running, so these tests hold transactions open on purpose: Relay's own, and another
application's on another connection (transaction ids are the cluster's)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from relay_api import models as m
from relay_core.storage.postgres import PostgresStorage
from relay_core.topics import FEED, feed_topic
from tests.conftest import PG_SKIP, PG_URL, make_storage, other_application, release_schema

pytestmark = [pytest.mark.postgres, pytest.mark.skipif(not PG_URL, reason=PG_SKIP)]

NOW = datetime(2026, 1, 2, tzinfo=UTC)


def event(kind: str, audience: str = m.EVERYONE) -> m.Event:
    return m.Event(kind=kind, subject_id="s", created_at=NOW, audience=audience)


@pytest.fixture
async def storage(sqlite_url: str) -> AsyncIterator[PostgresStorage]:
    store, (url, schema) = await make_storage("postgres", sqlite_url)
    assert isinstance(store, PostgresStorage)
    yield store
    await store.close()
    await release_schema(url, schema)


async def read_feed(
    storage: PostgresStorage, after: int = 0, audiences: list[str] | None = None
) -> list[str]:
    async with storage.unit_of_work(write=False) as uow:
        return [e.kind for e in await uow.events.after(after, 1000, audiences)]


async def newest_id(storage: PostgresStorage) -> int:
    async with storage.unit_of_work(write=False) as uow:
        return await uow.events.newest_id()


async def test_a_row_that_commits_late_is_not_skipped_by_a_cursor(
    storage: PostgresStorage,
) -> None:
    async with storage.unit_of_work(write=True) as late:
        await late.events.add(event("late"))
        await late.flush()  # its transaction began first
        async with storage.unit_of_work(write=True) as early:
            await early.events.add(event("early"))
            await early.commit()
        # "early" has committed, but a reader that saw it could move its cursor past "late".
        assert await read_feed(storage) == []
        assert await newest_id(storage) == 0
        await late.commit()
    assert await read_feed(storage) == ["late", "early"]


async def test_rows_of_one_transaction_keep_their_order(storage: PostgresStorage) -> None:
    async with storage.unit_of_work(write=True) as uow:
        for i in range(3):
            await uow.events.add(event(str(i)))
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        ids = [e.event_id for e in await uow.events.after(0, 10)]
    assert len(set(ids)) == 3
    assert await read_feed(storage) == ["0", "1", "2"]
    assert await read_feed(storage, after=ids[0]) == ["1", "2"]


async def test_another_applications_transaction_holds_rows_back_until_it_ends(
    storage: PostgresStorage,
) -> None:
    async with other_application():
        async with storage.unit_of_work(write=True) as uow:
            await uow.events.add(event("held"))
            await uow.commit()
        assert await read_feed(storage) == []
    assert await read_feed(storage) == ["held"]


async def test_readers_are_woken_when_held_rows_are_released_without_a_hint(
    storage: PostgresStorage,
) -> None:
    """The transaction the rows wait for adds no row, so no hint tells of its end: the
    adapter watches the horizon, and wakes the feed's readers once it has passed the rows
    (not before: a reader woken while they are held would only read nothing again)."""
    async with other_application() as other:
        async with storage.unit_of_work(write=True) as uow:
            await uow.events.add(event("held"))
            await uow.commit()
        with storage.hub.subscribe(FEED) as subscription:
            assert await read_feed(storage) == []
            assert not await subscription.wait(1.5), "woken while the rows were still held"
            await other.execute("ROLLBACK")
            assert await subscription.wait(3.0), "no wake-up once the rows were released"
    assert await read_feed(storage) == ["held"]


async def test_held_rows_wake_again_only_the_readers_of_their_audience(
    storage: PostgresStorage,
) -> None:
    """In a fleet some row is nearly always held behind a transaction in flight: a reader is
    woken again for its own audiences' held rows, never for another agent's."""
    async with other_application() as other:
        async with storage.unit_of_work(write=True) as uow:
            await uow.events.add(event("for alice", audience="alice"))
            await uow.commit()
        with (
            storage.hub.subscribe(feed_topic("alice")) as alice,
            storage.hub.subscribe(feed_topic("bob")) as bob,
        ):
            assert await read_feed(storage, audiences=["bob"]) == []
            assert await read_feed(storage, audiences=["alice"]) == []
            await other.execute("ROLLBACK")
            assert await alice.wait(3.0), "no wake-up once alice's row was released"
            assert not await bob.wait(0.5), "bob was woken by alice's held row"
    assert await read_feed(storage, audiences=["alice"]) == ["for alice"]


async def test_ids_keep_rising_when_transaction_ids_start_lower(
    storage: PostgresStorage,
) -> None:
    """A dump restored into a new cluster brings ids drawn from higher transaction ids than
    the new cluster's; the next start raises the base so that new ids are above them."""
    async with storage.unit_of_work(write=True) as uow:
        xid = int(await uow._tx.conn.fetchval("SELECT pg_current_xact_id()::text::bigint"))  # type: ignore[attr-defined]
        restored = (xid + 1_000_000) * 65_536
        await uow._tx.conn.execute(  # type: ignore[attr-defined]
            "INSERT INTO events (event_id, kind, audience, subject_id, data, created_at) "
            "VALUES ($1, 'restored', '*', 's', '{}', now())",
            restored,
        )
        await uow.commit()
    await storage.migrate()  # as on the next start
    async with storage.unit_of_work(write=True) as uow:
        await uow.events.add(event("fresh"))
        await uow.commit()
    assert await newest_id(storage) > restored
    assert await read_feed(storage, after=restored) == ["fresh"]
    async with storage.unit_of_work(write=False) as uow:
        base = await uow._tx.conn.fetchval("SELECT relay_feed_base()")  # type: ignore[attr-defined]
    await storage.migrate()
    async with storage.unit_of_work(write=False) as uow:
        assert await uow._tx.conn.fetchval("SELECT relay_feed_base()") == base  # type: ignore[attr-defined]


async def test_readers_woken_by_hints_see_rows_of_concurrent_writers_exactly_once(
    storage: PostgresStorage,
) -> None:
    """Writers commit in whatever order they finish; a reader following the cursor sees each
    row once."""
    written = 400

    async def write(i: int) -> None:
        async with storage.unit_of_work(write=True) as uow:
            await uow.events.add(event(str(i)))
            await uow.flush()  # its id drawn now
            await asyncio.sleep(0.001 * (i % 7))  # commit out of the order ids were drawn
            await uow.commit()

    seen: list[str] = []

    async def follow() -> None:
        cursor = 0
        while len(seen) < written:
            with storage.hub.subscribe(FEED) as subscription:
                async with storage.unit_of_work(write=False) as uow:
                    page = await uow.events.after(cursor, 1000)
                seen.extend(e.kind for e in page)
                if page:
                    cursor = page[-1].event_id
                else:
                    await subscription.wait(1.0)

    reader = asyncio.create_task(follow())
    await asyncio.gather(*(write(i) for i in range(written)))
    await asyncio.wait_for(reader, 30)
    assert sorted(seen, key=int) == [str(i) for i in range(written)]
