"""The SQLite adapter: the connections (a writer with group commit, readers of their own),
migrations, and the checkpointer that copies the WAL back off the commit path.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, TypeVar

from sqlalchemy import Connection, create_engine
from sqlalchemy.engine import make_url

from relay_api import models as m
from relay_api.errors import StorageUnavailable
from relay_core.hub import Hub
from relay_core.paths import private_dir, private_file
from relay_core.ports import Observed, StatementObserver, UnitOfWork
from relay_core.storage import queries
from relay_core.storage.locks import ProcessLocks
from relay_core.storage.sqlite import search
from relay_core.storage.sqlite.driver import sqlite3
from relay_core.storage.sqlite.statements import SqliteStatements
from relay_core.storage.sqlite.writer import OutageGuard, Writer, WriteUnit, unavailable

log = logging.getLogger("relay.storage")

T = TypeVar("T")

CHECKPOINT_SECONDS = 1.0
# Under writes that never pause, the checkpointer's copies never catch up with the last commit,
# so the WAL restarts only after the backstop's checkpoint, which runs inside a COMMIT and holds
# every unit of that commit while it copies: the fewer pages it allows, the more often it stalls
# one (docs/performance.md). At 4 KiB pages this lets the WAL reach about 200 MB.
WAL_BACKSTOP_PAGES = 50_000
# The backstop's checkpoint copies what the checkpointer has not: up to a second's frames, tens
# of milliseconds under a fleet's writes. Once the next second would reach it, the copies come
# this often while writes do, until the WAL has started again, so that little is left for it.
CLOSING_SECONDS = 0.02


class CheckpointPace:
    """When the checkpointer copies next, from the WAL's frames after each copy."""

    def __init__(self) -> None:
        self.frames = 0
        self.closing = False  # the backstop is near: copy often until the WAL starts again

    def after(self, frames: int) -> float:
        """Seconds until the next copy, the WAL holding ``frames`` after this one."""
        if frames < self.frames:  # the WAL started again
            self.closing = False
        elif frames + (frames - self.frames) >= WAL_BACKSTOP_PAGES:
            self.closing = True
        self.frames = frames
        return CLOSING_SECONDS if self.closing else CHECKPOINT_SECONDS


def serve_alone(path: Path) -> BinaryIO:
    """Take the lock that says this process serves the SQLite file at ``path``; keep the
    returned file open for as long as it does (closing it, or exiting, lets go).

    Two servers on one file would each run a writer and miss the other's wake-ups (through a
    hard link, each would even keep a WAL of its own and lose the other's writes), so a second
    is refused, naming the first. The lock is on the database file itself (``flock``, which
    SQLite's own ``fcntl`` locks do not touch), so every path to it meets the same lock."""
    try:
        private_dir(path.parent)
        private_file(path)
        handle = path.open("rb")
    except OSError as exc:
        raise StorageUnavailable(f"unable to open {path}: {exc.strerror}") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _lock_holder(os.fstat(handle.fileno()))
        handle.close()
        raise StorageUnavailable(
            f"{path} is already served by {holder}; stop it first, or run several "
            "processes over PostgreSQL"
        ) from None
    return handle


def _lock_holder(file: os.stat_result) -> str:
    """Who holds the ``flock`` on ``file``, as /proc/locks says (Linux); else in words."""
    device = f"{os.major(file.st_dev):02x}:{os.minor(file.st_dev):02x}:{file.st_ino}"
    with contextlib.suppress(OSError):
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()
            if len(fields) > 5 and fields[1] == "FLOCK" and fields[5] == device:
                return f"process {fields[4]}"
    return "another process"


def _checkpoint(conn: sqlite3.Connection) -> tuple[int, int]:
    """A PASSIVE checkpoint: whether it was kept from running, and the WAL's frames after it."""
    busy, frames, _ = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    return busy, frames


class SqliteStorage:
    """Storage in one SQLite file, served by this process (see the module's docstring)."""

    name = "sqlite"
    hints_missable = False  # every writer is this process: its hub hears every commit
    library = f"SQLite {sqlite3.sqlite_version}, {sqlite3.__name__}"  # which one: ``driver``

    def __init__(
        self,
        url: str,
        *,
        synchronous: str = "FULL",
        busy_timeout_ms: int = 30_000,
        hub: Hub | None = None,
    ) -> None:
        self.path = self.file_of(url)
        private_dir(self.path.parent)
        private_file(self.path)
        self.hub = hub or Hub()
        self._synchronous = synchronous.upper()
        self._busy_timeout_ms = busy_timeout_ms
        self._locks = ProcessLocks()
        self._statements = queries.load("sqlite")
        self._observed = Observed()
        self._writer: Writer | None = None
        self._on_commit: Callable[[int, float], None] | None = None
        self._checkpointer: asyncio.Task[None] | None = None
        self._checkpoint_thread = ThreadPoolExecutor(1, thread_name_prefix="relay-sqlite-ckpt")
        self._searches = search.SearchThreads(self.connect)
        self._writer_sql: SqliteStatements | None = None
        self._outages = OutageGuard(self.path)
        self._readers: list[sqlite3.Connection] = []
        self._reader_sql: dict[int, SqliteStatements] = {}
        self._all: list[sqlite3.Connection] = []
        self._removed_on_close: Path | None = None

    @classmethod
    def throwaway(cls) -> SqliteStorage:
        """A store in a private temporary directory, removed when the store closes: what
        ``memory://`` serves (tests, demos), with nothing kept and no sync to wait for."""
        directory = Path(tempfile.mkdtemp(prefix="relay-"))
        storage = cls(f"sqlite:///{directory / 'relay.db'}", synchronous="OFF")
        storage._removed_on_close = directory
        return storage

    @staticmethod
    def file_of(url: str) -> Path:
        """The database file a ``sqlite:///`` URL names."""
        database = make_url(url).database
        if not database or database == ":memory:":
            raise ValueError(
                "SQLite storage needs a file (for one that is not kept, use 'memory://')"
            )
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
        # What a deletion leaves in the file is the same whatever the library's build defaults
        # to (Debian's: ON, pysqlite3's: OFF): a deleted row's bytes are zeroed where that adds
        # no I/O, in its page; a page freed whole keeps them until reused
        # (docs/resources/storage.md).
        conn.execute("PRAGMA secure_delete=FAST")
        return conn

    async def run_sync(self, work: Callable[[Connection], T], *, foreign_keys: bool = True) -> T:
        """Run ``work`` on a SQLAlchemy connection of its own in a write transaction, and
        commit (for migrations, and for tests that inspect the schema). Without
        ``foreign_keys``, they are checked before the commit instead of at each statement."""

        def connect() -> sqlite3.Connection:
            conn = self.connect()
            if not foreign_keys:
                conn.execute("PRAGMA foreign_keys=OFF")
            return conn

        # The driver's module, not SQLAlchemy's default (the interpreter's): its errors are the
        # ones SQLAlchemy wraps.
        engine = create_engine("sqlite://", creator=connect, module=sqlite3)
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql("BEGIN IMMEDIATE")
                result = work(conn)
                if not foreign_keys:
                    broken = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                    if broken:
                        raise StorageUnavailable(f"foreign keys broken in {self.path}: {broken}")
                conn.commit()
                return result
        finally:
            engine.dispose()

    async def migrate(self) -> None:
        """Bring the schema to the newest revision, keeping every stored row."""
        from relay_core.storage.migrate import upgrade

        with OutageGuard(self.path):
            # SQLite's procedure for giving a table a new definition (made beside, rows copied,
            # renamed into place) needs foreign keys off while it runs.
            await self.run_sync(upgrade, foreign_keys=False)
            conn = self.connect()
            try:
                # A revision may have dropped rows that must not linger in the WAL's old frames.
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                conn.close()
        if self._writer is not None:
            self._keep_index(self._writer)

    @staticmethod
    def _keep_index(writer: Writer) -> None:
        """Index what each transaction queued, where the schema queues it."""
        writer.before_commit = search.index_queued if search.has_queue(writer.conn) else None

    async def listen(self) -> None:
        """Nothing to listen to: one process serves a SQLite file."""

    def observe_statements(self, observer: StatementObserver) -> None:
        """Have ``observer`` watch each named statement run from now on."""
        self._observed.observer = observer

    def observe_commits(self, observer: Callable[[int, float], None]) -> None:
        """Tell ``observer`` of each group commit: its units, and its COMMIT's seconds."""
        self._on_commit = observer
        if self._writer is not None:
            self._writer.on_commit = observer

    def _writer_for_loop(self) -> Writer:
        if self._writer is None:
            conn = self.connect(busy_timeout_ms=0)
            # Checkpoints are the checkpointer's; this is the backstop should it fall behind.
            conn.execute(f"PRAGMA wal_autocheckpoint={WAL_BACKSTOP_PAGES}")
            self._all.append(conn)
            self._writer = Writer(conn, self.hub, self._busy_timeout_ms / 1000)
            self._writer.on_commit = self._on_commit
            self._keep_index(self._writer)
            self._writer_sql = SqliteStatements(self._statements, conn, self._observed)
            self._checkpointer = asyncio.create_task(
                self._checkpoint_forever(self._writer), name="relay-sqlite-checkpoint"
            )
        return self._writer

    async def _checkpoint_forever(self, writer: Writer) -> None:
        """Copy the WAL back into the database every so often, off the commit path.

        SQLite would otherwise checkpoint inside a COMMIT every thousand pages, and every
        request waiting on that commit would wait for the copy and its fsync too. A PASSIVE
        checkpoint runs beside the writer and the readers without blocking either. Copies come
        a second apart, and at ``CheckpointPace``'s quicker pace as the backstop nears.
        """
        loop = asyncio.get_running_loop()
        conn = self.connect()
        seen = writer.commits
        pace = CheckpointPace()
        pause = CHECKPOINT_SECONDS
        try:
            while True:
                await asyncio.sleep(pause)
                if writer.commits == seen:
                    pause = CHECKPOINT_SECONDS  # idle: nothing nears the backstop
                    continue
                seen = writer.commits
                try:
                    busy, frames = await loop.run_in_executor(
                        self._checkpoint_thread, _checkpoint, conn
                    )
                except sqlite3.Error as exc:
                    log.warning("WAL checkpoint failed (%s); the writer's backstop remains", exc)
                else:
                    if not busy:  # else the backstop's own checkpoint ran: nothing learned
                        pause = pace.after(frames)
        finally:
            self._checkpoint_thread.shutdown(wait=True)  # before its connection is closed
            conn.close()

    def _reader(self) -> tuple[sqlite3.Connection, SqliteStatements]:
        if self._readers:
            conn = self._readers.pop()
        else:
            conn = self.connect()
            conn.execute("PRAGMA query_only=ON")
            self._all.append(conn)
            self._reader_sql[id(conn)] = SqliteStatements(self._statements, conn, self._observed)
        return conn, self._reader_sql[id(conn)]

    def unit_of_work(self, *, write: bool, following: bool = False) -> WriteUnit | ReadUnit:
        """A unit of work; a stream's read (``following``) takes no turn: a reader is made
        when none is free, so nothing queues behind the streams."""
        if write:
            writer = self._writer
            if writer is None:
                with self._outages:
                    writer = self._writer_for_loop()
            assert self._writer_sql is not None  # made with the writer
            return WriteUnit(writer, self._writer_sql, self._searches, self._outages)
        return ReadUnit(self)

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
        self._searches.close()
        self._searches = search.SearchThreads(self.connect)  # no thread until a search
        for conn in self._all:
            conn.close()
        self._all.clear()
        self._readers.clear()
        self._reader_sql.clear()
        self._writer = None
        if self._removed_on_close is not None:
            shutil.rmtree(self._removed_on_close, ignore_errors=True)


class ReadUnit(UnitOfWork):
    """A unit of work in a read transaction of one reader connection."""

    def __init__(self, storage: SqliteStorage) -> None:
        self._storage = storage
        self._conn: sqlite3.Connection | None = None

    @property
    def search_index(self) -> search.SqliteSearch:
        return search.SqliteSearch(self._storage._searches)

    async def __aenter__(self) -> UnitOfWork:
        with OutageGuard(self._storage.path):
            self._conn, self._sql = self._storage._reader()
            self._conn.execute("BEGIN")
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        assert self._conn is not None
        with OutageGuard(self._storage.path):
            self._conn.execute("ROLLBACK")
        self._storage._readers.append(self._conn)
        self._conn = None
        translated = unavailable(exc, self._storage.path) if exc is not None else None
        if translated is not None:
            raise translated from exc

    def publish(self, topic: str) -> None:
        raise RuntimeError("a read unit of work cannot publish")

    async def announce(self, event: m.Event) -> None:
        raise RuntimeError("a read unit of work cannot write")

    async def flush(self) -> None:
        """Nothing to store: a read unit writes nothing."""

    async def commit(self, *, durable: bool = True) -> None:
        """Nothing to make durable: a read unit ends when it is left."""
