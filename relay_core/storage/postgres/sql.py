"""Each table's SQL text, derived once at start from the tables of ``schema.py``, and the one
statement that inserts a run of held writes (data-modifying CTEs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from sqlalchemy import Table

from relay_core.ports import (
    TableSpec,
)
from relay_core.storage.conditions import (
    quote,
)
from relay_core.storage.rows import row_builder


class TableSql:
    """One table's statements, built once and shared by every connection."""

    def __init__(self, spec: TableSpec, table: Table) -> None:
        self.spec = spec
        self.name = quote(table.name)
        self.columns = tuple(c.name for c in table.columns)
        self.listed = ", ".join(quote(c) for c in self.columns)
        self.record: Callable[[Sequence[Any]], Any] = row_builder(spec.model, self.columns, {})
        self.key = quote(spec.key)
        self.key_position = self.columns.index(spec.key)
        self.feed = spec.feed_topic is not None
        # What a read of a feed may see: rows below the horizon (see FEED_FUNCTIONS).
        self.visible = f"{self.key} < relay_feed_horizon()" if self.feed else None
        self.get = f"SELECT {self.listed} FROM {self.name} WHERE {self.key} = $1"
        if self.visible:
            self.get += f" AND {self.visible}"
        generated = tuple(c for c in self.columns if c != spec.key)
        self.insert_generated = self._insert(generated, feed_key=self.feed)
        self.insert_given = self._insert(self.columns)
        self.generated_columns = generated
        self._cache: dict[tuple[Any, ...], str] = {}

    def _insert(self, columns: tuple[str, ...], *, feed_key: bool = False) -> str:
        """An insert of ``columns`` from $1 on; with ``feed_key``, of the key as well, drawn
        from the transaction and the row's ordinal (the last parameter)."""
        names = [quote(c) for c in columns]
        marks = [f"${i}" for i in range(1, len(columns) + 1)]
        if feed_key:
            names.append(self.key)
            marks.append(f"relay_feed_id(${len(columns) + 1})")
        listed = ", ".join(names)
        return (
            f"INSERT INTO {self.name} ({listed}) VALUES ({', '.join(marks)}) RETURNING {self.key}"
        )

    def cached(self, key: tuple[Any, ...], build: Callable[[], str]) -> str:
        """SQL text by its shape, built the first time the shape is seen."""
        sql = self._cache.get(key)
        if sql is None:
            sql = self._cache[key] = build()
        return sql


class Unsent(NamedTuple):
    """A write held back (``Table.add``, ``UnitOfWork.announce``): its table, its record,
    whether its key is generated, the position among the held writes of the record it names
    (``about``), and its ordinal in the feed if it adds a row to one."""

    sql: TableSql
    record: Any
    generated: bool
    about: int | None
    ordinal: int | None


class Composed(NamedTuple):
    """One statement that inserts a run of held writes: its text, and where each parameter
    comes from (a held write's position, and its field; None for its feed ordinal)."""

    text: str
    params: tuple[tuple[int, str | None], ...]


def compose(shape: tuple[tuple[TableSql, bool, int | None], ...]) -> Composed:
    """The statement for held writes of this shape: one data-modifying CTE per write, each
    answering its key; an event about an earlier write takes that write's key as
    ``ports.stamped`` gives it."""
    parts: list[str] = []
    params: list[tuple[int, str | None]] = []
    for position, (sql, generated, about) in enumerate(shape):
        named = shape[about][0] if about is not None else None  # the write an event is about
        key = f"(SELECT {named.key} FROM w{about})" if named else ""
        values: dict[str, str] = {}  # column → its value's SQL
        for column in sql.generated_columns if generated else sql.columns:
            if named and column == "subject_id":
                values[quote(column)] = f"{key}::text"
                continue
            params.append((position, column))
            values[quote(column)] = f"${len(params)}"
            if named and column == "data":
                values[quote(column)] = (
                    f"jsonb_build_object('{named.spec.key}', {key}) || ${len(params)}"
                )
        if generated and sql.feed:
            params.append((position, None))
            values[sql.key] = f"relay_feed_id(${len(params)})"
        parts.append(
            f"w{position} AS (INSERT INTO {sql.name} ({', '.join(values)}) "
            f"VALUES ({', '.join(values.values())}) RETURNING {sql.key})"
        )
    keys = ", ".join(f"(SELECT {sql.key} FROM w{i})" for i, (sql, _, _) in enumerate(shape))
    return Composed(f"WITH {', '.join(parts)} SELECT {keys}", tuple(params))
