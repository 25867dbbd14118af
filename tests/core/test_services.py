"""Services straight over a SQLite store: no HTTP, fakes instead of mocks."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager

import pytest

from relay_api import models as m
from relay_api.errors import Conflict, NotFound, PermissionDenied
from relay_core.auth import OPERATOR_CALLER, Caller
from relay_core.ports import StaleWrite, UnitOfWork
from relay_core.services import Context, CoreConfig, Services
from relay_core.services.base import Registered
from relay_core.services.events import STREAM_PAGE
from relay_core.services.spaces import derive_id
from relay_core.storage.sqlite import SqliteStorage
from relay_server.bridges.local import LocalBridge
from tests import migrated


def services(storage: SqliteStorage) -> Services:
    return Services(Context(storage, (LocalBridge(),), CoreConfig()))


class FlakyStorage(SqliteStorage):
    """A SQLite store whose first ``failures`` write units of work lose a race."""

    def __init__(self, url: str, failures: int) -> None:
        super().__init__(url)
        self.failures = failures
        self.attempts = 0

    @asynccontextmanager
    async def unit_of_work(  # type: ignore[override]
        self, *, write: bool, following: bool = False
    ) -> AsyncIterator[UnitOfWork]:
        async with super().unit_of_work(write=write, following=following) as uow:
            self.attempts += 1
            if write and self.failures:
                self.failures -= 1
                raise StaleWrite("lost a race")
            yield uow


@pytest.fixture
async def store(sqlite_url: str) -> AsyncIterator[FlakyStorage]:
    """A migrated store that loses no race unless a test sets ``failures``."""
    await migrated.sqlite_store(SqliteStorage.file_of(sqlite_url))
    storage = FlakyStorage(sqlite_url, failures=0)
    await storage.migrate()
    yield storage
    await storage.close()


def test_caller_rules() -> None:
    alice = Caller("agent", "alice")
    alice.require_self("alice")
    with pytest.raises(PermissionDenied):
        alice.require_self("bob")
    with pytest.raises(PermissionDenied):
        alice.require_operator()
    OPERATOR_CALLER.require_self("bob")
    assert alice.acting_as(None) == "alice"
    assert OPERATOR_CALLER.acting_as(None) == "operator"
    assert Caller("operator", "bob").acting_as(None) == "bob"


async def test_derive_id_slugs_and_suffixes() -> None:
    taken = {"ops-team", "ops-team-2"}

    async def exists(candidate: str) -> object:
        return candidate if candidate in taken else None

    assert await derive_id("Ops Team", "space", exists) == "ops-team-3"
    assert await derive_id("Ünïcode!!", "space", exists) == "n-code"
    assert await derive_id("!!!", "space", exists) == "space"


async def test_twenty_concurrent_claims_have_one_winner(store: FlakyStorage) -> None:
    relay = services(store)
    for i in range(20):
        await relay.agents.register(OPERATOR_CALLER, m.AgentRegister(agent_id=f"w{i}"))
    task = await relay.tasks.create(OPERATOR_CALLER, m.TaskCreate(title="t"))

    async def claim(i: int) -> str:
        try:
            await relay.tasks.claim(
                Caller("agent", f"w{i}"), task.task_id, m.TaskClaim(agent_id=f"w{i}")
            )
            return "won"
        except Conflict:
            return "lost"

    outcomes = await asyncio.gather(*(claim(i) for i in range(20)))
    assert outcomes.count("won") == 1


async def test_a_lost_race_is_retried_from_a_fresh_read(store: FlakyStorage) -> None:
    store.failures = 2
    relay = services(store)
    agent = await relay.agents.register(OPERATOR_CALLER, m.AgentRegister(agent_id="a"))
    assert agent.agent_id == "a" and store.attempts == 3


async def test_a_race_lost_every_time_ends_as_a_conflict(store: FlakyStorage) -> None:
    store.failures = 100
    relay = services(store)
    with pytest.raises(Conflict):
        await relay.agents.register(OPERATOR_CALLER, m.AgentRegister(agent_id="a"))


async def test_racing_heartbeats_of_many_agents_share_one_write_each_answered_its_own(
    store: FlakyStorage,
) -> None:
    storage = store
    relay = services(storage)
    for i in range(10):
        await relay.agents.register(OPERATOR_CALLER, m.AgentRegister(agent_id=f"w{i}"))
    await relay.messages.send(Caller("agent", "w0"), m.MessageCreate(to="w3", text="hi"))
    units = storage.attempts

    def beat(agent_id: str, status: str | None = None) -> Awaitable[m.AgentHeartbeatResult]:
        body = m.AgentHeartbeat() if status is None else m.AgentHeartbeat(status=status)
        return relay.agents.heartbeat(OPERATOR_CALLER, agent_id, body)

    racing = [beat(f"w{i}", "busy" if i % 2 else None) for i in range(10)]
    *beats, ghost = await asyncio.gather(*racing, beat("ghost"), return_exceptions=True)
    assert storage.attempts == units + 1
    assert [
        (b.agent_id, b.status, b.pending_messages)
        for b in beats
        if isinstance(b, m.AgentHeartbeatResult)
    ] == [(f"w{i}", "busy" if i % 2 else None, 1 if i == 3 else 0) for i in range(10)]
    assert isinstance(ghost, NotFound)


def test_registered_agents_are_remembered_up_to_a_bound() -> None:
    known = Registered()
    known.LIMIT = 3
    for agent_id in ("a", "b", "c"):
        known.add(agent_id)
    assert all(agent_id in known for agent_id in ("a", "b", "c"))
    known.add("d")  # full: emptied, then "d"
    assert "d" in known and "a" not in known


class TurnsKept(SqliteStorage):
    """A SQLite store that notes whether each read unit of work took a stream's turn."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.turns: list[bool] = []

    @asynccontextmanager
    async def unit_of_work(  # type: ignore[override]
        self, *, write: bool, following: bool = False
    ) -> AsyncIterator[UnitOfWork]:
        if not write:
            self.turns.append(following)
        async with super().unit_of_work(write=write, following=following) as uow:
            yield uow


async def test_a_stream_takes_turns_while_it_catches_up_and_not_once_it_has(
    sqlite_url: str,
) -> None:
    """A stream back after a restart reads what it missed taking turns with the others
    (``following``); once a read found less than a page, a delivery takes none."""
    await migrated.sqlite_store(SqliteStorage.file_of(sqlite_url))
    storage = TurnsKept(sqlite_url)
    await storage.migrate()
    relay = services(storage)
    try:
        await relay.agents.register(OPERATOR_CALLER, m.AgentRegister(agent_id="bob"))
        bob = Caller("agent", "bob")
        for n in range(STREAM_PAGE + 1):  # missed while away: more than a page
            await relay.messages.send(OPERATOR_CALLER, m.MessageCreate(to="bob", text=f"m{n}"))
        storage.turns.clear()
        events = await relay.events.stream(bob, 0)
        for _ in range(STREAM_PAGE + 1):
            await asyncio.wait_for(anext(events), 10)
        await relay.messages.send(OPERATOR_CALLER, m.MessageCreate(to="bob", text="live"))
        live = await asyncio.wait_for(anext(events), 10)
        await events.aclose()  # type: ignore[attr-defined]
    finally:
        await storage.close()
    assert live.kind == "message.created"
    assert storage.turns == [True, True, True, False]  # its start, two pages; the delivery
