"""The tests' stores start migrated and empty, whichever test had the schema before
(``tests.migrated``)."""

from __future__ import annotations

import asyncpg
import pytest

from tests.conftest import PG_DSN, PG_SKIP, PG_URL, SCHEMAS, make_storage, release_schema
from tests.storage.test_contract import agent, note

pytestmark = [pytest.mark.postgres, pytest.mark.skipif(not PG_URL, reason=PG_SKIP)]


async def test_a_schema_used_again_is_empty_and_counts_from_the_start() -> None:
    store, (url, schema) = await make_storage("postgres", "")
    async with store.unit_of_work(write=True) as uow:
        await uow.agents.insert(agent("a-1"))
        first = await uow.notifications.insert(note("a-1"))
        await uow.commit()
    await store.close()
    await release_schema(url, schema)

    again, (_, taken) = await make_storage("postgres", "")
    try:
        assert taken == schema
        async with again.unit_of_work(write=True) as uow:
            assert await uow.agents.get("a-1") is None
            await uow.agents.insert(agent("a-2"))
            second = await uow.notifications.insert(note("a-2"))
            await uow.commit()
        assert second.notification_id == first.notification_id
    finally:
        await again.close()
        await release_schema(url, taken)


async def test_a_schema_whose_shape_a_test_changed_is_dropped() -> None:
    store, (url, schema) = await make_storage("postgres", "")
    await store.close()
    conn = await asyncpg.connect(PG_DSN)
    try:
        await conn.execute(f'ALTER TABLE "{schema}".agents ADD COLUMN extra TEXT')
        await release_schema(url, schema)
        gone = await conn.fetchval("SELECT count(*) FROM pg_namespace WHERE nspname = $1", schema)
    finally:
        await conn.close()
    assert gone == 0
    assert SCHEMAS.take() != schema
