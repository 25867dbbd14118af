"""PostgreSQL storage on asyncpg: statements written once per table, prepared per connection.

Every table's SQL text is derived at start from the tables of ``schema.py`` (the tables Alembic
migrates, through SQLAlchemy, which is used for migrations only). Statements go to asyncpg as
text with ``$n`` parameters; asyncpg prepares each text once per connection and reuses it, so a
request pays for the round trips, not for building and planning statements. Rows become models
through the builders of ``rows.py``; JSON columns are (de)coded by orjson in asyncpg's codec.

Other instances are told of commits by LISTEN/NOTIFY, and rows of the event feed become visible
in id order under an advisory lock.
"""

from __future__ import annotations

import asyncio
import logging
import zlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Generic, TypeVar

from sqlalchemy import Connection, Table, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import create_async_engine

from relay_core.errors import StaleWrite, StorageUnavailable
from relay_core.hub import Hub
from relay_core.ports import TABLES, Cond, Increment, R, TableSpec, UnitOfWork
from relay_core.storage.rows import decode_json, encode_json, row_builder
from relay_core.storage.schema import metadata

try:  # the ``postgres`` extra; a SQLite-only install never loads this adapter
    import asyncpg
except ImportError:  # pragma: no cover
    asyncpg = None

log = logging.getLogger("relay.storage")
_INTEGRITY: type[Exception] | tuple[()] = (
    asyncpg.IntegrityConstraintViolationError if asyncpg is not None else ()
)

T = TypeVar("T")

_OPS = {"eq": "=", "ne": "<>", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}

# PostgreSQL: the channel hints travel on, and the advisory locks that order commits.
CHANNEL = "relay"
ORDERED_COMMITS_LOCK = 0x72656C6179  # "relay": rows of ordered tables become visible in id order
MIGRATION_LOCK = 0x72656C6D67  # one instance migrates at a time
POOL_SIZE = 20  # connections per process by default (RELAY_POSTGRES_POOL_SIZE)
_DIALECT = postgresql.dialect()  # type: ignore[no-untyped-call]  # column types' SQL names


def _q(name: str) -> str:
    return f'"{name}"'


class _Sql:
    """One table's statements, built once and shared by every connection."""

    def __init__(self, spec: TableSpec, table: Table) -> None:
        self.spec = spec
        self.name = _q(table.name)
        self.columns = tuple(c.name for c in table.columns)
        self.listed = ", ".join(_q(c) for c in self.columns)
        self.record: Callable[[Sequence[Any]], Any] = row_builder(spec.model, self.columns, {})
        self.get = f"SELECT {self.listed} FROM {self.name} WHERE {_q(spec.key)} = $1"
        generated = tuple(c for c in self.columns if c != spec.key)
        self.types = {c.name: c.type.compile(dialect=_DIALECT) for c in table.columns}
        self.insert_generated = self._insert(generated)
        self.insert_given = self._insert(self.columns)
        self.generated_columns = generated
        self._cache: dict[tuple[Any, ...], str] = {}

    def _insert(self, columns: tuple[str, ...]) -> str:
        names = ", ".join(_q(c) for c in columns)
        key = _q(self.spec.key)
        if not self.spec.ordered_commits:
            marks = ", ".join(f"${i}" for i in range(1, len(columns) + 1))
            return f"INSERT INTO {self.name} ({names}) VALUES ({marks}) RETURNING {key}"
        # The ordering lock is taken by the insert itself, before the key is drawn from its
        # sequence: one round trip. Typed, since a SELECT list does not take its target's types.
        typed = ", ".join(f"${i}::{self.types[c]}" for i, c in enumerate(columns, start=1))
        return (
            f"INSERT INTO {self.name} ({names}) SELECT {typed} "
            f"FROM (SELECT pg_advisory_xact_lock({ORDERED_COMMITS_LOCK})) AS ordered "
            f"RETURNING {key}"
        )

    def cached(self, key: tuple[Any, ...], build: Callable[[], str]) -> str:
        """SQL text by its shape, built the first time the shape is seen."""
        sql = self._cache.get(key)
        if sql is None:
            sql = self._cache[key] = build()
        return sql


def _where(conds: Sequence[Cond], first: int) -> tuple[str, list[Any]]:
    """A WHERE clause numbering its parameters from ``$first``, and the parameters."""
    parts: list[str] = []
    params: list[Any] = []
    for cond in conds:
        column = _q(cond.field)
        if cond.op in ("eq", "ne") and cond.value is None:
            parts.append(f"{column} IS {'NOT ' if cond.op == 'ne' else ''}NULL")
            continue
        params.append(list(cond.value) if cond.op == "in" else cond.value)
        mark = f"${first + len(params) - 1}"
        parts.append(
            f"{column} = ANY({mark})" if cond.op == "in" else f"{column} {_OPS[cond.op]} {mark}"
        )
    return (f" WHERE {' AND '.join(parts)}" if parts else ""), params


def _shape(conds: Sequence[Cond]) -> tuple[Any, ...]:
    return tuple((c.field, c.op, c.value is None) for c in conds)


def _assignments(values: Mapping[str, Any], first: int) -> tuple[str, list[Any]]:
    parts: list[str] = []
    params: list[Any] = []
    for i, (field, value) in enumerate(values.items(), start=first):
        if isinstance(value, Increment):
            parts.append(f"{_q(field)} = {_q(field)} + ${i}")
            params.append(value.by)
        else:
            parts.append(f"{_q(field)} = ${i}")
            params.append(value)
    return ", ".join(parts), params


class _Transaction:
    """What the tables of one unit of work share: the connection and what to publish."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.topics: set[str] = set()
        self.committed = False


class PgTable(Generic[R]):
    """One table's verbs on the connection of one unit of work.

    An insert into an ordered table (a feed read by cursor) first takes a transaction-level
    advisory lock, so such transactions hand out ids in commit order and a cursor never skips
    a row that commits late."""

    def __init__(self, sql: _Sql, tx: _Transaction) -> None:
        self._sql = sql
        self._tx = tx

    async def get(self, key: Any) -> R | None:
        row = await self._tx.conn.fetchrow(self._sql.get, key)
        return self._sql.record(row) if row is not None else None

    async def insert(self, record: R) -> R:
        sql = self._sql
        spec = sql.spec
        generated = spec.generated_key and not getattr(record, spec.key)
        columns = sql.generated_columns if generated else sql.columns
        statement = sql.insert_generated if generated else sql.insert_given
        try:
            key = await self._tx.conn.fetchval(
                statement, *(getattr(record, column) for column in columns)
            )
        except _INTEGRITY as exc:
            raise StaleWrite(f"{spec.name}: {exc}") from exc
        if generated:
            setattr(record, spec.key, key)
        return record

    async def update(
        self, key: Any, values: Mapping[str, Any], *, expect: Mapping[str, Any] | None = None
    ) -> R | None:
        sql = self._sql
        guards = [Cond(sql.spec.key, "eq", key)]
        guards += [Cond(f, "eq", v) for f, v in (expect or {}).items()]
        assigned, params = _assignments(values, 1)
        where, where_params = _where(guards, len(params) + 1)
        statement = sql.cached(
            ("update", tuple(values), _incremented(values), _shape(guards)),
            lambda: f"UPDATE {sql.name} SET {assigned}{where} RETURNING {sql.listed}",
        )
        try:
            row = await self._tx.conn.fetchrow(statement, *params, *where_params)
        except _INTEGRITY as exc:
            raise StaleWrite(f"{sql.spec.name}: {exc}") from exc
        return sql.record(row) if row is not None else None

    async def update_where(self, conds: Sequence[Cond], values: Mapping[str, Any]) -> int:
        sql = self._sql
        assigned, params = _assignments(values, 1)
        where, where_params = _where(conds, len(params) + 1)
        statement = sql.cached(
            ("update_where", tuple(values), _incremented(values), _shape(conds)),
            lambda: f"UPDATE {sql.name} SET {assigned}{where}",
        )
        return _affected(await self._tx.conn.execute(statement, *params, *where_params))

    async def delete_where(self, conds: Sequence[Cond]) -> int:
        sql = self._sql
        where, params = _where(conds, 1)
        statement = sql.cached(("delete", _shape(conds)), lambda: f"DELETE FROM {sql.name}{where}")
        return _affected(await self._tx.conn.execute(statement, *params))

    async def find(
        self,
        *conds: Cond,
        order_by: str | None = None,
        descending: bool = False,
        limit: int | None = None,
        skip_locked: bool = False,
    ) -> list[R]:
        sql = self._sql
        where, params = _where(conds, 1)
        if limit is not None:
            params.append(limit)

        def build() -> str:
            direction = " DESC" if descending else ""
            order = [_q(order_by)] if order_by else []
            order.append(_q(sql.spec.key))
            ordered = ", ".join(f"{column}{direction}" for column in order)
            bounded = f" LIMIT ${len(params)}" if limit is not None else ""
            locked = " FOR UPDATE SKIP LOCKED" if skip_locked else ""
            return f"SELECT {sql.listed} FROM {sql.name}{where} ORDER BY {ordered}{bounded}{locked}"

        key = ("find", _shape(conds), order_by, descending, limit is not None, skip_locked)
        statement = sql.cached(key, build)
        return [sql.record(row) for row in await self._tx.conn.fetch(statement, *params)]

    async def count(self, *conds: Cond) -> int:
        sql = self._sql
        where, params = _where(conds, 1)
        statement = sql.cached(
            ("count", _shape(conds)), lambda: f"SELECT count(*) FROM {sql.name}{where}"
        )
        return int(await self._tx.conn.fetchval(statement, *params))

    async def count_by(self, field: str, *conds: Cond) -> dict[Any, int]:
        sql = self._sql
        where, params = _where(conds, 1)
        statement = sql.cached(
            ("count_by", field, _shape(conds)),
            lambda: f"SELECT {_q(field)}, count(*) FROM {sql.name}{where} GROUP BY {_q(field)}",
        )
        return {row[0]: row[1] for row in await self._tx.conn.fetch(statement, *params)}

    async def newest_by(self, field: str, *conds: Cond) -> dict[Any, R]:
        sql = self._sql
        where, params = _where(conds, 1)
        statement = sql.cached(
            ("newest_by", field, _shape(conds)),
            lambda: (
                f"SELECT DISTINCT ON ({_q(field)}) {sql.listed} FROM {sql.name}{where} "
                f"ORDER BY {_q(field)}, {_q(sql.spec.key)} DESC"
            ),
        )
        found = [sql.record(row) for row in await self._tx.conn.fetch(statement, *params)]
        return {getattr(record, field): record for record in found}


def _incremented(values: Mapping[str, Any]) -> tuple[bool, ...]:
    return tuple(isinstance(v, Increment) for v in values.values())


def _affected(status: str) -> int:
    """The row count of a command tag such as ``UPDATE 3``."""
    return int(status.rsplit(" ", 1)[-1])


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


def _literal(value: str) -> str:
    """A string as an SQL literal (``standard_conforming_strings`` is on: quotes double)."""
    if "\x00" in value:
        raise ValueError("PostgreSQL text cannot hold NUL")
    return "'" + value.replace("'", "''") + "'"


class PgUnitOfWork:
    """Every table over one connection; a write unit's transaction is committed by ``commit``,
    a read unit runs each statement on its own (READ COMMITTED gives each statement its own
    snapshot either way)."""

    def __init__(self, conn: Any, sqls: Mapping[str, _Sql], hub: Hub) -> None:
        self._tx = _Transaction(conn)
        self._sqls = sqls
        self._hub = hub

    def __getattr__(self, name: str) -> PgTable[Any]:
        """A table, made on first use (a unit touches few of them)."""
        try:
            sql = self._sqls[name]
        except KeyError:
            raise AttributeError(name) from None
        table: PgTable[Any] = PgTable(sql, self._tx)
        setattr(self, name, table)
        return table

    def publish(self, topic: str) -> None:
        self._tx.topics.add(topic)

    async def commit(self) -> None:
        topics = sorted(self._tx.topics)
        # The hints are sent by PostgreSQL at commit, to the listeners of every instance; they
        # and the COMMIT go as one simple query (one round trip), hence literals.
        hints = "".join(f"SELECT pg_notify('{CHANNEL}', {_literal(t)});" for t in topics)
        await self._tx.conn.execute(f"{hints}COMMIT")
        self._tx.committed = True
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
        pool_size: int = POOL_SIZE,
        synchronous_commit: str | None = None,
    ) -> None:
        self.hub = hub or Hub()
        self._listener: asyncio.Task[None] | None = None
        self.listening = asyncio.Event()
        self._connect_args = connect_args or {}
        self._pool_size = pool_size
        # Per session, so it holds for Relay's connections only (None: the server's setting).
        self._pool_settings = {**self._connect_args.get("server_settings", {})}
        if synchronous_commit is not None:
            self._pool_settings["synchronous_commit"] = synchronous_commit
        # SQLAlchemy serves Alembic's migrations only; requests go through the asyncpg pool.
        self.engine = create_async_engine(url, pool_pre_ping=True, connect_args=self._connect_args)
        self._sqls = {spec.name: _Sql(spec, metadata.tables[spec.name]) for spec in TABLES}
        self._pool: Any = None
        self._pool_lock = asyncio.Lock()

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

    async def _connections(self) -> Any:
        """The pool, opened on first use (inside the event loop that will use it)."""
        async with self._pool_lock:
            if self._pool is None:
                self._pool = await asyncpg.create_pool(
                    self._asyncpg_dsn,
                    min_size=1,
                    max_size=self._pool_size,
                    init=_set_up_connection,
                    reset=_keep_session,
                    **(self._connect_args | {"server_settings": self._pool_settings}),
                )
        return self._pool

    @asynccontextmanager
    async def unit_of_work(self, *, write: bool) -> AsyncIterator[UnitOfWork]:
        try:
            pool = await self._connections()
            async with pool.acquire() as conn:
                uow = PgUnitOfWork(conn, self._sqls, self.hub)
                if not write:
                    yield uow  # type: ignore[misc]
                    return
                await conn.execute("BEGIN")
                try:
                    yield uow  # type: ignore[misc]
                finally:
                    if not uow._tx.committed and not conn.is_closed():
                        await conn.execute("ROLLBACK")
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
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
        if self._pool is not None:
            await self._pool.close()
            self._pool = None
        if self._listener is not None:
            self._listener.cancel()
            await asyncio.gather(self._listener, return_exceptions=True)
            self._listener = None
        await self.engine.dispose()


async def _keep_session(_conn: Any) -> None:
    """Nothing to reset on the way back to the pool: a unit of work leaves no session state
    (it commits or rolls back, and takes only transaction-level locks); asyncpg's default
    reset would cost a round trip per unit."""


async def _set_up_connection(conn: Any) -> None:
    """JSON columns as Python values, through the same codec as SQLite's."""
    for name in ("json", "jsonb"):
        await conn.set_type_codec(
            name, encoder=encode_json, decoder=decode_json, schema="pg_catalog", format="text"
        )
