"""The tasks table keeps each row's JSON (``stored_json``): computed by SQLite on every insert
and update, whatever statement made them, byte for byte what ``model_dump_json`` writes; an
older table is made again with it, every row kept, when the store opens."""

from __future__ import annotations

import typing
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.schema import CreateTable

from relay_api import models as m
from relay_core.ports import TABLES, TableSpec, eq, in_
from relay_core.storage.schema import metadata
from relay_core.storage.sqlite import SqliteStorage, stored_json
from relay_core.storage.sqlite.driver import sqlite3
from tests.storage.test_sqlite_rows import NOW, bare_record, full_record, opened_for_samples

KEPT = [spec for spec in TABLES if stored_json.column(spec) is not None]


def kept(path: Path, table: str) -> dict[int, str | None]:
    """Each row's JSON as its column holds it, read past the adapter."""
    with sqlite3.connect(path) as db:
        rows = db.execute(f'SELECT rowid, "{stored_json.COLUMN}" FROM "{table}"').fetchall()
    return dict(rows)


def test_the_tasks_table_keeps_its_json() -> None:
    assert [spec.name for spec in KEPT] == ["tasks"]


@pytest.mark.parametrize("spec", KEPT, ids=[spec.name for spec in KEPT])
async def test_every_write_leaves_the_json_pydantic_writes(
    sqlite_url: str, spec: TableSpec
) -> None:
    storage = await opened_for_samples(sqlite_url)
    async with storage.unit_of_work(write=True) as uow:
        tasks = uow.tasks
        full = await tasks.insert(typing.cast(m.Task, full_record(spec)))
        bare = await tasks.insert(typing.cast(m.Task, bare_record(spec)))
        await uow.commit()

    async def answers() -> dict[int, str]:
        async with storage.unit_of_work(write=False) as uow:
            rows = await uow.tasks.find(in_("task_id", [full.task_id, bare.task_id]))
            return {task.task_id: task.model_dump_json() for task in rows}

    path = storage.path
    assert kept(path, "tasks") == await answers()

    later = NOW + timedelta(minutes=3)
    async with storage.unit_of_work(write=True) as uow:
        await uow.tasks.update(
            full.task_id,
            {"status": "claimed", "claimed_by": "ada", "lease_expires_at": later, "result": None},
        )
        await uow.tasks.update_where(
            [eq("task_id", bare.task_id)], {"progress": 40, "payload": {"é": [1, 2]}}
        )
        await uow.commit()
    assert kept(path, "tasks") == await answers()
    async with storage.unit_of_work(write=False) as uow:
        encoded = dict(await uow.tasks.find_encoded(in_("task_id", [full.task_id, bare.task_id])))
    assert encoded == await answers()

    # A row written past the adapter (a restore, the benchmark's seeding) gets its JSON too.
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO tasks (title, payload, priority, status, created_by, attempts, "
            "max_attempts, created_at, updated_at) VALUES ('raw', '{}', 0, 'open', 'operator', "
            "0, 1, '2026-11-22 21:35:25.000000', '2026-11-22 21:35:25.000000')"
        )
    rows = kept(path, "tasks")
    async with storage.unit_of_work(write=False) as uow:
        raw = await uow.tasks.get(max(rows))
    await storage.close()
    assert isinstance(raw, m.Task)
    assert rows[raw.task_id] == raw.model_dump_json()
    assert '"created_at":"2026-11-22T21:35:25Z"' in str(rows[raw.task_id])


async def test_opening_makes_an_older_table_again_with_its_json_and_every_row(
    sqlite_url: str,
) -> None:
    storage = SqliteStorage(sqlite_url)
    await storage.migrate()
    async with storage.unit_of_work(write=True) as uow:
        task = await uow.tasks.insert(typing.cast(m.Task, bare_record(KEPT[0])))
        await uow.task_events.insert(
            m.TaskEvent(task_id=task.task_id, kind="created", data={}, created_at=NOW)
        )
        await uow.commit()
    await storage.close()
    path = storage.path
    # As an older Relay left it: the table as the schema's revisions made it, no JSON column.
    table = metadata.tables["tasks"]
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA legacy_alter_table=ON")
        db.execute("ALTER TABLE tasks RENAME TO tasks_old")
        db.execute(str(CreateTable(table).compile(dialect=sqlite_dialect.dialect())))
        columns = ", ".join(f'"{column.name}"' for column in table.columns)
        db.execute(f"INSERT INTO tasks ({columns}) SELECT {columns} FROM tasks_old")
        db.execute("DROP TABLE tasks_old")
        db.execute("UPDATE tasks SET title = 'renamed'")
    assert stored_json.COLUMN not in kept_columns(path)

    reopened = SqliteStorage(sqlite_url)
    await reopened.migrate()
    async with reopened.unit_of_work(write=False) as uow:
        renamed = await uow.tasks.get(task.task_id)
        trail = await uow.task_events.find(eq("task_id", task.task_id))
    await reopened.close()
    assert renamed is not None and renamed.title == "renamed"
    assert kept(path, "tasks") == {task.task_id: renamed.model_dump_json()}
    assert [event.kind for event in trail] == ["created"]
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
        made, root = db.execute(
            "SELECT sql, rootpage FROM sqlite_master WHERE name = 'tasks'"
        ).fetchone()
        indexes = {row[1] for row in db.execute("PRAGMA index_list(tasks)")}
    assert made == stored_json.definition(KEPT[0], table)
    assert {index.name for index in table.indexes} <= indexes

    # Opened again with nothing to change, the table is left where it is (not made again).
    again = SqliteStorage(sqlite_url)
    await again.migrate()
    await again.close()
    with sqlite3.connect(path) as db:
        left = db.execute("SELECT sql, rootpage FROM sqlite_master WHERE name = 'tasks'")
        assert left.fetchone() == (made, root)


def kept_columns(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        return {row[1] for row in db.execute("PRAGMA table_xinfo(tasks)")}
