"""PostgreSQL storage on asyncpg: statements written once per table, prepared per connection.

Every table's SQL text is derived at start from the tables of ``schema.py`` (the tables Alembic
migrates, through SQLAlchemy, which is used for migrations only). Statements go to asyncpg as
text with ``$n`` parameters; asyncpg prepares each text once per connection and reuses it, so a
request pays for the round trips, not for building and planning statements. Rows become models
through the builders of ``rows.py``; JSON columns are (de)coded by orjson in asyncpg's codec.

Other instances are told of commits by LISTEN/NOTIFY. Rows of the event feed take their ids
from their transaction's id and become visible to readers once every older transaction has
ended (see ``FEED_FUNCTIONS``), so a cursor never skips a row that commits late.
"""

from __future__ import annotations

import asyncio
import logging
import zlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Generic, NamedTuple, TypeVar

import orjson
from pydantic import BaseModel
from sqlalchemy import Connection, Table, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import create_async_engine

from relay_api import models as m
from relay_api.errors import StorageUnavailable
from relay_core.config import POSTGRES_POOL_SIZE
from relay_core.hub import Hub
from relay_core.ports import (
    FEED,
    SPECS,
    TABLES,
    Cond,
    Expect,
    Increment,
    R,
    StaleWrite,
    TableSpec,
    UnitOfWork,
    expected,
    stamped,
)
from relay_core.storage.rows import ThroughModels, decode_json, encode_json, row_builder
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

_OPS = {"eq": "=", "ne": "<>", "lt": "<", "gt": ">"}

# PostgreSQL: the channel hints travel on, and the advisory lock of migrations.
CHANNEL = "relay"
MIGRATION_LOCK = 0x72656C6D67  # one instance migrates at a time

# A feed row's id is its transaction's id (xid8, which never wraps) times 2^16, plus the row's
# ordinal in its transaction, plus a base. Ids so grow in the order transactions began, not in
# the order they commit, and a read sees only ids below the horizon: the oldest transaction
# still running, scaled alike. Every transaction below it has ended and every one that has yet
# to add a row is at or above it, so nothing can later appear below a row a reader has seen,
# and no commit waits for another's. The horizon is STABLE so that it is taken from the
# snapshot of the statement that reads (a VOLATILE function would take a newer one). The base
# keeps ids rising when transaction ids start again lower, as in a dump restored into a new
# cluster: ``migrate`` raises it when it must, and only then.
FEED_ORDINALS = 1 << 16  # rows one transaction may add to a feed
OLDEST_SERVER = 130000  # server_version_num: pg_current_xact_id and pg_snapshot came in 13
HELD_POKE_FIRST, HELD_POKE_LONGEST = 0.005, 1.0  # seconds (see _poke_if_held)
FEED_FUNCTIONS = (
    "CREATE OR REPLACE FUNCTION relay_feed_base() RETURNS bigint LANGUAGE sql STABLE "
    "AS $$ SELECT {base}::bigint $$",
    "CREATE OR REPLACE FUNCTION relay_feed_id(ordinal integer) RETURNS bigint LANGUAGE sql STABLE "
    f"AS $$ SELECT pg_current_xact_id()::text::bigint * {FEED_ORDINALS} + ordinal "
    "+ relay_feed_base() $$",
    "CREATE OR REPLACE FUNCTION relay_feed_horizon() RETURNS bigint LANGUAGE sql STABLE "
    f"AS $$ SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint * {FEED_ORDINALS} "
    "+ relay_feed_base() $$",
)


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
        self.key = _q(spec.key)
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
        names = [_q(c) for c in columns]
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


def _where(conds: Sequence[Cond], first: int, also: str | None = None) -> tuple[str, list[Any]]:
    """A WHERE clause numbering its parameters from ``$first``, with ``also`` if given, and
    the parameters."""
    parts: list[str] = [also] if also else []
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


class _Unsent(NamedTuple):
    """A write held back (``Table.add``, ``UnitOfWork.announce``): its table, its record,
    whether its key is generated, the position among the held writes of the record it names
    (``about``), and its ordinal in the feed if it adds a row to one."""

    sql: _Sql
    record: Any
    generated: bool
    about: int | None
    ordinal: int | None


class _Composed(NamedTuple):
    """One statement that inserts a run of held writes: its text, and where each parameter
    comes from (a held write's position, and its field; None for its feed ordinal)."""

    text: str
    params: tuple[tuple[int, str | None], ...]


def _compose(shape: tuple[tuple[_Sql, bool, int | None], ...]) -> _Composed:
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
                values[_q(column)] = f"{key}::text"
                continue
            params.append((position, column))
            values[_q(column)] = f"${len(params)}"
            if named and column == "data":
                values[_q(column)] = (
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
    return _Composed(f"WITH {', '.join(parts)} SELECT {keys}", tuple(params))


class _Transaction:
    """What the tables of one unit of work share: the connection, what to publish, how many
    feed rows it added, and the feeds it found rows held back in.

    A write unit begins its transaction only before its first statement, and holds back the
    writes nobody needs an answer to yet (``add``, ``announce``) until then, or until it
    commits: a unit that only adds rows sends them as one statement, its own transaction,
    with no BEGIN and no COMMIT (one round trip for a message, where there were four)."""

    def __init__(self, conn: Any, write: bool, composed: dict[Any, _Composed]) -> None:
        self.conn = conn
        self.write = write
        self.begun = False
        self.unsent: list[_Unsent] = []
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
        return self.conn

    async def send_unsent(self) -> None:
        """Insert every held write in one statement, and set the keys they were given."""
        unsent, self.unsent = self.unsent, []
        shape = tuple((u.sql, u.generated, u.about) for u in unsent)
        composed = self.composed.get(shape)
        if composed is None:
            composed = self.composed[shape] = _compose(shape)
        params = [
            unsent[position].ordinal if field is None else getattr(unsent[position].record, field)
            for position, field in composed.params
        ]
        try:
            keys = await self.conn.fetchrow(composed.text, *params)
        except _INTEGRITY as exc:
            raise StaleWrite(f"{', '.join(u.sql.spec.name for u in unsent)}: {exc}") from exc
        for u, key in zip(unsent, keys, strict=True):
            if u.generated:
                setattr(u.record, u.sql.spec.key, key)
            if u.about is not None:
                stamped(u.record, unsent[u.about].record)

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

    def __init__(self, sql: _Sql, tx: _Transaction) -> None:
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
        if generated and sql.feed:
            values.append(self._tx.next_feed_ordinal())
        conn = await self._tx.ready()
        try:
            key = await conn.fetchval(statement, *values)
        except _INTEGRITY as exc:
            raise StaleWrite(f"{spec.name}: {exc}") from exc
        if generated:
            setattr(record, spec.key, key)
        return record

    async def add(self, record: R) -> None:
        self._tx.unsent.append(self.unsent(record, None))

    def unsent(self, record: Any, about: int | None) -> _Unsent:
        """``record`` as a write held back, naming the held write at ``about`` if given."""
        assert self._tx.write, "a read unit of work cannot write"
        sql = self._sql
        generated = sql.spec.generated_key and not getattr(record, sql.spec.key)
        ordinal = self._tx.next_feed_ordinal() if generated and sql.feed else None
        return _Unsent(sql, record, generated, about, ordinal)

    async def update(
        self, key: Any, values: Mapping[str, Any], *, expect: Expect | None = None
    ) -> R | None:
        sql = self._sql
        guards = [Cond(sql.spec.key, "eq", key), *expected(expect)]
        assigned, params = _assignments(values, 1)
        where, where_params = _where(guards, len(params) + 1)
        statement = sql.cached(
            ("update", tuple(values), _incremented(values), _shape(guards)),
            lambda: f"UPDATE {sql.name} SET {assigned}{where} RETURNING {sql.listed}",
        )
        try:
            conn = await self._tx.ready()
            row = await conn.fetchrow(statement, *params, *where_params)
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
        conn = await self._tx.ready()
        return _affected(await conn.execute(statement, *params, *where_params))

    async def delete_where(self, conds: Sequence[Cond]) -> int:
        sql = self._sql
        where, params = _where(conds, 1)
        statement = sql.cached(("delete", _shape(conds)), lambda: f"DELETE FROM {sql.name}{where}")
        conn = await self._tx.ready()
        return _affected(await conn.execute(statement, *params))

    async def find(
        self,
        *conds: Cond,
        order_by: str | None = None,
        descending: bool = False,
        limit: int | None = None,
        skip_locked: bool = False,
    ) -> list[R]:
        sql = self._sql
        where, params = _where(conds, 1, sql.visible)
        if limit is not None:
            params.append(limit)

        def build() -> str:
            direction = " DESC" if descending else ""
            order = [_q(order_by)] if order_by else []
            order.append(sql.key)
            ordered = ", ".join(f"{column}{direction}" for column in order)
            bounded = f" LIMIT ${len(params)}" if limit is not None else ""
            locked = " FOR UPDATE SKIP LOCKED" if skip_locked else ""
            found = (
                f"SELECT {sql.listed} FROM {sql.name}{where} ORDER BY {ordered}{bounded}{locked}"
            )
            if not sql.feed:
                return found
            # With the page, in the same snapshot: whether committed rows wait above the
            # horizon (one row of NULLs and the answer when the page is empty).
            return (
                f"SELECT {sql.listed}, held FROM (SELECT EXISTS (SELECT 1 FROM {sql.name} "
                f"WHERE {sql.key} >= relay_feed_horizon()) AS held) AS horizon "
                f"LEFT JOIN LATERAL ({found}) AS page ON true ORDER BY {ordered}"
            )

        key = ("find", _shape(conds), order_by, descending, limit is not None, skip_locked)
        statement = sql.cached(key, build)
        conn = await self._tx.ready()
        rows = await conn.fetch(statement, *params)
        if sql.feed:
            self._note_feed_read(bool(rows[0][-1]))
            rows = [row for row in rows if row[sql.key_position] is not None]
        return [sql.record(row) for row in rows]

    def _note_feed_read(self, held_back: bool) -> None:
        topic = self._sql.spec.feed_topic
        assert topic is not None
        self._tx.feeds_read.add(topic)
        if held_back:
            self._tx.feeds_held_back.add(topic)

    async def count(self, *conds: Cond) -> int:
        sql = self._sql
        where, params = _where(conds, 1, sql.visible)
        statement = sql.cached(
            ("count", _shape(conds)), lambda: f"SELECT count(*) FROM {sql.name}{where}"
        )
        conn = await self._tx.ready()
        return int(await conn.fetchval(statement, *params))

    async def count_by(self, field: str, *conds: Cond) -> dict[Any, int]:
        sql = self._sql
        where, params = _where(conds, 1, sql.visible)
        statement = sql.cached(
            ("count_by", field, _shape(conds)),
            lambda: f"SELECT {_q(field)}, count(*) FROM {sql.name}{where} GROUP BY {_q(field)}",
        )
        conn = await self._tx.ready()
        return {row[0]: row[1] for row in await conn.fetch(statement, *params)}

    async def newest_by(self, field: str, *conds: Cond) -> dict[Any, R]:
        sql = self._sql
        where, params = _where(conds, 1, sql.visible)
        statement = sql.cached(
            ("newest_by", field, _shape(conds)),
            lambda: (
                f"SELECT DISTINCT ON ({_q(field)}) {sql.listed} FROM {sql.name}{where} "
                f"ORDER BY {_q(field)}, {sql.key} DESC"
            ),
        )
        conn = await self._tx.ready()
        found = [sql.record(row) for row in await conn.fetch(statement, *params)]
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


# What using a connection can raise when PostgreSQL or the way to it fails (asyncpg's
# InternalClientError: a statement sent on a connection whose protocol failed or is still
# reading the error that ended it, as in a fast shutdown of PostgreSQL).
_BROKEN = (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError)


async def _roll_back(conn: Any) -> None:
    """End a unit's transaction that was not committed. On a connection that broke (PostgreSQL
    shutting down mid-unit), the ROLLBACK fails too: the connection is dropped, so the pool
    opens a new one, and the error that ended the unit is the one that counts."""
    try:
        await conn.execute("ROLLBACK")
    except _BROKEN:
        conn.terminate()


def unavailable(exc: BaseException) -> StorageUnavailable | None:
    """The StorageUnavailable an error reaching or using PostgreSQL amounts to, if it is one
    of the server, its disk or the network rather than of a statement."""
    cause = _cause(exc)
    state = _state(exc)
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return StorageUnavailable("the connection to PostgreSQL was lost")
    if isinstance(cause, asyncpg.InternalClientError):  # its protocol failed, or is failing
        return StorageUnavailable("the connection to PostgreSQL was lost", for_the_log=str(cause))
    if state[:2] in _OUTAGE_CLASSES:
        return StorageUnavailable(f"PostgreSQL cannot serve now: {cause}")
    if isinstance(cause, OSError | TimeoutError) or type(cause).__name__ == _DROPPED:
        return StorageUnavailable("PostgreSQL cannot be reached", for_the_log=str(cause))
    return None


_DROPPED = "ConnectionDoesNotExistError"  # asyncpg's: the server closed the connection


def _install_feed_functions(conn: Connection) -> None:
    """Define the feeds' functions (see ``FEED_FUNCTIONS``). The base is raised only when a
    feed holds an id that a transaction starting now could draw again (transaction ids
    started lower than the ids stored: a restored dump); it never goes down."""
    version = int(conn.execute(text("SHOW server_version_num")).scalar() or 0)
    if version < OLDEST_SERVER:
        raise RuntimeError(f"Relay needs PostgreSQL 13 or newer; this server is {version}")
    defined = conn.execute(text("SELECT to_regproc('relay_feed_base') IS NOT NULL")).scalar()
    current = int(conn.execute(text("SELECT relay_feed_base()")).scalar() or 0) if defined else 0
    base = current
    for spec in TABLES:
        if spec.feed_topic is None:
            continue
        # Committed rows are below the snapshot's xmax; later transactions draw ids above it.
        needed = conn.execute(
            text(
                f"SELECT max({_q(spec.key)}) + 1 - pg_snapshot_xmax(pg_current_snapshot())"
                f"::text::bigint * {FEED_ORDINALS} FROM {_q(spec.name)}"
            )
        ).scalar()
        base = max(base, int(needed or 0))
    if not defined or base > current:
        for statement in FEED_FUNCTIONS:
            conn.execute(text(statement.format(base=base)))


class _HintSender:
    """Tells other instances which topics commits touched: after the commits, on a connection
    of its own, all the topics that arrived while the last NOTIFY was being sent in the next
    one. A NOTIFY inside each transaction instead would cost every commit PostgreSQL's
    notification lock and every listener a wake-up per commit (docs/performance.md has what it
    cost). A hint lost on the way (a crash, a dropped connection) costs
    a waiter elsewhere its next re-poll, as any lost hint does."""

    PAYLOAD_BYTES = 7000  # under NOTIFY's 8,000-byte payload limit

    def __init__(self, dsn: str) -> None:
        self._dsn = dsn
        self._unsent: set[str] = set()
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.pid: int | None = None  # the sending session's, so an instance skips its own

    def send(self, topics: set[str]) -> None:
        self._unsent |= topics
        self._ready.set()
        if self._task is None:
            self._task = asyncio.create_task(self._send_forever(), name="relay-hints")

    async def _send_forever(self) -> None:
        conn: Any = None
        failing = False
        try:
            while True:
                await self._ready.wait()
                try:
                    if conn is None or conn.is_closed():
                        conn = await asyncpg.connect(self._dsn)
                        self.pid = conn.get_server_pid()
                    self._ready.clear()
                    topics, self._unsent = self._unsent, set()
                    for payload in self._payloads(sorted(topics)):
                        await conn.execute("SELECT pg_notify($1, $2)", CHANNEL, payload)
                    failing = False
                except _BROKEN as exc:
                    if not failing:  # once an outage, not once a second
                        log.warning("cannot send hints to other instances (%s); retrying", exc)
                    failing = True
                    if conn is not None and not conn.is_closed():
                        conn.terminate()
                    conn = None
                    await asyncio.sleep(1)
        finally:
            if conn is not None and not conn.is_closed():
                await conn.close()

    def _payloads(self, topics: list[str]) -> list[str]:
        payloads: list[str] = []
        batch: list[str] = []
        size = 0
        for topic in topics:
            encoded = len(orjson.dumps(topic)) + 1  # with its comma
            if batch and size + encoded > self.PAYLOAD_BYTES:
                payloads.append(orjson.dumps(batch).decode())
                batch, size = [], 0
            batch.append(topic)
            size += encoded
        if batch:
            payloads.append(orjson.dumps(batch).decode())
        return payloads

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None


_COMMIT_NOT_WAITING = "SET LOCAL synchronous_commit = off; COMMIT"


class PgUnitOfWork:
    """Every table over one connection; a write unit's transaction is committed by ``commit``,
    a read unit runs each statement on its own (READ COMMITTED gives each statement its own
    snapshot either way)."""

    def __init__(
        self,
        tx: _Transaction,
        sqls: Mapping[str, _Sql],
        hub: Hub,
        hints: _HintSender,
    ) -> None:
        self._tx = tx
        self._sqls = sqls
        self._hub = hub
        self._hints = hints

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

    async def announce(self, event: m.Event, *, about: BaseModel | None = None) -> None:
        unsent = self._tx.unsent
        position = None
        if about is not None:
            if getattr(about, SPECS[type(about)].key):
                event = stamped(event, about)
            else:
                position = next((i for i, u in enumerate(unsent) if u.record is about), None)
                if position is None:
                    raise ValueError("an event is about a record this unit added, or a stored one")
        unsent.append(self.events.unsent(event, position))
        self.publish(FEED)

    async def flush(self) -> None:
        await self._tx.ready()

    async def commit(self, *, durable: bool = True) -> None:
        tx = self._tx
        if tx.begun or (tx.unsent and not durable):
            conn = await tx.ready()
            # Not durable is PostgreSQL's own setting: the COMMIT does not wait for the WAL's
            # flush.
            await conn.execute("COMMIT" if durable else _COMMIT_NOT_WAITING)
        elif tx.unsent:
            await tx.send_unsent()  # alone, the statement is its own transaction
        tx.committed = True
        topics = tx.topics
        if topics:
            self._hub.publish(topics)
            self._hints.send(topics)
        tx.topics = set()


class PostgresStorage:
    """Storage on a PostgreSQL database named by a SQLAlchemy URL (``postgresql+asyncpg://``)."""

    name = "postgresql"

    def __init__(
        self,
        url: str,
        *,
        connect_args: dict[str, Any] | None = None,
        hub: Hub | None = None,
        pool_size: int = POSTGRES_POOL_SIZE,
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
        self._composed: dict[Any, _Composed] = {}  # held writes' statements, by their shape
        self._pool: Any = None
        self._pool_lock = asyncio.Lock()
        self._held_reads: dict[str, int] = {}  # feed topic → reads in a row that found rows held
        self._pokes: dict[str, asyncio.TimerHandle] = {}
        self._hints = _HintSender(self._asyncpg_dsn)

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
            _install_feed_functions(conn)

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
        failing = False
        while True:
            try:
                conn = await asyncpg.connect(self._asyncpg_dsn)
            except _BROKEN as exc:
                if not failing:  # once an outage, not once a second
                    log.warning("cannot LISTEN for hints (%s); retrying every second", exc)
                failing = True
                await asyncio.sleep(1)
                continue
            if failing:
                log.info("listening for hints again")
                failing = False
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

    def _on_hint(self, _conn: Any, pid: int, _channel: str, payload: str) -> None:
        if pid != self._hints.pid:  # this process's own were published at their commits
            self.hub.publish(orjson.loads(payload))

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
                tx = _Transaction(conn, write, self._composed)
                uow = PgUnitOfWork(tx, self._sqls, self.hub, self._hints)
                if not write:
                    yield uow  # type: ignore[misc]
                    self._poke_if_held(tx)
                    return
                try:
                    yield uow  # type: ignore[misc]
                finally:
                    if tx.begun and not tx.committed and not conn.is_closed():
                        await _roll_back(conn)
        except _BROKEN as exc:
            if _state(exc) in _RETRY_STATES:
                # A deadlock or serialization failure rolled the unit back; run it again.
                raise StaleWrite(f"PostgreSQL {_state(exc)}: the unit of work is retried") from exc
            translated = unavailable(exc)
            if translated is None:
                raise
            raise translated from exc

    def _poke_if_held(self, tx: _Transaction) -> None:
        """Wake a feed's readers again soon if a read found committed rows held back above the
        horizon: the older transaction they wait for may end without a hint (it added no row).
        The delay doubles while rows stay held (an old transaction of another application can
        hold them for long), from 5 ms to 1 s."""
        for topic in tx.feeds_read - tx.feeds_held_back:
            self._held_reads.pop(topic, None)
        for topic in tx.feeds_held_back - self._pokes.keys():
            reads = self._held_reads.get(topic, 0)
            self._held_reads[topic] = reads + 1
            delay = min(HELD_POKE_LONGEST, HELD_POKE_FIRST * 2**reads)
            self._pokes[topic] = asyncio.get_running_loop().call_later(delay, self._poke, topic)

    def _poke(self, topic: str) -> None:
        del self._pokes[topic]
        self.hub.publish([topic])

    @asynccontextmanager
    async def exclusive(self, name: str) -> AsyncIterator[bool]:
        """A session advisory lock on a connection of its own (released by the server if this
        process dies)."""
        try:
            conn = await asyncpg.connect(self._asyncpg_dsn)
        except _BROKEN as exc:
            raise (unavailable(exc) or exc) from exc
        key = zlib.crc32(name.encode())
        try:
            mine = bool(await conn.fetchval("SELECT pg_try_advisory_lock($1)", key))
            yield mine
        finally:
            await conn.close()  # ends the session, and with it the lock

    async def close(self) -> None:
        self.hub.close()
        await self._hints.close()
        for poke in self._pokes.values():
            poke.cancel()
        self._pokes.clear()
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
