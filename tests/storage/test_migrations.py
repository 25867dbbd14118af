"""The schema is versioned: migrations build exactly the declared schema and keep data."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

import pytest
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect

from relay_api import models as m
from relay_core.ports import StaleWrite, Storage
from relay_core.storage.migrate import alembic_config
from relay_core.storage.postgres import PostgresStorage
from relay_core.storage.sqlite import SqliteStorage
from tests.conftest import BACKENDS, make_storage, release_schema

SQL_BACKENDS = BACKENDS
SqlStorage = SqliteStorage | PostgresStorage


def current_revision(connection: Any) -> str | None:
    """The revision the database is at, or None for an empty database."""
    return MigrationContext.configure(connection).get_current_revision()


@pytest.mark.postgres
async def test_both_adapters_migrate_to_the_head_with_the_same_tables_and_columns(
    sqlite_url: str,
) -> None:
    """The revisions are the schema's one description: what they make on SQLite and on
    PostgreSQL holds the same tables and columns (but each one's search index, and SQLite's
    kept JSON of the rows), at the newest revision."""

    def tables(connection: Any) -> tuple[dict[str, set[str]], str | None]:
        found = inspect(connection)
        columns = {
            table: {column["name"] for column in found.get_columns(table)} - {"encoded"}
            for table in found.get_table_names()
            if not table.startswith("search_")
        }
        return columns, current_revision(connection)

    sqlite, _ = await make_storage("sqlite", sqlite_url)
    postgres, cleanup = await make_storage("postgres", sqlite_url)
    try:
        made = [await cast(SqlStorage, store).run_sync(tables) for store in (sqlite, postgres)]
    finally:
        await sqlite.close()
        await postgres.close()
        await release_schema(*cleanup)
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert made[0] == made[1]
    assert made[0][1] == head and "tasks" in made[0][0]


@pytest.mark.parametrize("storage", SQL_BACKENDS, indirect=True)
async def test_upgrading_again_keeps_every_row(storage: Storage) -> None:
    assert isinstance(storage, SqlStorage)
    now = datetime.now(UTC)
    async with storage.unit_of_work(write=True) as uow:
        await uow.agents.insert(m.Agent(agent_id="kept", created_at=now, updated_at=now))
        await uow.commit()
    await storage.migrate()
    async with storage.unit_of_work(write=False) as uow:
        assert await uow.agents.get("kept") is not None


async def test_sqlite_connections_are_set_up_for_a_server(sqlite_url: str) -> None:
    storage = SqliteStorage(sqlite_url, synchronous="NORMAL")
    await storage.migrate()
    conn = storage.connect()
    pragmas = {
        name: conn.execute(f"PRAGMA {name}").fetchone()[0]
        for name in ("journal_mode", "foreign_keys", "busy_timeout", "synchronous")
    }
    conn.close()
    await storage.close()
    assert pragmas == {
        "journal_mode": "wal",
        "foreign_keys": 1,
        "busy_timeout": 30000,
        "synchronous": 1,
    }


async def test_sqlite_foreign_keys_are_enforced(sqlite_url: str) -> None:
    storage = SqliteStorage(sqlite_url)
    await storage.migrate()
    now = datetime.now(UTC)
    with pytest.raises(StaleWrite):
        async with storage.unit_of_work(write=True) as uow:
            await uow.messages.insert(
                m.Message(from_agent="a", to="nobody", text="x", status="pending", created_at=now)
            )
    await storage.close()
