"""Hints between instances on PostgreSQL: sent after commits, many topics to a NOTIFY, and an
instance's own not played back to it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from relay_core.storage.postgres import PostgresStorage
from tests.conftest import PG_SKIP, PG_URL, _postgres_schema, release_schema

pytestmark = [pytest.mark.postgres, pytest.mark.skipif(not PG_URL, reason=PG_SKIP)]


@pytest.fixture
async def instances() -> AsyncIterator[tuple[PostgresStorage, PostgresStorage]]:
    """Two storages on one schema, as two instances, both listening."""
    url, schema = await _postgres_schema()
    search = {"server_settings": {"search_path": schema}}
    a, b = PostgresStorage(url, connect_args=search), PostgresStorage(url, connect_args=search)
    await a.migrate()
    for storage in (a, b):
        await storage.listen()
        await asyncio.wait_for(storage.listening.wait(), 10)
    yield a, b
    await a.close()
    await b.close()
    await release_schema(url, schema)


def heard(storage: PostgresStorage, topics: list[str]) -> dict[str, int]:
    """How many times each topic is published on the storage's hub from now on."""
    counts = dict.fromkeys(topics, 0)
    for topic in topics:
        storage.hub.watch(topic, lambda topic=topic: counts.__setitem__(topic, counts[topic] + 1))  # type: ignore[misc]
    return counts


async def commit_touching(storage: PostgresStorage, topics: list[str]) -> None:
    async with storage.unit_of_work(write=True) as uow:
        for topic in topics:
            uow.publish(topic)
        await uow.commit()


async def until(condition: object, seconds: float = 10) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():  # type: ignore[operator]
        assert asyncio.get_running_loop().time() < deadline, "the hints did not arrive"
        await asyncio.sleep(0.01)


async def test_every_topic_of_a_commit_reaches_the_other_instance_once(
    instances: tuple[PostgresStorage, PostgresStorage],
) -> None:
    a, b = instances
    # More than one NOTIFY's payload (8,000 bytes) holds: the hints are split.
    topics = [f"inbox:agent-with-a-rather-long-name-{n:05d}" for n in range(600)]
    on_a, on_b = heard(a, topics), heard(b, topics)
    await commit_touching(a, topics)
    await until(lambda: all(on_b.values()))
    await asyncio.sleep(0.2)  # anything played back would have arrived by now
    assert set(on_b.values()) == {1}
    assert set(on_a.values()) == {1}  # at its commit, not again when its own NOTIFY comes back


async def test_hints_of_commits_in_flight_are_not_lost(
    instances: tuple[PostgresStorage, PostgresStorage],
) -> None:
    a, b = instances
    topics = [f"inbox:{n}" for n in range(50)]
    on_b = heard(b, topics)
    await asyncio.gather(*(commit_touching(a, [topic]) for topic in topics))
    await until(lambda: all(on_b.values()))
