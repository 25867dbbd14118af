"""Tables whose rows keep their JSON: a column SQLite fills by trigger on every insert and update.

A page of tasks is read far more often than a task changes, and writing a row's JSON
(``json_object``, ``sql.json_object``) was most of a page's time: 100 tasks took 250 µs to
write and 36 µs to read back written. So the tasks table keeps each row's JSON in a column of
its own, written by SQLite itself after every insert and every update of the row, whatever
statement made them; a write of a task costs a few microseconds more.

The triggers are the adapter's, not a schema revision's: made when the store opens from the
models of the running code, and made again (the column refilled) when the SQL they would be
made of changed, so the stored JSON is always what this code's ``model_dump_json`` writes. A
table revision that rebuilds the table drops them; they are then made again in the same way.
"""

from __future__ import annotations

from sqlalchemy import Connection, Table

from relay_core.ports import TableSpec
from relay_core.storage.sqlite.sql import json_object, quote

COLUMN = "encoded"
TABLES = ("tasks",)


def column(spec: TableSpec) -> str | None:
    """The column that keeps the JSON of ``spec``'s rows, if its table keeps it."""
    return COLUMN if spec.name in TABLES else None


def triggers(spec: TableSpec, table: Table) -> dict[str, str]:
    """The triggers that keep ``table``'s JSON column, by name: the CREATE statements."""
    name, key = quote(table.name), quote(spec.key)
    columns = ", ".join(quote(column.name) for column in table.columns)
    refresh = f"UPDATE {name} SET {quote(COLUMN)} = {json_object(spec.model, table)}"
    row = f"WHERE {key} = NEW.{key}"
    return {
        f"{table.name}_json_inserted": (
            f'CREATE TRIGGER "{table.name}_json_inserted" AFTER INSERT ON {name} '
            f"BEGIN {refresh} {row}; END"
        ),
        # Of the model's columns only: the trigger's own write of the JSON fires nothing.
        f"{table.name}_json_updated": (
            f'CREATE TRIGGER "{table.name}_json_updated" AFTER UPDATE OF {columns} ON {name} '
            f"BEGIN {refresh} {row}; END"
        ),
    }


def keep(conn: Connection, spec: TableSpec, table: Table) -> None:
    """Give ``table`` its JSON column and the triggers of the running code; where they were
    missing or made of other SQL, write every row's JSON again."""
    present = {row[1] for row in conn.exec_driver_sql(f"PRAGMA table_info({quote(table.name)})")}
    if COLUMN not in present:
        conn.exec_driver_sql(f"ALTER TABLE {quote(table.name)} ADD COLUMN {quote(COLUMN)} TEXT")
    wanted = triggers(spec, table)
    prefix = f"{table.name}_json_"
    found = {
        name: sql
        for name, sql in conn.exec_driver_sql(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"
        )
        if name.startswith(prefix)
    }
    if found == wanted:
        return
    for name in found:
        conn.exec_driver_sql(f"DROP TRIGGER {quote(name)}")
    for statement in wanted.values():
        conn.exec_driver_sql(statement)
    encoded = json_object(spec.model, table)
    conn.exec_driver_sql(f"UPDATE {quote(table.name)} SET {quote(COLUMN)} = {encoded}")
