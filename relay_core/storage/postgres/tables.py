"""A table in a unit of work: its verbs as asyncpg statements, writes held back until the
unit's next statement or commit, and the transaction they share.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Generic, NamedTuple

from relay_core.ports import (
    Cond,
    Expect,
    R,
    StaleWrite,
    expected,
)
from relay_core.storage.conditions import (
    POSTGRES,
    assigned,
    assignments,
    parameters,
    quote,
    shape,
    where,
)
from relay_core.storage.postgres.driver import INTEGRITY
from relay_core.storage.postgres.feed import FEED_ORDINALS
from relay_core.storage.postgres.sql import Composed, TableSql, Unsent, compose
from relay_core.storage.queries import Statement
from relay_core.storage.rows import ThroughModels


class Held(NamedTuple):
    """A named statement held back (``Statements.add``): the statement, its parameters' values,
    and what is given the first column it answers once it has run."""

    statement: Statement
    values: list[Any]
    then: Callable[[Any], None] | None


class Transaction:
    """What the tables of one unit of work share: the connection, what to publish, how many
    feed rows it added, and the feeds it found rows held back in.

    A write unit begins its transaction only before its first statement, and holds back the
    writes nobody needs an answer to yet (``add``, ``Statements.add``) until then, or until it
    commits: a unit that only adds one row (a direct message and its event) sends it as one
    statement, its own transaction, with no BEGIN and no COMMIT (one round trip for a
    message, where there were four)."""

    def __init__(self, conn: Any, write: bool, composed: dict[Any, Composed]) -> None:
        self.conn = conn
        self.write = write
        self.begun = False
        self.unsent: list[Unsent] = []
        self.held: list[Held] = []
        self.composed = composed
        self.topics: set[str] = set()
        self.committed = False
        self.feed_rows = 0
        self.feeds_held_back: set[str] = set()
        self.feeds_read: set[str] = set()

    async def ready(self) -> Any:
        """The connection, ready for a statement of the unit: a write unit's transaction
        begun, and what it held back sent."""
        if self.write and not self.begun:
            await self.conn.execute("BEGIN")
            self.begun = True
        if self.unsent:
            await self.send_unsent()
        if self.held:
            await self.send_held()
        return self.conn

    def statements_held(self) -> int:
        """How many statements sending what is held back takes."""
        return len(self.held) + (1 if self.unsent else 0)

    async def send_unsent_alone(self) -> None:
        """Send the one statement held back, as its own transaction."""
        if self.unsent:
            await self.send_unsent()
        else:
            await self.send_held()

    async def send_held(self) -> None:
        """Run the named statements held back, in order; a run of one statement that answers
        to nobody goes as one ``executemany`` (one round trip: the events of an inbox's
        deliveries)."""
        held, self.held = self.held, []
        start = 0
        try:
            while start < len(held):
                first = held[start]
                end = start + 1
                if first.then is None:
                    while (
                        end < len(held)
                        and held[end].statement is first.statement
                        and held[end].then is None
                    ):
                        end += 1
                if end - start > 1:
                    rows = [h.values for h in held[start:end]]
                    await self.conn.executemany(first.statement.text, rows)
                else:
                    answer = await self.conn.fetchval(first.statement.text, *first.values)
                    if first.then is not None:
                        first.then(answer)
                start = end
        except INTEGRITY as exc:
            raise StaleWrite(f"{held[start].statement.name}: {exc}") from exc

    async def send_unsent(self) -> None:
        """Insert every held write in one statement, and set the keys they were given."""
        unsent, self.unsent = self.unsent, []
        shape = tuple((u.sql, u.generated) for u in unsent)
        composed = self.composed.get(shape)
        if composed is None:
            composed = self.composed[shape] = compose(shape)
        params = [getattr(unsent[position].record, field) for position, field in composed.params]
        try:
            keys = await self.conn.fetchrow(composed.text, *params)
        except INTEGRITY as exc:
            raise StaleWrite(f"{', '.join(u.sql.spec.name for u in unsent)}: {exc}") from exc
        for u, key in zip(unsent, keys, strict=True):
            if u.generated:
                u.sql.spec.keyed(u.record, key)

    def next_feed_ordinal(self) -> int:
        ordinal = self.feed_rows
        if ordinal >= FEED_ORDINALS:
            raise ValueError(f"a transaction adds at most {FEED_ORDINALS} rows to a feed")
        self.feed_rows += 1
        return ordinal


class PgTable(ThroughModels, Generic[R]):
    """One table's verbs on the connection of one unit of work.

    A feed's rows are keyed by their transaction and read below the horizon (see
    ``FEED_FUNCTIONS``); a read of a feed notes whether committed rows wait above it."""

    def __init__(self, sql: TableSql, tx: Transaction) -> None:
        self._sql = sql
        self._spec = sql.spec
        self._tx = tx

    async def get(self, key: Any) -> R | None:
        conn = await self._tx.ready()
        row = await conn.fetchrow(self._sql.get, key)
        return self._sql.record(row) if row is not None else None

    async def insert(self, record: R) -> R:
        sql = self._sql
        spec = sql.spec
        generated = spec.generated_key and not getattr(record, spec.key)
        columns = sql.generated_columns if generated else sql.columns
        statement = sql.insert_generated if generated else sql.insert_given
        values = [getattr(record, column) for column in columns]
        conn = await self._tx.ready()
        try:
            key = await conn.fetchval(statement, *values)
        except INTEGRITY as exc:
            raise StaleWrite(f"{spec.name}: {exc}") from exc
        if generated:
            spec.keyed(record, key)
        return record

    async def add(self, record: R) -> None:
        assert self._tx.write, "a read unit of work cannot write"
        sql = self._sql
        generated = sql.spec.generated_key and not getattr(record, sql.spec.key)
        self._tx.unsent.append(Unsent(sql, record, generated))

    async def update(
        self, key: Any, values: Mapping[str, Any], *, expect: Expect | None = None
    ) -> R | None:
        sql = self._sql
        guards = [Cond(sql.spec.key, "eq", key), *expected(expect)]
        statement = sql.cached(
            ("update", tuple(values), shape(guards, POSTGRES)),
            lambda: (
                f"UPDATE {sql.name} SET {assignments(values, POSTGRES)}"
                f"{where(guards, POSTGRES, len(values) + 1)} RETURNING {sql.listed}"
            ),
        )
        try:
            conn = await self._tx.ready()
            row = await conn.fetchrow(statement, *assigned(values), *parameters(guards, POSTGRES))
        except INTEGRITY as exc:
            raise StaleWrite(f"{sql.spec.name}: {exc}") from exc
        return sql.record(row) if row is not None else None

    async def update_where(self, conds: Sequence[Cond], values: Mapping[str, Any]) -> int:
        sql = self._sql
        statement = sql.cached(
            ("update_where", tuple(values), shape(conds, POSTGRES)),
            lambda: (
                f"UPDATE {sql.name} SET {assignments(values, POSTGRES)}"
                f"{where(conds, POSTGRES, len(values) + 1)}"
            ),
        )
        conn = await self._tx.ready()
        params = [*assigned(values), *parameters(conds, POSTGRES)]
        return affected(await conn.execute(statement, *params))

    async def delete_where(self, conds: Sequence[Cond]) -> int:
        sql = self._sql
        statement = sql.cached(
            ("delete", shape(conds, POSTGRES)),
            lambda: f"DELETE FROM {sql.name}{where(conds, POSTGRES)}",
        )
        conn = await self._tx.ready()
        return affected(await conn.execute(statement, *parameters(conds, POSTGRES)))

    async def find(
        self,
        *conds: Cond,
        order_by: str | None = None,
        descending: bool = False,
        limit: int | None = None,
        skip_locked: bool = False,
    ) -> list[R]:
        sql = self._sql
        params = parameters(conds, POSTGRES)
        if limit is not None:
            params.append(limit)

        def build() -> str:
            clause = where(conds, POSTGRES)
            direction = " DESC" if descending else ""
            order = [quote(order_by)] if order_by else []
            order.append(sql.key)
            ordered = ", ".join(f"{column}{direction}" for column in order)
            bounded = f" LIMIT ${len(params)}" if limit is not None else ""
            locked = " FOR UPDATE SKIP LOCKED" if skip_locked else ""
            found = (
                f"SELECT {sql.listed} FROM {sql.name}{clause} ORDER BY {ordered}{bounded}{locked}"
            )
            return found

        key = ("find", shape(conds, POSTGRES), order_by, descending, limit is not None, skip_locked)
        statement = sql.cached(key, build)
        conn = await self._tx.ready()
        rows = await conn.fetch(statement, *params)
        return [sql.record(row) for row in rows]

    async def count(self, *conds: Cond) -> int:
        sql = self._sql
        statement = sql.cached(
            ("count", shape(conds, POSTGRES)),
            lambda: f"SELECT count(*) FROM {sql.name}{where(conds, POSTGRES)}",
        )
        conn = await self._tx.ready()
        return int(await conn.fetchval(statement, *parameters(conds, POSTGRES)))

    async def count_by(self, field: str, *conds: Cond) -> dict[Any, int]:
        sql = self._sql
        statement = sql.cached(
            ("count_by", field, shape(conds, POSTGRES)),
            lambda: (
                f"SELECT {quote(field)}, count(*) FROM {sql.name}"
                f"{where(conds, POSTGRES)} GROUP BY {quote(field)}"
            ),
        )
        conn = await self._tx.ready()
        rows = await conn.fetch(statement, *parameters(conds, POSTGRES))
        return {row[0]: row[1] for row in rows}

    async def newest_by(self, field: str, *conds: Cond) -> dict[Any, R]:
        sql = self._sql
        statement = sql.cached(
            ("newest_by", field, shape(conds, POSTGRES)),
            lambda: (
                f"SELECT DISTINCT ON ({quote(field)}) {sql.listed} FROM {sql.name}"
                f"{where(conds, POSTGRES)} ORDER BY {quote(field)}, {sql.key} DESC"
            ),
        )
        conn = await self._tx.ready()
        rows = await conn.fetch(statement, *parameters(conds, POSTGRES))
        found = [sql.record(row) for row in rows]
        return {getattr(record, field): record for record in found}


def affected(status: str) -> int:
    """The row count of a command tag such as ``UPDATE 3``."""
    return int(status.rsplit(" ", 1)[-1])
