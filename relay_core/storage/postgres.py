"""PostgreSQL storage on SQLAlchemy 2.0 Core (async) through asyncpg.

Statements are built from the tables of ``schema.py``; Alembic revisions in ``migrations/``
create and upgrade them. Other instances are told of commits by LISTEN/NOTIFY, and rows of the
event feed become visible in id order under an advisory lock.
"""

from __future__ import annotations

import asyncio
import logging
import operator
import zlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Generic, TypeVar

from sqlalchemy import Column, Connection, Table, delete, func, insert, select, text, update
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine
from sqlalchemy.sql.elements import ColumnElement

from relay_core.errors import StaleWrite, StorageUnavailable
from relay_core.hub import Hub
from relay_core.ports import TABLES, Cond, Increment, R, TableSpec, UnitOfWork
from relay_core.storage.schema import metadata

log = logging.getLogger("relay.storage")

T = TypeVar("T")


_ORDERING = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge}


# PostgreSQL: the channel hints travel on, and the advisory locks that order commits.
CHANNEL = "relay"
ORDERED_COMMITS_LOCK = 0x72656C6179  # "relay": rows of ordered tables become visible in id order
MIGRATION_LOCK = 0x72656C6D67  # one instance migrates at a time


def _condition(table: Table, cond: Cond) -> ColumnElement[bool]:
    column: Column[Any] = table.c[cond.field]
    if cond.op == "eq":
        return column.is_(None) if cond.value is None else column == cond.value
    if cond.op == "ne":
        return column.is_not(None) if cond.value is None else column != cond.value
    if cond.op == "in":
        return column.in_(cond.value)
    compared: ColumnElement[bool] = _ORDERING[cond.op](column, cond.value)
    return compared


class _Transaction:
    """What the tables of one unit of work share: the connection and what to publish."""

    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn
        self.topics: set[str] = set()
        self.ordered = False

    async def order_commits(self) -> None:
        """Serialise transactions that insert into an ordered table until they commit, so ids
        are handed out in commit order and a cursor never skips a late row."""
        if not self.ordered:
            await self.conn.execute(
                text("SELECT pg_advisory_xact_lock(:key)"), {"key": ORDERED_COMMITS_LOCK}
            )
            self.ordered = True


class PgTable(Generic[R]):
    """One resource's rows, read and written inside a unit of work's connection."""

    def __init__(self, spec: TableSpec, table: Table, tx: _Transaction) -> None:
        self._spec = spec
        self._table = table
        self._key = table.c[spec.key]
        self._tx = tx
        self._conn = tx.conn

    def _record(self, row: Any) -> R:
        return self._spec.model.model_validate(dict(row._mapping))  # type: ignore[return-value]

    async def get(self, key: Any) -> R | None:
        row = (await self._conn.execute(select(self._table).where(self._key == key))).first()
        return self._record(row) if row is not None else None

    async def insert(self, record: R) -> R:
        values = {c.name: getattr(record, c.name) for c in self._table.columns}
        generated = self._spec.generated_key and not values[self._spec.key]
        if generated:
            del values[self._spec.key]
        if self._spec.ordered_commits:
            await self._tx.order_commits()
        try:
            result = await self._conn.execute(
                insert(self._table).values(**values).returning(self._key)
            )
        except IntegrityError as exc:
            raise StaleWrite(f"{self._spec.name}: {exc.orig}") from exc
        if generated:
            return record.model_copy(update={self._spec.key: result.scalar_one()})
        return record

    async def update(
        self, key: Any, values: Mapping[str, Any], *, expect: Mapping[str, Any] | None = None
    ) -> R | None:
        guards = [_condition(self._table, Cond(f, "eq", v)) for f, v in (expect or {}).items()]
        statement = (
            update(self._table)
            .where(self._key == key, *guards)
            .values(**self._resolve(values))
            .returning(*self._table.columns)
        )
        row = (await self._conn.execute(statement)).first()
        return self._record(row) if row is not None else None

    async def update_where(self, conds: Sequence[Cond], values: Mapping[str, Any]) -> int:
        statement = (
            update(self._table)
            .where(*(_condition(self._table, c) for c in conds))
            .values(**self._resolve(values))
        )
        result = await self._conn.execute(statement)
        return int(result.rowcount)

    async def delete_where(self, conds: Sequence[Cond]) -> int:
        statement = delete(self._table).where(*(_condition(self._table, c) for c in conds))
        result = await self._conn.execute(statement)
        return int(result.rowcount)

    def _resolve(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Update values with every ``Increment`` as ``column + n``, computed by the database."""
        return {
            field: self._table.c[field] + value.by if isinstance(value, Increment) else value
            for field, value in values.items()
        }

    async def find(
        self,
        *conds: Cond,
        order_by: str | None = None,
        descending: bool = False,
        limit: int | None = None,
        skip_locked: bool = False,
    ) -> list[R]:
        order = [self._table.c[order_by]] if order_by else []
        order.append(self._key)
        statement = select(self._table).where(*(_condition(self._table, c) for c in conds))
        statement = statement.order_by(*(c.desc() if descending else c.asc() for c in order))
        if limit is not None:
            statement = statement.limit(limit)
        if skip_locked:
            statement = statement.with_for_update(skip_locked=True)
        return [self._record(row) for row in await self._conn.execute(statement)]

    async def count(self, *conds: Cond) -> int:
        statement = select(func.count()).select_from(self._table)
        statement = statement.where(*(_condition(self._table, c) for c in conds))
        return int((await self._conn.execute(statement)).scalar_one())


# SQLSTATE classes of a server that cannot serve now, rather than of a statement that is wrong:
# 08 connection exception, 53 insufficient resources (disk full, out of memory, too many
# connections), 57 operator intervention (shutting down, cannot connect now), 58 system error.
_OUTAGE_CLASSES = ("08", "53", "57", "58")


# 40P01 deadlock detected, 40001 serialization failure: the transaction is rolled back and
# running it again is the remedy PostgreSQL documents.
_RETRY_STATES = ("40P01", "40001")


def _cause(exc: BaseException) -> BaseException:
    cause: BaseException = exc.orig if isinstance(exc, DBAPIError) and exc.orig else exc
    return cause.__cause__ or cause  # SQLAlchemy's adapter wraps asyncpg's


def _state(exc: BaseException) -> str:
    return str(getattr(_cause(exc), "sqlstate", "") or "")


def unavailable(exc: BaseException) -> StorageUnavailable | None:
    """The StorageUnavailable an error reaching or using PostgreSQL amounts to, if it is one
    of the server, its disk or the network rather than of a statement."""
    cause = _cause(exc)
    state = _state(exc)
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return StorageUnavailable("the connection to PostgreSQL was lost")
    if state[:2] in _OUTAGE_CLASSES:
        return StorageUnavailable(f"PostgreSQL cannot serve now: {cause}")
    if isinstance(cause, OSError | TimeoutError) or type(cause).__name__ == _DROPPED:
        return StorageUnavailable(f"PostgreSQL cannot be reached: {cause}")
    return None


_DROPPED = "ConnectionDoesNotExistError"  # asyncpg's: the server closed the connection


class PgUnitOfWork:
    """Every table over one connection and its transaction."""

    def __init__(self, conn: AsyncConnection, hub: Hub) -> None:
        self._tx = _Transaction(conn)
        self._hub = hub
        for spec in TABLES:
            setattr(self, spec.name, PgTable(spec, metadata.tables[spec.name], self._tx))

    def publish(self, topic: str) -> None:
        self._tx.topics.add(topic)

    async def commit(self) -> None:
        topics = sorted(self._tx.topics)
        # Sent by PostgreSQL at commit, to the listeners of every instance.
        for topic in topics:
            await self._tx.conn.execute(
                text("SELECT pg_notify(:channel, :topic)"), {"channel": CHANNEL, "topic": topic}
            )
        await self._tx.conn.commit()
        self._hub.publish(topics)
        self._tx.topics.clear()


class PostgresStorage:
    """Storage on a PostgreSQL database named by a SQLAlchemy URL (``postgresql+asyncpg://``)."""

    name = "postgresql"

    def __init__(
        self,
        url: str,
        *,
        connect_args: dict[str, Any] | None = None,
        hub: Hub | None = None,
    ) -> None:
        self.hub = hub or Hub()
        self._listener: asyncio.Task[None] | None = None
        self.listening = asyncio.Event()
        self.engine = create_async_engine(url, pool_pre_ping=True, connect_args=connect_args or {})

    @property
    def _asyncpg_dsn(self) -> str:
        """The database URL as asyncpg itself takes it (for connections outside the pool)."""
        return self.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)

    async def run_sync(self, work: Callable[[Connection], T]) -> T:
        """Run ``work`` on a (sync-facing) SQLAlchemy connection in a transaction, and commit
        (for migrations, and for tests that inspect the schema)."""
        async with self.engine.connect() as conn:
            result = await conn.run_sync(work)
            await conn.commit()
            return result

    async def migrate(self) -> None:
        """Bring the schema to the newest revision, keeping every stored row; one instance
        at a time."""
        from relay_core.storage.migrate import upgrade

        def locked_upgrade(conn: Connection) -> None:
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
            upgrade(conn)

        try:
            await self.run_sync(locked_upgrade)
        except (OSError, DBAPIError) as exc:
            raise (unavailable(exc) or exc) from exc

    async def listen(self) -> None:
        """Relay other instances' hints into this process's hub, on a dedicated connection
        outside the pool, reconnecting when it drops."""
        if self._listener is None:
            self._listener = asyncio.create_task(self._listen_forever(), name="relay-listen")

    async def _listen_forever(self) -> None:
        import asyncpg

        while True:
            try:
                conn = await asyncpg.connect(self._asyncpg_dsn)
            except (OSError, asyncpg.PostgresError) as exc:
                log.warning("cannot LISTEN for hints (%s); retrying in 1 s", exc)
                await asyncio.sleep(1)
                continue
            try:
                await self._listen_until_lost(conn)
                log.warning("the LISTEN connection dropped; reconnecting")
            finally:
                self.listening.clear()
                if not conn.is_closed():
                    await conn.close()

    async def _listen_until_lost(self, conn: Any) -> None:
        lost = asyncio.Event()
        conn.add_termination_listener(lambda _conn: lost.set())
        await conn.add_listener(CHANNEL, self._on_hint)
        self.listening.set()
        await lost.wait()

    def _on_hint(self, _conn: Any, _pid: int, _channel: str, topic: str) -> None:
        self.hub.publish([topic])

    @asynccontextmanager
    async def unit_of_work(self, *, write: bool) -> AsyncIterator[UnitOfWork]:
        try:
            async with self.engine.connect() as conn:
                await conn.begin()
                try:
                    yield PgUnitOfWork(conn, self.hub)  # type: ignore[misc]
                finally:
                    if conn.in_transaction():
                        await conn.rollback()
        except (OSError, DBAPIError) as exc:
            if _state(exc) in _RETRY_STATES:
                # A deadlock or serialization failure rolled the unit back; run it again.
                raise StaleWrite(f"PostgreSQL {_state(exc)}: the unit of work is retried") from exc
            translated = unavailable(exc)
            if translated is None:
                raise
            raise translated from exc

    @asynccontextmanager
    async def exclusive(self, name: str) -> AsyncIterator[bool]:
        """A session advisory lock on a connection of its own (released by the server if this
        process dies)."""
        import asyncpg

        try:
            conn = await asyncpg.connect(self._asyncpg_dsn)
        except (OSError, asyncpg.PostgresError) as exc:
            raise (unavailable(exc) or exc) from exc
        key = zlib.crc32(name.encode())
        try:
            mine = bool(await conn.fetchval("SELECT pg_try_advisory_lock($1)", key))
            yield mine
        finally:
            await conn.close()  # ends the session, and with it the lock

    async def close(self) -> None:
        self.hub.close()
        if self._listener is not None:
            self._listener.cancel()
            await asyncio.gather(self._listener, return_exceptions=True)
            self._listener = None
        await self.engine.dispose()
