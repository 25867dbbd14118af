"""Each table's verbs (``relay_core.ports.Table``) on one SQLite connection."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Generic

from relay_core.ports import Cond, Expect, R, StaleWrite, expected
from relay_core.storage import queries
from relay_core.storage.conditions import SQLITE, quote, shape, where
from relay_core.storage.sqlite.driver import sqlite3
from relay_core.storage.sqlite.search import SearchThreads, SqliteSearch
from relay_core.storage.sqlite.sql import NO_VALUES, Statement, TableSql, bound
from relay_core.storage.sqlite.statements import SqliteStatements
from relay_core.storage.stores import STORES, Store


class SqliteTable(Generic[R]):
    """One table's verbs on one connection; every call runs to completion without yielding."""

    def __init__(self, sql: TableSql, conn: sqlite3.Connection) -> None:
        self._sql = sql
        self._conn = conn

    async def get(self, key: Any) -> R | None:
        row = self._conn.execute(self._sql.get, (key,)).fetchone()
        return self._sql.record(row) if row is not None else None

    async def insert(self, record: R) -> R:
        sql = self._sql
        spec = sql.spec
        generated = spec.generated_key and not getattr(record, spec.key)
        columns = sql.generated_columns if generated else sql.columns
        try:
            cursor = self._conn.execute(sql.insert(columns), sql.insert_params(record, columns))
        except sqlite3.IntegrityError as exc:
            raise StaleWrite(f"{spec.name}: {exc}") from exc
        if generated:
            spec.keyed(record, cursor.lastrowid)
        return record

    async def add(self, record: R) -> None:
        await self.insert(record)

    async def update(
        self, key: Any, values: Mapping[str, Any], *, expect: Expect | None = None
    ) -> R | None:
        row = self._update(key, values, expect, self._sql.listed)
        return self._sql.record(row) if row is not None else None

    def _update(
        self, key: Any, values: Mapping[str, Any], expect: Expect | None, returning: str
    ) -> Any:
        """The row ``returning`` selects of the record updated, or None."""
        sql = self._sql
        guards = [Cond(sql.spec.key, "eq", key), *expected(expect)]
        update = sql.update(values, guards, returning)
        try:
            return self._conn.execute(update.text, update.params(values, guards)).fetchone()
        except sqlite3.IntegrityError as exc:
            raise StaleWrite(f"{sql.spec.name}: {exc}") from exc

    async def update_where(self, conds: Sequence[Cond], values: Mapping[str, Any]) -> int:
        update = self._sql.update(values, conds)
        return self._conn.execute(update.text, update.params(values, conds)).rowcount

    async def delete_where(self, conds: Sequence[Cond]) -> int:
        sql = self._sql
        delete = sql.statement(
            ("delete", shape(conds, SQLITE)),
            lambda: f"DELETE FROM {sql.name}{where(conds, SQLITE)}",
            conds,
        )
        return self._conn.execute(delete.text, delete.params(NO_VALUES, conds)).rowcount

    async def find(
        self,
        *conds: Cond,
        order_by: str | None = None,
        descending: bool = False,
        limit: int | None = None,
        skip_locked: bool = False,  # one writer runs write units one at a time: nothing is held
    ) -> list[R]:
        rows = self._select(self._sql.listed, conds, order_by, descending, limit)
        return [self._sql.record(row) for row in rows]

    async def find_values(
        self,
        fields: tuple[str, ...],
        *conds: Cond,
        order_by: str | None = None,
        descending: bool = False,
        limit: int | None = None,
        skip_locked: bool = False,
    ) -> list[tuple[Any, ...]]:
        sql = self._sql
        if any(field in sql.codecs for field in fields):  # so far only plain columns are asked
            raise ValueError(f"find_values reads columns without codecs, not {fields}")
        selected = ", ".join(quote(field) for field in fields)
        return self._select(selected, conds, order_by, descending, limit).fetchall()

    def _select_statement(
        self,
        selected: str,
        conds: Sequence[Cond],
        order_by: str | None,
        descending: bool,
        limited: bool,
    ) -> Statement:
        sql = self._sql

        def build() -> str:
            direction = " DESC" if descending else ""
            order = [quote(order_by)] if order_by else []
            order.append(sql.key)
            ordered = ", ".join(f"{column}{direction}" for column in order)
            bounded = f" LIMIT {bound()}" if limited else ""
            clause = where(conds, SQLITE)
            return f"SELECT {selected} FROM {sql.name}{clause} ORDER BY {ordered}{bounded}"

        key = ("select", selected, shape(conds, SQLITE), order_by, descending, limited)
        return sql.statement(key, build, conds)

    def _select(
        self,
        selected: str,
        conds: Sequence[Cond],
        order_by: str | None,
        descending: bool,
        limit: int | None,
    ) -> sqlite3.Cursor:
        select = self._select_statement(selected, conds, order_by, descending, limit is not None)
        params = select.params(NO_VALUES, conds)
        if limit is not None:
            params.append(limit)
        return self._conn.execute(select.text, params)

    async def count(self, *conds: Cond) -> int:
        sql = self._sql
        count = sql.statement(
            ("count", shape(conds, SQLITE)),
            lambda: f"SELECT count(*) FROM {sql.name}{where(conds, SQLITE)}",
            conds,
        )
        return int(self._conn.execute(count.text, count.params(NO_VALUES, conds)).fetchone()[0])

    async def count_by(self, field: str, *conds: Cond) -> dict[Any, int]:
        sql = self._sql
        count = sql.statement(
            ("count_by", field, shape(conds, SQLITE)),
            lambda: (
                f"SELECT {quote(field)}, count(*) FROM {sql.name}{where(conds, SQLITE)} "
                f"GROUP BY {quote(field)}"
            ),
            conds,
        )
        return dict(self._conn.execute(count.text, count.params(NO_VALUES, conds)).fetchall())

    async def newest_by(self, field: str, *conds: Cond) -> dict[Any, R]:
        sql = self._sql
        key = quote(sql.spec.key)
        select = sql.statement(
            ("newest_by", field, shape(conds, SQLITE)),
            lambda: (
                f"SELECT {sql.listed} FROM {sql.name} WHERE {key} IN "
                f"(SELECT max({key}) FROM {sql.name}{where(conds, SQLITE)} GROUP BY {quote(field)})"
            ),
            conds,
        )
        rows = self._conn.execute(select.text, select.params(NO_VALUES, conds))
        found = [sql.record(row) for row in rows]
        return {getattr(record, field): record for record in found}


# A unit of work's attributes: tables, stores of named statements, the search index.
Unit = dict[str, "SqliteTable[Any] | Store | SqliteSearch"]


def tables_on(
    sqls: dict[str, TableSql],
    statements: Mapping[str, queries.Statement],
    conn: sqlite3.Connection,
    searches: SearchThreads,
) -> Unit:
    """Every table's verbs and store on one connection, and the search index (searched on its
    own)."""
    named = SqliteStatements(statements, conn)
    stores: Unit = {name: store(named) for name, store in STORES.items()}
    tables: Unit = {
        name: SqliteTable(sql, conn) for name, sql in sqls.items() if name not in stores
    }
    return tables | stores | {"search_index": SqliteSearch(searches)}
