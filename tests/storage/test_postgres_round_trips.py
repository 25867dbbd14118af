"""The statements a unit of work sends PostgreSQL: writes held back until a statement or the
commit needs them, and a unit that only adds rows sent as one statement, its own transaction."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest

from relay_api import models as m
from relay_core.ports import UnitOfWork
from relay_core.storage.postgres import PostgresStorage
from tests.conftest import PG_SKIP, PG_URL, make_storage, release_schema

pytestmark = [pytest.mark.postgres, pytest.mark.skipif(not PG_URL, reason=PG_SKIP)]

NOW = datetime(2026, 1, 2, tzinfo=UTC)


@pytest.fixture
async def storage(sqlite_url: str) -> AsyncIterator[PostgresStorage]:
    store, (url, schema) = await make_storage("postgres", sqlite_url)
    assert isinstance(store, PostgresStorage)
    async with store.unit_of_work(write=True) as uow:  # the pool open, an agent to write to
        await uow.agents.insert(m.Agent(agent_id="to", created_at=NOW, updated_at=NOW))
        await uow.commit()
    yield store
    await store.close()
    await release_schema(url, schema)


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The first words of every statement sent on a connection from now on (but the hints
    to other instances, which go on a connection of their own)."""
    statements: list[str] = []

    def spy(original: Callable[..., Any]) -> Callable[..., Any]:
        def sending(conn: Any, query: str, *args: Any, **kwargs: Any) -> Any:
            if "pg_notify" not in query:
                statements.append(" ".join(query.split()[:3]))
            return original(conn, query, *args, **kwargs)

        return sending

    for verb in ("execute", "executemany", "fetch", "fetchrow", "fetchval"):
        monkeypatch.setattr(asyncpg.Connection, verb, spy(getattr(asyncpg.Connection, verb)))
    return statements


async def add_message(uow: UnitOfWork, text: str) -> m.Message:
    """A direct message and its event, as the messages service adds them."""
    message = m.Message(from_agent="to", to="to", text=text, status="pending", created_at=NOW)
    await uow.messages.add_direct(message)
    return message


async def test_a_unit_that_only_adds_is_one_statement(
    storage: PostgresStorage, sent: list[str]
) -> None:
    async with storage.unit_of_work(write=True) as uow:
        message = await add_message(uow, "one round trip")
        await uow.commit()
    assert sent == ["WITH message AS"]
    async with storage.unit_of_work(write=False) as uow:
        events = await uow.events.after(0, 10)
    assert [(e.subject_id, e.data["message_id"]) for e in events] == [
        (str(message.message_id), message.message_id)
    ]


async def test_events_held_together_go_as_one_batch_in_the_transaction(
    storage: PostgresStorage, sent: list[str]
) -> None:
    async with storage.unit_of_work(write=True) as uow:
        for n in range(3):
            await uow.announce(m.Event(kind="k", subject_id=str(n), created_at=NOW))
        await uow.commit()
    assert sent == ["BEGIN", "INSERT INTO events", "COMMIT"]
    async with storage.unit_of_work(write=False) as uow:
        assert [e.subject_id for e in await uow.events.after(0, 10)] == ["0", "1", "2"]


async def test_held_writes_go_after_the_begin_before_the_next_statement(
    storage: PostgresStorage, sent: list[str]
) -> None:
    async with storage.unit_of_work(write=True) as uow:
        await add_message(uow, "held")
        assert await uow.messages.count_unacked_to("to") == 1
        await uow.commit()
    assert sent == ["BEGIN", "WITH message AS", "SELECT count(*) FROM", "COMMIT"]


async def test_a_claim_is_four_statements(storage: PostgresStorage, sent: list[str]) -> None:
    """The guarded update, then the trail's note and its event as one statement."""
    async with storage.unit_of_work(write=True) as uow:
        created = await uow.tasks.insert(
            m.Task(title="t", created_by="operator", created_at=NOW, updated_at=NOW)
        )
        await uow.commit()
    sent.clear()
    async with storage.unit_of_work(write=True) as uow:
        claimed = await uow.tasks.claim_open(created.task_id, "ada", NOW, 60)
        assert claimed is not None
        note = m.TaskEvent(task_id=created.task_id, kind="claimed", created_at=NOW)
        told = m.Event(kind="task.claimed", subject_id=str(created.task_id), created_at=NOW)
        await uow.task_events.note(note, told)
        await uow.commit()
    assert sent == ["BEGIN", "UPDATE tasks SET", "WITH note AS", "COMMIT"]


async def test_a_unit_that_writes_nothing_sends_nothing(
    storage: PostgresStorage, sent: list[str]
) -> None:
    async with storage.unit_of_work(write=True) as uow:
        await uow.commit()
    async with storage.unit_of_work(write=True):
        pass
    assert sent == []
