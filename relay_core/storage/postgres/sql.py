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
        self.get = f"SELECT {self.listed} FROM {self.name} WHERE {self.key} = $1"
        generated = tuple(c for c in self.columns if c != spec.key)
        self.insert_generated = self._insert(generated)
        self.insert_given = self._insert(self.columns)
        self.generated_columns = generated
        self._cache: dict[tuple[Any, ...], str] = {}

    def _insert(self, columns: tuple[str, ...]) -> str:
        """An insert of ``columns`` from $1 on."""
        names = [quote(c) for c in columns]
        marks = [f"${i}" for i in range(1, len(columns) + 1)]
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
    """A write held back (``Table.add``): its table, its record, and whether its key is
    generated."""

    sql: TableSql
    record: Any
    generated: bool


class Composed(NamedTuple):
    """One statement that inserts a run of held writes: its text, and where each parameter
    comes from (a held write's position, and its field)."""

    text: str
    params: tuple[tuple[int, str], ...]


def compose(shape: tuple[tuple[TableSql, bool], ...]) -> Composed:
    """The statement for held writes of this shape: one data-modifying CTE per write, each
    answering its key."""
    parts: list[str] = []
    params: list[tuple[int, str]] = []
    for position, (sql, generated) in enumerate(shape):
        values: list[str] = []
        for column in sql.generated_columns if generated else sql.columns:
            params.append((position, column))
            values.append(f"${len(params)}")
        columns = sql.generated_columns if generated else sql.columns
        parts.append(
            f"w{position} AS (INSERT INTO {sql.name} ({', '.join(quote(c) for c in columns)}) "
            f"VALUES ({', '.join(values)}) RETURNING {sql.key})"
        )
    keys = ", ".join(f"(SELECT {sql.key} FROM w{i})" for i, (sql, _) in enumerate(shape))
    return Composed(f"WITH {', '.join(parts)} SELECT {keys}", tuple(params))
