"""The group-commit writer, and the units of work that write through it or read beside it.

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
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType

from sqlalchemy.exc import DBAPIError

from relay_api.errors import StorageUnavailable
from relay_core import waiters
from relay_core.hub import Hub
from relay_core.ports import UnitOfWork
from relay_core.storage.sqlite.driver import sqlite3
from relay_core.storage.sqlite.search import SearchThreads, SqliteSearch
from relay_core.storage.sqlite.statements import SqliteStatements

log = logging.getLogger("relay.storage")

_BUSY_BACKOFF_SECONDS = 0.002


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
        detail = f"the SQLite database cannot be used: {cause}"
        return StorageUnavailable(detail, for_the_log=str(path))
    return None


class OutageGuard:
    """Raise a file's or a disk's failure inside the block as StorageUnavailable. A class, not
    a generator: it wraps every unit of work, and a generator's set-up costs more; it keeps
    nothing of one use, so one instance serves every unit of a storage."""

    __slots__ = ("path",)

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if isinstance(exc, sqlite3.Error | DBAPIError):
            translated = unavailable(exc, self.path)
            if translated is not None:
                raise translated from exc


class Writer:
    """The writer connection, whose one open transaction every write unit of work joins.

    ``turn`` is held by whoever uses the connection: one unit at a time, or the COMMIT.
    """

    def __init__(self, conn: sqlite3.Connection, hub: Hub, busy_timeout: float) -> None:
        self.conn = conn
        self.hub = hub
        self.busy_timeout = busy_timeout
        self.turn = asyncio.Lock()
        # The open transaction's batch: None until a unit joins it; then the future of each of
        # its units that waits for the COMMIT (``relay_core.waiters``).
        self.batch: list[asyncio.Future[None]] | None = None
        self.topics: set[str] = set()
        self.committer: asyncio.Task[None] | None = None
        self.thread = ThreadPoolExecutor(1, thread_name_prefix="relay-sqlite-commit")
        self.commits = 0  # transactions committed (each holding one or more units)
        self.units = 0  # units kept in the open transaction
        # Told of each commit: how many units it held and how long its COMMIT took.
        self.on_commit: Callable[[int, float], None] | None = None
        # Run in the transaction just before its COMMIT, on the COMMIT's thread.
        self.before_commit: Callable[[sqlite3.Connection], None] | None = None

    async def join(self) -> None:
        """Take the turn and start a unit in the open transaction (opening one if none is)."""
        await self.turn.acquire()
        try:
            if not self.conn.in_transaction:
                await self._begin()
            if self.batch is None:
                self.batch = []
            self.conn.execute("SAVEPOINT unit")
        except BaseException:
            self.turn.release()
            raise

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

    def keep(self, topics: set[str], *, durable: bool) -> asyncio.Future[None] | None:
        """End the unit keeping its changes for the coming COMMIT; a ``durable`` unit is given
        the future that the COMMIT holding it answers."""
        waiter = None
        try:
            self.conn.execute("RELEASE unit")
            self.units += 1
            self.topics |= topics
            if durable:
                assert self.batch is not None  # a unit holds the turn from join to leave
                waiter = asyncio.get_running_loop().create_future()
                self.batch.append(waiter)
            if self.committer is None:
                self.committer = asyncio.create_task(self._commit(), name="relay-commit")
        except sqlite3.Error as exc:
            self._lost(exc)
            raise
        finally:
            self._end_turn()
        return waiter

    def roll_back(self) -> None:
        """End the unit undoing its changes."""
        try:
            self.conn.execute("ROLLBACK TO unit")
            self.conn.execute("RELEASE unit")
        except sqlite3.Error as exc:
            self._lost(exc)
            raise
        finally:
            self._end_turn()

    def _end_turn(self) -> None:
        """Let the next unit in, the open transaction failed for every unit if a unit's error
        rolled it back."""
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
        batch, self.batch, self.topics, self.units = self.batch, None, set(), 0
        waiters.fail(batch or (), exc)

    async def _commit(self) -> None:
        await asyncio.sleep(0)  # units woken in this turn of the loop join this transaction
        await self.turn.acquire()  # behind every unit already waiting for its turn
        self.committer = None
        batch, topics, units = self.batch, self.topics, self.units
        self.batch, self.topics, self.units = None, set(), 0
        if batch is None:
            self.turn.release()
            return
        commit = asyncio.get_running_loop().run_in_executor(self.thread, self._timed_commit, units)
        # Settled by the COMMIT's end, not by this task, which may be cancelled meanwhile.
        commit.add_done_callback(lambda done: self._settle(batch, topics, done))
        # A failed COMMIT is reported to its units by _settle; this task has nothing to add.
        await asyncio.wait([commit])

    def _timed_commit(self, units: int) -> None:
        if self.before_commit is not None:
            self.before_commit(self.conn)
        started = time.perf_counter()
        self.conn.commit()
        if self.on_commit is not None:
            self.on_commit(units, time.perf_counter() - started)

    def _settle(
        self, batch: list[asyncio.Future[None]], topics: set[str], done: asyncio.Future[None]
    ) -> None:
        """Answer every unit of a batch once its COMMIT ended, then hand the turn on."""
        try:
            failure = done.exception()
            if failure is None:
                self.commits += 1
                waiters.answer(batch, None)
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


class WriteUnit(UnitOfWork):
    """A unit of work on the writer connection, its statements those of the connection."""

    def __init__(
        self,
        writer: Writer,
        sql: SqliteStatements,
        searches: SearchThreads,
        outages: OutageGuard,
    ) -> None:
        self._sql = sql
        self._searches = searches
        self._writer = writer
        self._outages = outages  # shared by every unit of the storage: it holds only the path
        self._topics: set[str] = set()
        self._open = False

    @property
    def search_index(self) -> SqliteSearch:
        return SqliteSearch(self._searches)

    async def __aenter__(self) -> UnitOfWork:
        with self._outages:
            await self._writer.join()
        self._open = True
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._open:
            self._open = False
            with self._outages:
                self._writer.roll_back()
        translated = unavailable(exc, self._outages.path) if exc is not None else None
        if translated is not None:
            raise translated from exc

    def publish(self, topic: str) -> None:
        self._topics.add(topic)

    async def flush(self) -> None:
        """Nothing is held back: every verb runs to completion."""

    async def commit(self, *, durable: bool = True) -> None:
        if not self._open:
            raise RuntimeError("this unit of work has already ended")
        self._open = False
        with self._outages:
            # Not durable: kept in the open transaction, committed with the next batch.
            committed = self._writer.keep(self._topics, durable=durable)
            if committed is not None:
                await committed
