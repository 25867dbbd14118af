"""The schema is versioned: migrations build exactly the declared schema and keep data."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

import pytest
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from relay_api import models as m
from relay_api.params import SEARCH_KINDS
from relay_core.ports import SearchSpec, StaleWrite, Storage
from relay_core.search_query import parse
from relay_core.storage.migrate import alembic_config
from relay_core.storage.postgres import PostgresStorage
from relay_core.storage.sqlite import SqliteStorage
from relay_core.storage.sqlite.search import INDEX_QUEUED
from tests.conftest import BACKENDS, make_storage, release_schema

SQL_BACKENDS = BACKENDS
SqlStorage = SqliteStorage | PostgresStorage


def current_revision(connection: Any) -> str | None:
    """The revision the database is at, or None for an empty database."""
    return MigrationContext.configure(connection).get_current_revision()


async def downgraded(storage: SqlStorage, revision: str) -> None:
    """``storage`` taken back to ``revision`` (as an older Relay left it), as Relay runs its
    revisions: on SQLite, foreign keys checked at the end (a revision that makes a table again
    drops the old one first)."""

    def downgrade(connection: Any) -> None:
        from alembic import command

        command.downgrade(alembic_config(connection), revision)

    if isinstance(storage, SqliteStorage):
        await storage.run_sync(downgrade, foreign_keys=False)
    else:
        await storage.run_sync(downgrade)


@pytest.mark.postgres
async def test_both_adapters_migrate_to_the_head_with_the_same_tables_and_columns(
    sqlite_url: str,
) -> None:
    """The revisions are the schema's one description: what they make on SQLite and on
    PostgreSQL holds the same tables and columns (but each one's search index, revision 0019,
    and SQLite's kept JSON of the tasks, revision 0027), at the newest revision."""

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


@pytest.mark.parametrize("storage", SQL_BACKENDS, indirect=True)
async def test_an_older_schema_is_upgraded_with_its_rows(storage: Storage) -> None:
    assert isinstance(storage, SqlStorage)
    await downgraded(storage, "0001")
    assert await storage.run_sync(current_revision) == "0001"
    now = datetime.now(UTC)

    def insert_old_agent(connection: Any) -> None:
        connection.execute(
            text(
                "INSERT INTO agents (agent_id, capabilities, metadata, created_at, updated_at) "
                "VALUES ('old', '[]', '{}', :now, :now)"
            ),
            {"now": now.replace(tzinfo=None)},
        )

    await storage.run_sync(insert_old_agent)
    await storage.migrate()
    async with storage.unit_of_work(write=False) as uow:
        assert await uow.agents.get("old") is not None
        assert await uow.events.newest_id() == 0  # the table 0002 adds is there


async def test_answers_kept_in_the_clear_are_gone_from_the_files_after_0007(
    sqlite_url: str,
) -> None:
    storage = SqliteStorage(sqlite_url)
    await storage.migrate()

    def to_0006_with_a_plain_answer(connection: Any) -> None:
        from alembic import command

        command.downgrade(alembic_config(connection), "0006")
        connection.execute(
            text(
                "INSERT INTO idempotency_keys (scope, key, fingerprint, status, body, created_at)"
                " VALUES ('operator', 'k-0123456789abcdef', 'f', 201, :body, :now)"
            ),
            {"body": '{"token": "rly_agent_SECRET-kept-by-0006"}', "now": datetime.now(UTC)},
        )

    await storage.run_sync(to_0006_with_a_plain_answer)
    await storage.close()
    before = b"".join(p.read_bytes() for p in storage.path.parent.glob("relay.db*"))
    assert b"SECRET-kept-by-0006" in before  # the check reads the real files
    storage = SqliteStorage(sqlite_url)
    await storage.migrate()
    await storage.close()
    after = b"".join(p.read_bytes() for p in storage.path.parent.glob("relay.db*"))
    assert b"SECRET-kept-by-0006" not in after


@pytest.mark.parametrize("storage", SQL_BACKENDS, indirect=True)
async def test_messages_stored_before_threads_are_put_in_their_threads(storage: Storage) -> None:
    """0018 follows each stored message's reply_to to the first message of its conversation;
    one answering a message that is gone starts its own; those written after it get theirs."""
    assert isinstance(storage, SqlStorage)
    await downgraded(storage, "0017")
    now = datetime.now(UTC).replace(tzinfo=None)

    def insert_old_messages(connection: Any) -> None:
        connection.execute(
            text(
                "INSERT INTO agents (agent_id, capabilities, metadata, created_at, updated_at) "
                "VALUES ('old', '[]', '{}', :now, :now)"
            ),
            {"now": now},
        )
        for message_id, reply_to in ((1, None), (2, 1), (3, 2), (4, None), (5, 3), (6, 99)):
            connection.execute(
                text(
                    'INSERT INTO messages (message_id, from_agent, "to", text, payload, '
                    "reply_to, status, created_at) "
                    "VALUES (:id, 'old', 'old', 'm', '{}', :reply_to, 'pending', :now)"
                ),
                {"id": message_id, "reply_to": reply_to, "now": now},
            )
        if connection.dialect.name == "postgresql":  # ids given: the sequence moves past them
            connection.execute(
                text("SELECT setval(pg_get_serial_sequence('messages', 'message_id'), 6)")
            )

    await storage.run_sync(insert_old_messages)
    await storage.migrate()
    async with storage.unit_of_work(write=True) as uow:
        threads = {i: getattr(await uow.messages.get(i), "thread_id", None) for i in range(1, 7)}
        assert threads == {1: 1, 2: 1, 3: 1, 4: 4, 5: 1, 6: 6}
        new = m.Message(from_agent="old", to="old", text="n", status="pending", created_at=now)
        await uow.messages.insert(new)
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        stored = await uow.messages.get(new.message_id)
    assert stored is not None and stored.thread_id == new.message_id  # the database's own id


@pytest.mark.parametrize("storage", SQL_BACKENDS, indirect=True)
async def test_what_was_stored_before_search_is_found_after_the_upgrade(storage: Storage) -> None:
    assert isinstance(storage, SqlStorage)
    await downgraded(storage, "0018")
    now = datetime.now(UTC).replace(tzinfo=None)

    def insert_old_rows(connection: Any) -> None:
        connection.execute(
            text(
                "INSERT INTO agents (agent_id, capabilities, metadata, created_at, updated_at) "
                "VALUES ('old', '[]', '{}', :now, :now)"
            ),
            {"now": now},
        )
        connection.execute(
            text(
                'INSERT INTO messages (from_agent, "to", text, payload, status, created_at) '
                "VALUES ('old', 'old', 'the old certificate', '{}', 'pending', :now)"
            ),
            {"now": now},
        )

    await storage.run_sync(insert_old_rows)
    await storage.migrate()
    spec = SearchSpec(query=parse("certificate"), kinds=SEARCH_KINDS, reader="old")
    async with storage.unit_of_work(write=False) as uow:
        [hit] = await uow.search_index.search(spec)
    assert (hit.kind, hit.snippet) == ("message", "the old [certificate]")


# The writer's indexing before revision 0026 gave entries their readers.
_ENTRY = "kind, ref_id, title, body, from_agent, to_agent, room_id, audience, created_at"
INDEX_QUEUED_BEFORE_0026 = (
    INDEX_QUEUED[0],
    f"INSERT INTO search_index (rowid, {_ENTRY}) SELECT key, {_ENTRY} FROM search_queue",
    INDEX_QUEUED[-1],
)


@pytest.mark.parametrize("storage", SQL_BACKENDS, indirect=True)
async def test_the_notes_relay_wrote_are_out_of_the_index_after_0023(storage: Storage) -> None:
    assert isinstance(storage, SqlStorage)
    await downgraded(storage, "0022")
    now = datetime.now(UTC).replace(tzinfo=None)

    def insert_old_rows(connection: Any) -> None:
        connection.execute(
            text(
                "INSERT INTO tasks (task_id, title, payload, priority, status, created_by, "
                "attempts, max_attempts, created_at, updated_at) "
                "VALUES (7, 'Renew', '{}', 0, 'claimed', 'operator', 1, 1, :now, :now)"
            ),
            {"now": now},
        )
        for kind, message in [("claimed", "lease 300s"), ("progress", "ordered from the CA")]:
            connection.execute(
                text(
                    "INSERT INTO task_events (task_id, kind, message, data, created_at) "
                    "VALUES (7, :kind, :message, '{}', :now)"
                ),
                {"kind": kind, "message": message, "now": now},
            )
        if isinstance(storage, SqliteStorage):  # as the writer did as it committed, at 0022
            for statement in INDEX_QUEUED_BEFORE_0026:
                connection.exec_driver_sql(statement)

    await storage.run_sync(insert_old_rows)

    async def hits(q: str) -> list[tuple[str, int]]:
        spec = SearchSpec(query=parse(q), kinds=SEARCH_KINDS, reader=None)
        async with storage.unit_of_work(write=False) as uow:
            return [(hit.kind, hit.id) for hit in await uow.search_index.search(spec)]

    assert await hits("lease") == [("task", 7)]  # as revision 0022 indexed it
    await storage.migrate()
    assert await hits("lease") == []
    assert await hits("ordered renew") == [("task", 7)]
    await downgraded(storage, "0022")
    assert await hits("lease") == [("task", 7)]


async def test_sqlite_merges_the_index_sixteen_segments_at_a_time_after_0024(
    sqlite_url: str,
) -> None:
    storage = SqliteStorage(sqlite_url)
    await storage.migrate()

    def merges(connection: Any) -> dict[str, int]:
        config = "SELECT k, v FROM search_index_config WHERE k IN ('automerge', 'crisismerge')"
        return dict(connection.exec_driver_sql(config).fetchall())

    try:
        assert await storage.run_sync(merges) == {"automerge": 16, "crisismerge": 64}
        await downgraded(storage, "0023")
        assert await storage.run_sync(merges) == {"automerge": 4, "crisismerge": 16}
    finally:
        await storage.close()
