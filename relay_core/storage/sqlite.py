"""SQLite storage: one writer connection with group commit, reads on connections of their own.

SQLite lets one connection write at a time however many ask, and a writer that waits for its
lock sleeps in the busy handler. So writes in this process never compete for it: every write
unit of work runs, one after another, inside the one open transaction of the writer connection,
each in a SAVEPOINT of its own (a unit that fails rolls back alone). A unit's ``commit()``
returns only once the transaction holding it is durable. The transaction commits as soon as no
unit is mid-way, so the units that arrived while the previous COMMIT was being flushed to disk
share the next one: group commit, one fsync for many writes, each answered only after it.

Statements are short and indexed, and run synchronously on the event loop: a thread hop costs
more than most of them. The one slow step, COMMIT with its fsync, runs on a thread of its own.
Reads run on separate ``query_only`` connections, each unit in a read transaction of its own,
so they see committed rows only and never wait for the writer (WAL).

The SQL text and the codecs between model values and SQLite values are derived once, at start,
from the tables of ``schema.py`` — the tables Alembic migrates.
"""

from __future__ import annotations

import asyncio
import fcntl
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Generic, TextIO, TypeVar

from sqlalchemy import JSON, Boolean, Connection, Table, create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from relay_core.errors import StaleWrite, StorageUnavailable
from relay_core.hub import Hub
from relay_core.ports import TABLES, Cond, Increment, R, TableSpec, UnitOfWork
from relay_core.storage.locks import ProcessLocks
from relay_core.storage.rows import Decode, Encode, decode_json, encode_json, row_builder
from relay_core.storage.schema import UTCDateTime, metadata

log = logging.getLogger("relay.storage")

T = TypeVar("T")

_OPS = {"eq": "=", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_BUSY_BACKOFF_SECONDS = 0.002
CHECKPOINT_SECONDS = 1.0
WAL_BACKSTOP_PAGES = 10_000


def _encode_datetime(value: datetime) -> str:
    # The text SQLAlchemy's SQLite dialect stores (naive UTC, always with microseconds), so
    # comparisons stay textual and rows written by either read the same.
    if value.tzinfo is not UTC:
        value = value.astimezone(UTC)
    return value.isoformat(" ", "microseconds")[:26]


def _decode_datetime(value: str) -> datetime:
    return datetime.fromisoformat(value + "+00:00")


def _codecs(table: Table) -> dict[str, tuple[Encode, Decode]]:
    """How each column's values go in and come out, for the columns that need converting."""
    codecs: dict[str, tuple[Encode, Decode]] = {}
    for column in table.columns:
        if isinstance(column.type, UTCDateTime):
            codecs[column.name] = (_encode_datetime, _decode_datetime)
        elif isinstance(column.type, JSON):
            codecs[column.name] = (encode_json, decode_json)
        elif isinstance(column.type, Boolean):
            codecs[column.name] = (int, bool)
    return codecs


def _q(name: str) -> str:
    return f'"{name}"'


class _TableSql:
    """One table's SQL text and codecs, built once and shared by every connection."""

    def __init__(self, spec: TableSpec, table: Table) -> None:
        self.spec = spec
        self.name = _q(table.name)
        self.columns = tuple(c.name for c in table.columns)
        self.generated_columns = tuple(c for c in self.columns if c != spec.key)
        self.listed = ", ".join(_q(c) for c in self.columns)
        codecs = _codecs(table)
        self._encoders = {column: encode for column, (encode, _) in codecs.items()}
        self.record: Callable[[Sequence[Any]], Any] = row_builder(spec.model, self.columns, codecs)
        self.get = f"SELECT {self.listed} FROM {self.name} WHERE {_q(spec.key)} = ?"
        self._cache: dict[tuple[Any, ...], str] = {}

    def encode(self, column: str, value: Any) -> Any:
        """A model value as SQLite stores it."""
        encoder = self._encoders.get(column)
        return value if value is None or encoder is None else encoder(value)

    def insert_params(self, record: Any, columns: Sequence[str]) -> list[Any]:
        """The parameters of ``insert(columns)`` for one record."""
        return [self.encode(column, getattr(record, column)) for column in columns]

    def insert(self, columns: tuple[str, ...]) -> str:
        """INSERT text for these columns."""

        def build() -> str:
            names = ", ".join(_q(c) for c in columns)
            marks = ", ".join("?" for _ in columns)
            return f"INSERT INTO {self.name} ({names}) VALUES ({marks})"

        return self.cached(("insert", columns), build)

    def where(self, conds: Sequence[Cond]) -> str:
        """The WHERE clause of these conditions (empty for none)."""
        parts: list[str] = []
        for cond in conds:
            column = _q(cond.field)
            if cond.op in ("eq", "ne") and cond.value is None:
                parts.append(f"{column} IS {'NOT ' if cond.op == 'ne' else ''}NULL")
            elif cond.op == "in":
                marks = ", ".join("?" for _ in cond.value)
                parts.append(f"{column} IN ({marks})" if marks else "0")
            else:
                parts.append(f"{column} {_OPS[cond.op]} ?")
        return f" WHERE {' AND '.join(parts)}" if parts else ""

    def where_params(self, conds: Sequence[Cond]) -> list[Any]:
        """The parameters of ``where(conds)``, in order."""
        params: list[Any] = []
        for cond in conds:
            if cond.op == "in":
                params.extend(self.encode(cond.field, v) for v in cond.value)
            elif cond.value is not None:
                params.append(self.encode(cond.field, cond.value))
        return params

    def assignments(self, values: Mapping[str, Any]) -> str:
        """``SET`` text, every ``Increment`` computed by the database."""
        return ", ".join(
            f"{_q(f)} = {_q(f)} + ?" if isinstance(v, Increment) else f"{_q(f)} = ?"
            for f, v in values.items()
        )

    def assignment_params(self, values: Mapping[str, Any]) -> list[Any]:
        """The parameters of ``assignments(values)``, in order."""
        return [v.by if isinstance(v, Increment) else self.encode(f, v) for f, v in values.items()]

    def cached(self, key: tuple[Any, ...], build: Callable[[], str]) -> str:
        """SQL text by its shape, built the first time the shape is seen."""
        sql = self._cache.get(key)
        if sql is None:
            sql = self._cache[key] = build()
        return sql


def _shape(conds: Sequence[Cond]) -> tuple[Any, ...]:
    return tuple(
        (c.field, c.op, c.value is None, len(c.value) if c.op == "in" else 0) for c in conds
    )


class SqliteTable(Generic[R]):
    """One table's verbs on one connection; every call runs to completion without yielding."""

    def __init__(self, sql: _TableSql, conn: sqlite3.Connection) -> None:
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
            setattr(record, spec.key, cursor.lastrowid)
        return record

    async def update(
        self, key: Any, values: Mapping[str, Any], *, expect: Mapping[str, Any] | None = None
    ) -> R | None:
        sql = self._sql
        guards = [Cond(sql.spec.key, "eq", key)]
        guards += [Cond(f, "eq", v) for f, v in (expect or {}).items()]
        text = sql.cached(
            ("update", tuple(values), _incremented(values), _shape(guards)),
            lambda: (
                f"UPDATE {sql.name} SET {sql.assignments(values)}{sql.where(guards)}"
                f" RETURNING {sql.listed}"
            ),
        )
        params = sql.assignment_params(values) + sql.where_params(guards)
        try:
            row = self._conn.execute(text, params).fetchone()
        except sqlite3.IntegrityError as exc:
            raise StaleWrite(f"{sql.spec.name}: {exc}") from exc
        return sql.record(row) if row is not None else None

    async def update_where(self, conds: Sequence[Cond], values: Mapping[str, Any]) -> int:
        sql = self._sql
        text = sql.cached(
            ("update_where", tuple(values), _incremented(values), _shape(conds)),
            lambda: f"UPDATE {sql.name} SET {sql.assignments(values)}{sql.where(conds)}",
        )
        params = sql.assignment_params(values) + sql.where_params(conds)
        return self._conn.execute(text, params).rowcount

    async def delete_where(self, conds: Sequence[Cond]) -> int:
        sql = self._sql
        text = sql.cached(
            ("delete", _shape(conds)), lambda: f"DELETE FROM {sql.name}{sql.where(conds)}"
        )
        return self._conn.execute(text, sql.where_params(conds)).rowcount

    async def find(
        self,
        *conds: Cond,
        order_by: str | None = None,
        descending: bool = False,
        limit: int | None = None,
        skip_locked: bool = False,  # one writer runs write units one at a time: nothing is held
    ) -> list[R]:
        sql = self._sql

        def build() -> str:
            direction = " DESC" if descending else ""
            order = [_q(order_by)] if order_by else []
            order.append(_q(sql.spec.key))
            ordered = ", ".join(f"{column}{direction}" for column in order)
            bounded = " LIMIT ?" if limit is not None else ""
            where = sql.where(conds)
            return f"SELECT {sql.listed} FROM {sql.name}{where} ORDER BY {ordered}{bounded}"

        text = sql.cached(("find", _shape(conds), order_by, descending, limit is not None), build)
        params = sql.where_params(conds)
        if limit is not None:
            params.append(limit)
        return [sql.record(row) for row in self._conn.execute(text, params)]

    async def count(self, *conds: Cond) -> int:
        sql = self._sql
        text = sql.cached(
            ("count", _shape(conds)), lambda: f"SELECT count(*) FROM {sql.name}{sql.where(conds)}"
        )
        return int(self._conn.execute(text, sql.where_params(conds)).fetchone()[0])

    async def count_by(self, field: str, *conds: Cond) -> dict[Any, int]:
        sql = self._sql
        text = sql.cached(
            ("count_by", field, _shape(conds)),
            lambda: (
                f"SELECT {_q(field)}, count(*) FROM {sql.name}{sql.where(conds)} "
                f"GROUP BY {_q(field)}"
            ),
        )
        return dict(self._conn.execute(text, sql.where_params(conds)).fetchall())

    async def newest_by(self, field: str, *conds: Cond) -> dict[Any, R]:
        sql = self._sql
        key = _q(sql.spec.key)
        text = sql.cached(
            ("newest_by", field, _shape(conds)),
            lambda: (
                f"SELECT {sql.listed} FROM {sql.name} WHERE {key} IN "
                f"(SELECT max({key}) FROM {sql.name}{sql.where(conds)} GROUP BY {_q(field)})"
            ),
        )
        found = [sql.record(row) for row in self._conn.execute(text, sql.where_params(conds))]
        return {getattr(record, field): record for record in found}


def _incremented(values: Mapping[str, Any]) -> tuple[bool, ...]:
    return tuple(isinstance(v, Increment) for v in values.values())


# Failures of the file or the disk rather than of a statement: the request can be retried.
_OUTAGES = (
    "SQLITE_FULL",
    "SQLITE_IOERR",
    "SQLITE_CANTOPEN",
    "SQLITE_READONLY",
    "SQLITE_BUSY",
    "SQLITE_LOCKED",
    "SQLITE_NOMEM",
    "SQLITE_PROTOCOL",
    "SQLITE_CORRUPT",
    "SQLITE_NOTADB",
)


def unavailable(exc: BaseException, path: Path) -> StorageUnavailable | None:
    """The StorageUnavailable an error of SQLite (or of SQLAlchemy over it) amounts to, if it
    is one of the file or the disk."""
    cause = exc.orig if isinstance(exc, DBAPIError) else exc
    name = getattr(cause, "sqlite_errorname", "")
    if isinstance(cause, sqlite3.Error) and name.startswith(_OUTAGES):
        return StorageUnavailable(f"the SQLite database {path} cannot be used: {cause}")
    return None


@contextmanager
def _outages(path: Path) -> Iterator[None]:
    """Raise a file's or a disk's failure inside the block as StorageUnavailable."""
    try:
        yield
    except (sqlite3.Error, DBAPIError) as exc:
        translated = unavailable(exc, path)
        if translated is None:
            raise
        raise translated from exc


def _tables(sqls: dict[str, _TableSql], conn: sqlite3.Connection) -> dict[str, SqliteTable[Any]]:
    return {name: SqliteTable(sql, conn) for name, sql in sqls.items()}


class _Writer:
    """The writer connection, whose one open transaction every write unit of work joins.

    ``turn`` is held by whoever uses the connection: one unit at a time, or the COMMIT.
    """

    def __init__(self, conn: sqlite3.Connection, hub: Hub, busy_timeout: float) -> None:
        self.conn = conn
        self.hub = hub
        self.busy_timeout = busy_timeout
        self.turn = asyncio.Lock()
        self.batch: asyncio.Future[None] | None = None  # done when the open transaction commits
        self.topics: set[str] = set()
        self.committer: asyncio.Task[None] | None = None
        self.thread = ThreadPoolExecutor(1, thread_name_prefix="relay-sqlite-commit")
        self.commits = 0  # transactions committed (each holding one or more units)

    async def join(self) -> asyncio.Future[None]:
        """Take the turn and start a unit in the open transaction (opening one if none is)."""
        await self.turn.acquire()
        try:
            if not self.conn.in_transaction:
                await self._begin()
            if self.batch is None:
                self.batch = asyncio.get_running_loop().create_future()
            self.conn.execute("SAVEPOINT unit")
        except BaseException:
            self.turn.release()
            raise
        return self.batch

    async def _begin(self) -> None:
        # The writer's busy timeout is zero: another process holding the lock is waited for
        # here, without blocking the event loop, up to the configured timeout.
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
            await asyncio.sleep(_BUSY_BACKOFF_SECONDS)

    def leave(self, keep: bool, topics: set[str]) -> None:
        """End the unit: keep its changes for the coming COMMIT, or roll them back."""
        try:
            if keep:
                self.conn.execute("RELEASE unit")
                self.topics |= topics
                if self.committer is None:
                    self.committer = asyncio.create_task(self._commit(), name="relay-commit")
            else:
                self.conn.execute("ROLLBACK TO unit")
                self.conn.execute("RELEASE unit")
        except sqlite3.Error as exc:
            self._lost(exc)
            raise
        finally:
            if not self.conn.in_transaction and self.batch is not None:
                self._lost(sqlite3.OperationalError("the transaction was rolled back"))
            self.turn.release()

    def _lost(self, exc: BaseException) -> None:
        """The open transaction is gone: nothing it held was committed; its units fail."""
        try:
            if self.conn.in_transaction:
                self.conn.rollback()
        except sqlite3.Error:
            log.exception("could not roll back the writer's transaction")
        batch, self.batch, self.topics = self.batch, None, set()
        if batch is not None and not batch.done():
            batch.set_exception(exc)
            batch.exception()  # retrieved: each waiter raises it; none may be left to log it

    async def _commit(self) -> None:
        await asyncio.sleep(0)  # units woken in this turn of the loop join this transaction
        await self.turn.acquire()  # behind every unit already waiting for its turn
        self.committer = None
        batch, topics = self.batch, self.topics
        self.batch, self.topics = None, set()
        if batch is None:
            self.turn.release()
            return
        commit = asyncio.get_running_loop().run_in_executor(self.thread, self.conn.commit)
        # Settled by the COMMIT's end, not by this task, which may be cancelled meanwhile.
        commit.add_done_callback(lambda done: self._settle(batch, topics, done))
        # A failed COMMIT is reported to its units by _settle; this task has nothing to add.
        await asyncio.wait([commit])

    def _settle(
        self, batch: asyncio.Future[None], topics: set[str], done: asyncio.Future[None]
    ) -> None:
        """Answer every unit of a batch once its COMMIT ended, then hand the turn on."""
        try:
            failure = done.exception()
            if failure is None:
                self.commits += 1
                batch.set_result(None)
                self.hub.publish(sorted(topics))
            else:
                self.batch = batch
                self._lost(failure)
        finally:
            self.turn.release()

    async def drain(self) -> None:
        """Wait until every unit that asked has been committed (or failed)."""
        while self.committer is not None:
            await asyncio.gather(self.committer, return_exceptions=True)
        async with self.turn:  # a COMMIT in flight holds it until settled
            pass


class _WriteUnit:
    """A unit of work on the writer connection; its tables are attributes."""

    def __init__(self, writer: _Writer, tables: dict[str, SqliteTable[Any]], path: Path) -> None:
        self.__dict__.update(tables)
        self._writer = writer
        self._path = path
        self._topics: set[str] = set()
        self._batch: asyncio.Future[None] | None = None
        self._open = False

    async def __aenter__(self) -> UnitOfWork:
        with _outages(self._path):
            self._batch = await self._writer.join()
        self._open = True
        return self  # type: ignore[return-value]

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._open:
            self._open = False
            with _outages(self._path):
                self._writer.leave(False, set())
        translated = unavailable(exc, self._path) if exc is not None else None
        if translated is not None:
            raise translated from exc

    def publish(self, topic: str) -> None:
        self._topics.add(topic)

    async def commit(self) -> None:
        if not self._open:
            raise RuntimeError("this unit of work has already ended")
        self._open = False
        with _outages(self._path):
            self._writer.leave(True, self._topics)
            assert self._batch is not None
            await asyncio.shield(self._batch)


class _ReadUnit:
    """A unit of work in a read transaction of one reader connection."""

    def __init__(self, storage: SqliteStorage) -> None:
        self._storage = storage
        self._conn: sqlite3.Connection | None = None

    async def __aenter__(self) -> UnitOfWork:
        with _outages(self._storage.path):
            self._conn, tables = self._storage._reader()
            self.__dict__.update(tables)
            self._conn.execute("BEGIN")
        return self  # type: ignore[return-value]

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._conn is not None
        with _outages(self._storage.path):
            self._conn.execute("ROLLBACK")
        self._storage._readers.append(self._conn)
        self._conn = None
        translated = unavailable(exc, self._storage.path) if exc is not None else None
        if translated is not None:
            raise translated from exc

    def publish(self, topic: str) -> None:
        raise RuntimeError("a read unit of work cannot publish")

    async def commit(self) -> None:
        """Nothing to make durable: a read unit ends when it is left."""


def serve_alone(path: Path) -> TextIO:
    """Take the lock that says this process serves the SQLite file at ``path``; keep the
    returned file open for as long as it does (closing it, or exiting, lets go).

    Two servers on one file would each run a writer and miss the other's wake-ups, so a second
    is refused, naming the first."""
    lock = path.with_name(path.name + ".lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = lock.open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise StorageUnavailable(
            f"{path} is already served by process {holder}; stop it first, or run several "
            "processes over PostgreSQL"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


class SqliteStorage:
    """Storage in one SQLite file, served by this process (see the module's docstring)."""

    name = "sqlite"

    def __init__(
        self,
        url: str,
        *,
        synchronous: str = "FULL",
        busy_timeout_ms: int = 30_000,
        hub: Hub | None = None,
    ) -> None:
        self.path = self.file_of(url)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.hub = hub or Hub()
        self._synchronous = synchronous.upper()
        self._busy_timeout_ms = busy_timeout_ms
        self._locks = ProcessLocks()
        self._sqls = {spec.name: _TableSql(spec, metadata.tables[spec.name]) for spec in TABLES}
        self._writer: _Writer | None = None
        self._checkpointer: asyncio.Task[None] | None = None
        self._checkpoint_thread = ThreadPoolExecutor(1, thread_name_prefix="relay-sqlite-ckpt")
        self._write_tables: dict[str, SqliteTable[Any]] = {}
        self._readers: list[sqlite3.Connection] = []
        self._reader_tables: dict[int, dict[str, SqliteTable[Any]]] = {}
        self._all: list[sqlite3.Connection] = []

    @staticmethod
    def file_of(url: str) -> Path:
        """The database file a ``sqlite:///`` URL names."""
        database = make_url(url).database
        if not database or database == ":memory:":
            raise ValueError("SQLite storage needs a file (for a store in memory, use 'memory')")
        return Path(database)

    def connect(self, *, busy_timeout_ms: int | None = None) -> sqlite3.Connection:
        """A connection set up for a server: WAL, foreign keys, the chosen ``synchronous``."""
        conn = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, cached_statements=512
        )
        timeout = self._busy_timeout_ms if busy_timeout_ms is None else busy_timeout_ms
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA busy_timeout={int(timeout)}")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute(f"PRAGMA synchronous={self._synchronous}")
        return conn

    async def run_sync(self, work: Callable[[Connection], T]) -> T:
        """Run ``work`` on a SQLAlchemy connection of its own in a write transaction, and
        commit (for migrations, and for tests that inspect the schema)."""
        engine = create_engine("sqlite://", creator=self.connect)
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql("BEGIN IMMEDIATE")
                result = work(conn)
                conn.commit()
                return result
        finally:
            engine.dispose()

    async def migrate(self) -> None:
        """Bring the schema to the newest revision, keeping every stored row."""
        from relay_core.storage.migrate import upgrade

        with _outages(self.path):
            await self.run_sync(upgrade)
            # A revision may have dropped rows that must not linger in the WAL's old frames.
            conn = self.connect()
            try:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                conn.close()

    async def listen(self) -> None:
        """Nothing to listen to: one process serves a SQLite file."""

    def _writer_for_loop(self) -> _Writer:
        if self._writer is None:
            conn = self.connect(busy_timeout_ms=0)
            # Checkpoints are the checkpointer's; this is only the backstop should it fall behind.
            conn.execute(f"PRAGMA wal_autocheckpoint={WAL_BACKSTOP_PAGES}")
            self._all.append(conn)
            self._writer = _Writer(conn, self.hub, self._busy_timeout_ms / 1000)
            self._write_tables = _tables(self._sqls, conn)
            self._checkpointer = asyncio.create_task(
                self._checkpoint_forever(self._writer), name="relay-sqlite-checkpoint"
            )
        return self._writer

    async def _checkpoint_forever(self, writer: _Writer) -> None:
        """Copy the WAL back into the database every so often, off the commit path.

        SQLite would otherwise checkpoint inside a COMMIT every thousand pages, and every
        request waiting on that commit would wait for the copy and its fsync too. A PASSIVE
        checkpoint runs beside the writer and the readers without blocking either.
        """
        loop = asyncio.get_running_loop()
        conn = self.connect()
        seen = writer.commits
        try:
            while True:
                await asyncio.sleep(CHECKPOINT_SECONDS)
                if writer.commits == seen:
                    continue
                seen = writer.commits
                try:
                    await loop.run_in_executor(
                        self._checkpoint_thread, conn.execute, "PRAGMA wal_checkpoint(PASSIVE)"
                    )
                except sqlite3.Error as exc:
                    log.warning("WAL checkpoint failed (%s); the writer's backstop remains", exc)
        finally:
            self._checkpoint_thread.shutdown(wait=True)  # before its connection is closed
            conn.close()

    def _reader(self) -> tuple[sqlite3.Connection, dict[str, SqliteTable[Any]]]:
        if self._readers:
            conn = self._readers.pop()
        else:
            conn = self.connect()
            conn.execute("PRAGMA query_only=ON")
            self._all.append(conn)
            self._reader_tables[id(conn)] = _tables(self._sqls, conn)
        return conn, self._reader_tables[id(conn)]

    def unit_of_work(self, *, write: bool) -> _WriteUnit | _ReadUnit:
        if write:
            with _outages(self.path):
                writer = self._writer_for_loop()
            return _WriteUnit(writer, self._write_tables, self.path)
        return _ReadUnit(self)

    def exclusive(self, name: str) -> AbstractAsyncContextManager[bool]:
        """Held among this process's tasks: one process serves a SQLite file."""
        return self._locks.exclusive(name)

    async def close(self) -> None:
        self.hub.close()
        if self._checkpointer is not None:
            self._checkpointer.cancel()
            await asyncio.gather(self._checkpointer, return_exceptions=True)
            self._checkpointer = None
        if self._writer is not None:
            await self._writer.drain()
            self._writer.thread.shutdown(wait=True)
        for conn in self._all:
            conn.close()
        self._all.clear()
        self._readers.clear()
        self._writer = None
