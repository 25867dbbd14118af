"""The PostgreSQL adapter's own settings: its pool's size and its sessions' synchronous_commit."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from relay_core.storage.postgres import PostgresStorage
from tests.conftest import PG_SKIP, PG_URL, _postgres_schema, release_schema

pytestmark = [pytest.mark.postgres, pytest.mark.skipif(not PG_URL, reason=PG_SKIP)]


@pytest.fixture
async def schema() -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """A fresh schema: the URL, and the connect_args that put a storage in it."""
    url, name = await _postgres_schema()
    yield url, {"server_settings": {"search_path": name}}
    await release_schema(url, name)


async def _session_setting(storage: PostgresStorage, name: str) -> str:
    async with storage.unit_of_work(write=False) as uow:
        return str(await uow._tx.conn.fetchval("SELECT current_setting($1)", name))  # type: ignore[attr-defined]


async def test_synchronous_commit_is_set_on_relays_sessions_only(
    schema: tuple[str, dict[str, Any]],
) -> None:
    url, search = schema
    relaxed = PostgresStorage(url, connect_args=search, synchronous_commit="off")
    default = PostgresStorage(url, connect_args=search)
    try:
        await relaxed.migrate()
        assert await _session_setting(relaxed, "synchronous_commit") == "off"
        search_path = search["server_settings"]["search_path"]
        assert await _session_setting(relaxed, "search_path") == search_path  # merged, not replaced
        assert await _session_setting(default, "synchronous_commit") == "on"
    finally:
        await relaxed.close()
        await default.close()


async def test_the_pool_holds_at_most_its_size(schema: tuple[str, dict[str, Any]]) -> None:
    url, search = schema
    storage = PostgresStorage(url, connect_args=search, pool_size=2)
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


async def test_streams_take_at_most_half_the_pool(schema: tuple[str, dict[str, Any]]) -> None:
    """A stream's reads (``following``) take turns on half the connections: with every stream
    coming back at once, a request still finds one of the others."""
    url, search = schema
    storage = PostgresStorage(url, connect_args=search, pool_size=4)
    release = asyncio.Event()
    held: list[asyncio.Task[None]] = []
    try:
        await storage.migrate()
        following = 0
        both_in = asyncio.Event()

        async def stream_read() -> None:
            nonlocal following
            async with storage.unit_of_work(write=False, following=True):
                following += 1
                if following == 2:
                    both_in.set()
                await release.wait()

        requested = 0
        requests_in = asyncio.Event()

        async def request() -> None:
            nonlocal requested
            async with storage.unit_of_work(write=False) as uow:
                assert await uow.agents.by_token("no such token") is None
                requested += 1
                if requested == 2:
                    requests_in.set()
                await release.wait()

        held += [asyncio.create_task(stream_read()) for _ in range(3)]
        await asyncio.wait_for(both_in.wait(), 5)
        # Two requests at once, while the streams hold their half: both get a connection.
        held += [asyncio.create_task(request()) for _ in range(2)]
        await asyncio.wait_for(requests_in.wait(), 5)
        assert following == 2  # the third stream waits for its turn, not for a connection
        release.set()
        await asyncio.gather(*held)
        assert following == 3
    finally:
        release.set()  # what still holds a connection lets it go, the test passed or not
        await asyncio.gather(*held, return_exceptions=True)
        await storage.close()
