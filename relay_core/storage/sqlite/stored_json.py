"""Tables whose rows keep their JSON: a column SQLite computes as it writes each row.

A page of tasks is read far more often than a task changes, and writing each row's JSON
(``json_object``, ``sql.json_object``) was most of a page's time, several times what reading
it back written costs. So the tasks table keeps each row's JSON in a stored generated column
(``GENERATED ALWAYS AS (json_object(…)) STORED``): SQLite computes it within every insert and
update of the row, whatever statement makes them, and an update costs no more that can be
measured, where a second write of the row by a trigger did (the figures: docs/performance.md,
"Figures behind the code").

The column is the adapter's, not a schema revision's. SQLite cannot add a stored column to a
table, so when the store opens and the table's definition is not the one the running code's
models give (an older Relay's table, a model's field added, a revision that rebuilt the
table), the table is made again with it: renamed aside, created, its rows copied, the old one
dropped, its indexes and triggers made, in one transaction with foreign keys off (the rows
that reference tasks stay as they are). The column always holds what this code's
``model_dump_json`` writes.
"""

from __future__ import annotations

from sqlalchemy import Column, Computed, MetaData, Table, Text
from sqlalchemy.dialects import sqlite
from sqlalchemy.schema import CreateIndex, CreateTable

from relay_core.ports import TableSpec
from relay_core.storage.conditions import quote
from relay_core.storage.sqlite.driver import sqlite3
from relay_core.storage.sqlite.sql import json_object

COLUMN = "encoded"
TABLES = ("tasks",)


def column(spec: TableSpec) -> str | None:
    """The column that keeps the JSON of ``spec``'s rows, if its table keeps it."""
    return COLUMN if spec.name in TABLES else None


def definition(spec: TableSpec, table: Table) -> str:
    """The CREATE TABLE of ``table`` with its JSON column, as SQLite will keep its text."""
    kept = table.to_metadata(MetaData())
    computed = Computed(json_object(spec.model, table), persisted=True)
    kept.append_column(Column(COLUMN, Text, computed))
    return str(CreateTable(kept).compile(dialect=sqlite.dialect())).strip()


def keep(conn: sqlite3.Connection, spec: TableSpec, table: Table) -> None:
    """Make ``table`` again with the JSON column of the running code's models, keeping every
    row, unless it has it already. ``conn`` must be in no transaction: foreign keys are turned
    off around the rebuild (another table's rows reference these by key, and keep them)."""
    wanted = definition(spec, table)
    found = conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table.name,)
    ).fetchone()
    if found is not None and found[0] == wanted:
        return
    name, aside = quote(table.name), quote(f"{table.name}_before_json")
    columns = ", ".join(quote(c.name) for c in table.columns)
    # The table's triggers (search's, revision 0019) go with it when it is dropped: made again.
    triggers = [
        sql
        for (sql,) in conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?", (table.name,)
        )
    ]
    conn.execute("PRAGMA foreign_keys=OFF")
    # Renamed aside without rewriting the references other tables make to it by name.
    conn.execute("PRAGMA legacy_alter_table=ON")
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(f"ALTER TABLE {name} RENAME TO {aside}")
            conn.execute(wanted)
            conn.execute(f"INSERT INTO {name} ({columns}) SELECT {columns} FROM {aside}")
            conn.execute(f"DROP TABLE {aside}")  # and its indexes, made again below
            for index in table.indexes:
                conn.execute(str(CreateIndex(index).compile(dialect=sqlite.dialect())))
            for trigger in triggers:
                conn.execute(trigger)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    finally:
        conn.execute("PRAGMA legacy_alter_table=OFF")
        conn.execute("PRAGMA foreign_keys=ON")
