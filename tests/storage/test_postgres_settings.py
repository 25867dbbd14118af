"""The PostgreSQL adapter's own settings: its pool's size and its sessions' synchronous_commit."""

from __future__ import annotations

import asyncio

import pytest

from relay_core.storage.postgres import PostgresStorage
from tests.conftest import PG_SKIP, PG_URL, _drop_schema, _postgres_schema

pytestmark = [pytest.mark.postgres, pytest.mark.skipif(not PG_URL, reason=PG_SKIP)]


async def _session_setting(storage: PostgresStorage, name: str) -> str:
    async with storage.unit_of_work(write=False) as uow:
        return str(await uow._tx.conn.fetchval("SELECT current_setting($1)", name))  # type: ignore[attr-defined]


async def test_synchronous_commit_is_set_on_relays_sessions_only() -> None:
    url, schema = await _postgres_schema()
    search = {"server_settings": {"search_path": schema}}
    relaxed = PostgresStorage(url, connect_args=search, synchronous_commit="off")
    default = PostgresStorage(url, connect_args=search)
    try:
        await relaxed.migrate()
        assert await _session_setting(relaxed, "synchronous_commit") == "off"
        assert await _session_setting(relaxed, "search_path") == schema  # merged, not replaced
        assert await _session_setting(default, "synchronous_commit") == "on"
    finally:
        await relaxed.close()
        await default.close()
        await _drop_schema(url, schema)


async def test_the_pool_holds_at_most_its_size() -> None:
    url, schema = await _postgres_schema()
    storage = PostgresStorage(
        url, connect_args={"server_settings": {"search_path": schema}}, pool_size=2
    )
    try:
        await storage.migrate()
        held = asyncio.Event()
        release = asyncio.Event()
        inside = 0

        async def hold() -> None:
            nonlocal inside
            async with storage.unit_of_work(write=True):
                inside += 1
                if inside == 2:
                    held.set()
                await release.wait()

        holders = [asyncio.create_task(hold()) for _ in range(3)]
        await asyncio.wait_for(held.wait(), 5)
        await asyncio.sleep(0.2)
        assert inside == 2  # the third waits for a connection
        release.set()
        await asyncio.gather(*holders)
        assert inside == 3
    finally:
        await storage.close()
        await _drop_schema(url, schema)
