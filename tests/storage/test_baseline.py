"""The baseline revision makes the schema that revisions 0001–0043 made before it folded them
(kept under tests/storage/chain): compared by reflection on each dialect, table by table."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, inspect, text
from sqlalchemy.sql import ClauseElement

from relay_core.storage.migrate import alembic_config
from relay_core.storage.postgres import PostgresStorage
from relay_core.storage.sqlite import SqliteStorage
from tests.conftest import BACKENDS, PG_DSN, PG_SKIP, PG_URL, _postgres_schema

CHAIN = Path(__file__).with_name("chain")
BASELINE = "0043"  # the revision that folds the chain

# What reflection leaves out, by dialect: triggers, the functions they call, sequences, views'
# and virtual tables' definitions, and the rows a revision wrote (FTS5's settings).
SQLITE_EXTRAS = {
    "objects": "SELECT type, name, tbl_name, sql FROM sqlite_master "
    "WHERE type IN ('trigger', 'view') OR sql LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name",
    "search settings": "SELECT k, v FROM search_index_config ORDER BY k",
}
POSTGRES_EXTRAS = {
    "triggers": "SELECT t.tgname, c.relname, pg_get_triggerdef(t.oid) FROM pg_trigger t "
    "JOIN pg_class c ON c.oid = t.tgrelid WHERE NOT t.tgisinternal "
    "AND c.relnamespace = current_schema()::regnamespace ORDER BY t.tgname",
    # But the feed's (postgres/feed.py), which each start makes, not a revision.
    "functions": "SELECT p.proname, pg_get_functiondef(p.oid) FROM pg_proc p "
    "WHERE p.pronamespace = current_schema()::regnamespace "
    "AND p.proname NOT LIKE 'relay_feed_%' ORDER BY p.proname",
    "sequences": "SELECT sequence_name, data_type, start_value, increment FROM "
    "information_schema.sequences WHERE sequence_schema = current_schema() "
    "ORDER BY sequence_name",
}


def chain_upgrade(connection: Connection) -> None:
    """Revisions 0001–0043, as Relay ran them."""
    config = Config()
    config.set_main_option("script_location", str(CHAIN))
    config.attributes["connection"] = connection
    command.upgrade(config, "head")


def baseline_upgrade(connection: Connection) -> None:
    """The baseline alone, without the revisions on top of it."""
    command.upgrade(alembic_config(connection), BASELINE)


def _plain(value: Any) -> Any:
    """``value`` with the SQL in it (a partial index's condition) as text."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in sorted(value.items())}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return str(value) if isinstance(value, ClauseElement) else value


def _sorted(items: list[Any]) -> list[str]:
    return sorted(repr(_plain(item)) for item in items)


def shape(connection: Connection) -> dict[str, Any]:
    """The schema as reflection sees it: each table's columns (type, nullability, default),
    primary key, foreign keys, indexes, unique and check constraints; the views; and what
    reflection leaves out, read from the dialect's catalog; and the revision."""
    found = inspect(connection)
    tables = {}
    for table in found.get_table_names():
        columns = [
            (c["name"], str(c["type"]), c["nullable"], c.get("default"))
            for c in found.get_columns(table)
        ]
        tables[table] = {
            "columns": columns,
            "primary key": found.get_pk_constraint(table),
            "foreign keys": _sorted(found.get_foreign_keys(table)),
            "indexes": _sorted(found.get_indexes(table)),
            "unique": _sorted(found.get_unique_constraints(table)),
            "checks": _sorted(found.get_check_constraints(table)),
        }
    views = {view: found.get_view_definition(view) for view in found.get_view_names()}
    queries = SQLITE_EXTRAS if connection.dialect.name == "sqlite" else POSTGRES_EXTRAS
    schema = (
        connection.execute(text("SELECT current_schema()")).scalar()
        if queries is POSTGRES_EXTRAS
        else None
    )
    extras = {
        name: [
            tuple(str(v).replace(f"{schema}.", "") if schema else v for v in row)
            for row in connection.execute(text(query))
        ]
        for name, query in queries.items()
    }
    revision = MigrationContext.configure(connection).get_current_revision()
    return {"tables": tables, "views": views, **extras, "revision": revision}


async def _made_by(
    backend: str, tmp_path: Path, upgrade: Callable[[Connection], None]
) -> dict[str, Any]:
    """The schema ``upgrade`` makes in a new database of ``backend``."""
    if backend == "sqlite":
        sqlite = SqliteStorage(f"sqlite:///{tmp_path / f'{upgrade.__name__}.db'}")
        try:
            await sqlite.run_sync(upgrade, foreign_keys=False)
            return await sqlite.run_sync(shape)
        finally:
            await sqlite.close()
    if not PG_URL:
        pytest.skip(PG_SKIP)
    url, schema = await _postgres_schema()
    postgres = PostgresStorage(url, connect_args={"server_settings": {"search_path": schema}})
    try:
        await postgres.run_sync(upgrade)
        return await postgres.run_sync(shape)
    finally:
        await postgres.close()
        dropping = await asyncpg.connect(PG_DSN)
        await dropping.execute(f'DROP SCHEMA "{schema}" CASCADE')
        await dropping.close()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_baseline_makes_the_schema_the_folded_revisions_made(
    backend: str, tmp_path: Path
) -> None:
    chained = await _made_by(backend, tmp_path, chain_upgrade)
    based = await _made_by(backend, tmp_path, baseline_upgrade)
    assert based["revision"] == chained["revision"] == BASELINE
    assert len(based["tables"]) > 25 and "approvals" in based["tables"]
    assert based["tables"].keys() == chained["tables"].keys()
    for table in based["tables"]:
        assert based["tables"][table] == chained["tables"][table], table
    assert based == chained


def every_view_reads(connection: Connection) -> list[str]:
    """The views of the schema, each read once (a view over one a revision dropped fails)."""
    views = inspect(connection).get_view_names()
    for view in views:
        connection.execute(text(f'SELECT * FROM "{view}" LIMIT 1')).fetchall()
    return views


@pytest.mark.parametrize("backend", BACKENDS)
async def test_every_view_of_the_newest_schema_reads(backend: str, tmp_path: Path) -> None:
    def newest(connection: Connection) -> None:
        command.upgrade(alembic_config(connection), "head")

    shape_of_newest = await _made_by(backend, tmp_path, newest)
    assert shape_of_newest["revision"] != BASELINE  # revisions on top of the baseline ran
    if backend == "sqlite":
        sqlite = SqliteStorage(f"sqlite:///{tmp_path / 'newest.db'}")
        try:
            assert "a2a_tasks_shown" in await sqlite.run_sync(every_view_reads)
        finally:
            await sqlite.close()
