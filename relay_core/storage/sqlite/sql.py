"""SQL text and codecs: each table's statements and the conversions between model values and
SQLite's, derived once at start from the tables of ``schema.py`` (the tables Alembic migrates).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple

from sqlalchemy import JSON, Boolean, Table

from relay_core.ports import Cond, TableSpec
from relay_core.storage.conditions import SQLITE, assignments, quote, shape, takes, where
from relay_core.storage.rows import (
    Decode,
    Encode,
    decode_json,
    encode_json,
    params_writer,
    row_builder,
)
from relay_core.storage.schema import UTCDateTime

NO_VALUES: Mapping[str, Any] = {}  # what a statement other than an UPDATE sets


def bound(parameter: str = "?") -> str:
    """A LIMIT's parameter, as an expression: the SQLite of pysqlite3 (3.51; not Debian's 3.40)
    reads a bare ``LIMIT ?``'s value when it plans, so binding it again prepares the statement
    again, 20 µs for a page of messages as JSON (docs/performance.md, "The SQLite library")."""
    return f"+{parameter}"


# A statement's parameters from its values (an UPDATE's) and its conditions.
StatementParams = Callable[[Mapping[str, Any], Sequence[Cond]], list[Any]]


# The last two times turned into text, by identity: a write stamps its rows with its own time
# (a claim has a second, its lease's end, between them), each written once, not per column.
_MIN = datetime.min.replace(tzinfo=UTC)
_recent: tuple[tuple[datetime, str], tuple[datetime, str]] = (
    (_MIN, "0001-01-01 00:00:00.000000"),
) * 2


def encode_datetime(value: datetime) -> str:
    # The text SQLAlchemy's SQLite dialect stores (naive UTC, always with microseconds), so
    # comparisons stay textual and rows written by either read the same.
    global _recent
    last, before = _recent
    if last[0] is value:
        return last[1]
    if before[0] is value:
        return before[1]
    utc = value if value.tzinfo is UTC else value.astimezone(UTC)
    text = utc.isoformat(" ", "microseconds")[:26]
    _recent = ((value, text), last)
    return text


def decode_datetime(value: str) -> datetime:
    return datetime.fromisoformat(value + "+00:00")


def _codecs(table: Table) -> dict[str, tuple[Encode, Decode]]:
    """How each column's values go in and come out, for the columns that need converting."""
    codecs: dict[str, tuple[Encode, Decode]] = {}
    for column in table.columns:
        if isinstance(column.type, UTCDateTime):
            codecs[column.name] = (encode_datetime, decode_datetime)
        elif isinstance(column.type, JSON):
            codecs[column.name] = (encode_json, decode_json)
        elif isinstance(column.type, Boolean):
            codecs[column.name] = (int, bool)
    return codecs


class TableSql:
    """One table's SQL text and codecs, built once and shared by every connection."""

    def __init__(self, spec: TableSpec, table: Table) -> None:
        self.spec = spec
        self.name = quote(table.name)
        self.columns = tuple(c.name for c in table.columns)
        self.generated_columns = tuple(c for c in self.columns if c != spec.key)
        self.listed = ", ".join(quote(c) for c in self.columns)
        self.codecs = codecs = _codecs(table)
        self._encoders = {column: encode for column, (encode, _) in codecs.items()}
        self.record: Callable[[Sequence[Any]], Any] = row_builder(spec.model, self.columns, codecs)
        self.get = f"SELECT {self.listed} FROM {self.name} WHERE {quote(spec.key)} = ?"
        self.key = quote(spec.key)
        self._cache: dict[tuple[Any, ...], str] = {}
        self._statements: dict[tuple[Any, ...], Statement] = {}
        self._params: dict[tuple[str, ...], Callable[[Any], list[Any]]] = {}

    def insert_params(self, record: Any, columns: tuple[str, ...]) -> list[Any]:
        """The parameters of ``insert(columns)`` for one record."""
        write = self._params.get(columns)
        if write is None:
            write = self._params[columns] = params_writer(columns, self._encoders)
        return write(record)

    def insert(self, columns: tuple[str, ...]) -> str:
        """INSERT text for these columns."""

        def build() -> str:
            names = ", ".join(quote(c) for c in columns)
            marks = ", ".join("?" for _ in columns)
            return f"INSERT INTO {self.name} ({names}) VALUES ({marks})"

        return self.cached(("insert", columns), build)

    def statement(
        self,
        key: tuple[Any, ...],
        build: Callable[[], str],
        conds: Sequence[Cond],
        values: Mapping[str, Any] = NO_VALUES,
    ) -> Statement:
        """The statement of a shape (``key``, which holds ``shape(conds)``): its text and the
        writer of its parameters, built the first time the shape is seen."""
        found = self._statements.get(key)
        if found is None:
            params = statement_params_writer(values, conds, self._encoders)
            found = self._statements[key] = Statement(build(), params)
        return found

    def update(
        self, values: Mapping[str, Any], conds: Sequence[Cond], returning: str | None = None
    ) -> Statement:
        """The UPDATE that sets ``values`` where ``conds`` hold (answering ``returning``)."""
        key = ("update", tuple(values), shape(conds, SQLITE), returning)

        def build() -> str:
            text = f"UPDATE {self.name} SET {assignments(values, SQLITE)}{where(conds, SQLITE)}"
            return text if returning is None else f"{text} RETURNING {returning}"

        return self.statement(key, build, conds, values)

    def cached(self, key: tuple[Any, ...], build: Callable[[], str]) -> str:
        """SQL text by its shape, built the first time the shape is seen (an INSERT's: its
        parameters come from ``insert_params``)."""
        sql = self._cache.get(key)
        if sql is None:
            sql = self._cache[key] = build()
        return sql


class Statement(NamedTuple):
    """A statement's text, and the function that writes its parameters from its values (an
    UPDATE's; ``NO_VALUES`` for any other) and its conditions."""

    text: str
    params: StatementParams


def statement_params_writer(
    values: Mapping[str, Any], conds: Sequence[Cond], encoders: Mapping[str, Encode]
) -> StatementParams:
    """A function from a statement's values (an UPDATE's; none for a read) and conditions to its
    parameters, written once per shape (as ``params_writer`` is for INSERTs): gathered by a call
    and a codec lookup per value, they took nearly twice as long to make ready for SQLite."""
    namespace: dict[str, Any] = {}
    items = []
    for i, field in enumerate(values):
        if field in encoders:
            namespace[f"encode_{i}"] = encoders[field]
            items.append(f"None if (v{i} := values[{field!r}]) is None else encode_{i}(v{i})")
        else:
            items.append(f"values[{field!r}]")
    for i, cond in enumerate(conds):
        kind = takes(cond, SQLITE)
        if kind == "none":  # IS (NOT) NULL
            continue
        value = f"conds[{i}].value"
        if cond.field in encoders:
            namespace[f"encode_c{i}"] = encoders[cond.field]
            if kind == "each":
                items.append(f"*[None if v is None else encode_c{i}(v) for v in {value}]")
            else:
                items.append(f"None if (c{i} := {value}) is None else encode_c{i}(c{i})")
        else:
            items.append(f"*{value}" if kind == "each" else value)
    source = f"def params(values, conds):\n    return [{', '.join(items)}]\n"
    exec(compile(source, f"<parameters of {', '.join(values) or 'conditions'}>", "exec"), namespace)
    params: StatementParams = namespace["params"]
    return params
