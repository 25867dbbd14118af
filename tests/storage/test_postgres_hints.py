"""Hints between instances on PostgreSQL: sent after commits, many topics to a NOTIFY, and an
instance's own not played back to it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from relay_core.storage.postgres import PostgresStorage
from relay_core.storage.postgres.driver import asyncpg
from tests.conftest import PG_DSN, PG_SKIP, PG_URL, _postgres_schema, release_schema

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


async def introduce(a: PostgresStorage, b: PostgresStorage) -> None:
    """A hint from ``a`` heard by ``b``: after the first, which makes everything waiting on
    ``b`` look again, each topic is published once a hint."""
    on_b = heard(b, ["inbox:hello"])
    await commit_touching(a, ["inbox:hello"])
    await until(lambda: on_b["inbox:hello"] == 1)


async def test_every_topic_of_a_commit_reaches_the_other_instance_once(
    instances: tuple[PostgresStorage, PostgresStorage],
) -> None:
    a, b = instances
    await introduce(a, b)
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


async def end_session(pid: int | None) -> None:
    """End a PostgreSQL session from outside, as a restarted server or a proxy would."""
    assert pid is not None
    conn = await asyncpg.connect(PG_DSN)
    try:
        assert await conn.fetchval("SELECT pg_terminate_backend($1)", pid)
    finally:
        await conn.close()


async def test_every_waiter_looks_again_when_the_listen_connection_is_back(
    instances: tuple[PostgresStorage, PostgresStorage],
) -> None:
    """Hints sent while an instance's LISTEN connection was down never reach it: once it
    listens again, everything waiting there is woken to look for itself."""
    _, b = instances
    with b.hub.subscribe("inbox:bob") as waiting:
        dropped = b.listener_pid
        await end_session(dropped)
        assert await waiting.wait(10), "the waiter was not told to look again"
    assert b.listener_pid != dropped


async def test_a_hint_whose_notify_failed_is_sent_again(
    instances: tuple[PostgresStorage, PostgresStorage],
) -> None:
    a, b = instances
    on_b = heard(b, ["inbox:warm", "inbox:carol"])
    await commit_touching(a, ["inbox:warm"])  # the sending connection is open
    await until(lambda: on_b["inbox:warm"] == 1)
    await end_session(a._hints.pid)
    await commit_touching(a, ["inbox:carol"])  # its NOTIFY fails on the ended session
    await until(lambda: on_b["inbox:carol"] == 1)


async def test_every_waiter_looks_again_when_an_instance_is_first_heard(
    instances: tuple[PostgresStorage, PostgresStorage],
) -> None:
    """An instance killed between a commit and its hint comes back sending from a new
    session: its first hint makes every waiter of the other instances look again."""
    a, b = instances
    await introduce(a, b)
    with b.hub.subscribe("inbox:dave") as waiting:
        await end_session(a._hints.pid)  # the next hints come from a new session
        await commit_touching(a, ["inbox:someone-else"])
        assert await waiting.wait(10), "the waiter was not told to look again"
