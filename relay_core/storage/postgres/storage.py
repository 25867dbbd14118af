"""PostgreSQL storage on asyncpg: the named statements of ``queries/``, prepared per connection.

Statements go to asyncpg as text with ``$n`` parameters; asyncpg prepares each text once per
connection and reuses it, so a request pays for the round trips, not for building and planning
statements. JSON columns are (de)coded by orjson in asyncpg's codec (``json_text``); SQLAlchemy
serves Alembic's migrations only.

Other instances are told of commits by LISTEN/NOTIFY. Rows of the event feed take their ids
from their transaction's id and become visible to readers once every older transaction has
ended (see ``FEED_FUNCTIONS``), so a cursor never skips a row that commits late.
"""

from __future__ import annotations

import asyncio
import logging
import zlib
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager, nullcontext
from typing import Any, TypeVar

import orjson
from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import create_async_engine

from relay_core.config import POSTGRES_POOL_SIZE
from relay_core.hub import Hub
from relay_core.ports import Observed, StaleWrite, StatementObserver, UnitOfWork
from relay_core.storage import queries
from relay_core.storage.json_text import decode_json, encode_json
from relay_core.storage.postgres.driver import asyncpg
from relay_core.storage.postgres.feed import CHANNEL, HintSender, install_feed_functions
from relay_core.storage.postgres.outages import (
    BROKEN,
    RETRY_STATES,
    roll_back,
    sqlstate,
    unavailable,
)
from relay_core.storage.postgres.search import PgSearch
from relay_core.storage.postgres.statements import PgStatements
from relay_core.storage.postgres.transaction import Transaction
from relay_core.storage.queries import Statement

log = logging.getLogger("relay.storage")


T = TypeVar("T")


HORIZON_FIRST, HORIZON_LONGEST = 0.005, 1.0  # seconds (see _watch_horizon)
# The feed's horizon (postgres/feed.py): every row below it has committed or never will.
HORIZON = "SELECT relay_feed_horizon()"
MIGRATION_LOCK = 0x72656C6D67  # one instance migrates at a time


_COMMIT_NOT_WAITING = "SET LOCAL synchronous_commit = off; COMMIT"


class PgUnitOfWork(UnitOfWork):
    """Every store over one connection; a write unit's transaction is committed by ``commit``,
    a read unit runs each statement on its own (READ COMMITTED gives each statement its own
    snapshot either way)."""

    def __init__(
        self,
        tx: Transaction,
        statements: Mapping[str, Statement],
        hub: Hub,
        hints: HintSender,
        observed: Observed,
    ) -> None:
        self._tx = tx
        self._sql = PgStatements(statements, tx, observed)
        self._hub = hub
        self._hints = hints

    @property
    def search_index(self) -> PgSearch:
        """The search index, in this unit's transaction."""
        return PgSearch(self._tx)

    def publish(self, topic: str) -> None:
        self._tx.topics.add(topic)

    async def flush(self) -> None:
        await self._tx.ready()

    async def commit(self, *, durable: bool = True) -> None:
        tx = self._tx
        held = len(tx.held)
        if tx.begun or held > 1 or (held and not durable):
            conn = await tx.ready()
            # Not durable is PostgreSQL's own setting: the COMMIT does not wait for the WAL's
            # flush.
            await conn.execute("COMMIT" if durable else _COMMIT_NOT_WAITING)
        elif held:
            await tx.send_held()  # alone, the statement is its own transaction
        tx.committed = True
        topics = tx.topics
        if topics:
            self._hub.publish(topics)
            self._hints.send(topics)
        tx.topics = set()


class PostgresStorage:
    """Storage on a PostgreSQL database named by a SQLAlchemy URL (``postgresql+asyncpg://``)."""

    name = "postgresql"
    # Only with an instance killed between a commit and its NOTIFY: a dropped LISTEN wakes
    # every waiter when it is back, and a failed NOTIFY is sent again.
    hints_missable = True

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
        self.listener_pid: int | None = None  # the LISTEN session's, in pg_stat_activity
        self._senders: set[int] = set()  # the sessions other instances' hints came from
        self._connect_args = connect_args or {}
        self._pool_size = pool_size
        self._turns = asyncio.Semaphore(max(1, pool_size // 2))  # a stream's reads' turns
        # Per session, so it holds for Relay's connections only (None: the server's setting).
        self._pool_settings = {**self._connect_args.get("server_settings", {})}
        if synchronous_commit is not None:
            self._pool_settings["synchronous_commit"] = synchronous_commit
        # SQLAlchemy serves Alembic's migrations only; requests go through the asyncpg pool.
        self.engine = create_async_engine(url, pool_pre_ping=True, connect_args=self._connect_args)
        self._statements = queries.load("postgres")
        self._observed = Observed()
        self._pool: Any = None
        self._pool_lock = asyncio.Lock()
        self._held: dict[str, int] = {}  # feed topic → the lowest id held back from its readers
        self._watcher: asyncio.Task[None] | None = None
        self._hints = HintSender(self._asyncpg_dsn)

    @property
    def _asyncpg_dsn(self) -> str:
        """The database URL as asyncpg itself takes it (for connections outside the pool)."""
        return self.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)

    def observe_statements(self, observer: StatementObserver) -> None:
        """Have ``observer`` watch each named statement run from now on (those a unit holds
        back and sends with its next statement or its commit are not watched one by one)."""
        self._observed.observer = observer

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
            install_feed_functions(conn)

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
            except BROKEN as exc:
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
        self.listener_pid = conn.get_server_pid()
        # Hints sent before this LISTEN (while the connection was down, or before the first)
        # were lost: every waiter looks again.
        self.hub.publish_all()
        self.listening.set()
        await lost.wait()

    def _on_hint(self, _conn: Any, pid: int, _channel: str, payload: str) -> None:
        if pid == self._hints.pid:
            return  # this process's own were published at their commits
        if pid not in self._senders:
            # A sender heard for the first time may be an instance restarted after it was
            # killed between a commit and that commit's hint: every waiter looks again (and
            # with them those of this hint's topics).
            self._senders.add(pid)
            self.hub.publish_all()
        else:
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
    async def unit_of_work(
        self, *, write: bool, following: bool = False
    ) -> AsyncIterator[UnitOfWork]:
        # A stream's reads take at most half the pool: when every stream comes back at once
        # (a restart), a request finds a connection instead of queueing behind them all.
        turn = self._turns if following else nullcontext()
        try:
            pool = await self._connections()
            async with turn, pool.acquire() as conn:
                tx = Transaction(conn, write)
                uow = PgUnitOfWork(tx, self._statements, self.hub, self._hints, self._observed)
                if not write:
                    yield uow
                    self._wake_when_visible(tx)
                    return
                try:
                    yield uow
                finally:
                    if tx.begun and not tx.committed and not conn.is_closed():
                        await roll_back(conn)
        except BROKEN as exc:
            if sqlstate(exc) in RETRY_STATES:
                # A deadlock or serialization failure rolled the unit back; run it again.
                raise StaleWrite(
                    f"PostgreSQL {sqlstate(exc)}: the unit of work is retried"
                ) from exc
            translated = unavailable(exc)
            if translated is None:
                raise
            raise translated from exc

    def _wake_when_visible(self, tx: Transaction) -> None:
        """Note the feeds a read found rows held back in, above the horizon, for the watcher
        to wake their readers once the horizon passes them."""
        if not tx.feeds_held_back:
            return
        for topic, lowest in tx.feeds_held_back.items():
            self._held[topic] = min(lowest, self._held.get(topic, lowest))
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.create_task(self._watch_horizon(), name="relay-horizon")

    async def _watch_horizon(self) -> None:
        """Wake the readers of held rows once the horizon passes them: one query of the
        horizon for every reader waiting (rather than each reading the feed again), 5 ms apart
        while rows come out, the pause doubling to 1 s while none does (an old transaction
        of another application can hold them for long; it may end without a hint)."""
        pause = HORIZON_FIRST
        while self._held:
            await asyncio.sleep(pause)
            try:
                pool = await self._connections()
                async with pool.acquire() as conn:
                    horizon = await conn.fetchval(HORIZON)
            except BROKEN:
                pause = HORIZON_LONGEST  # the readers' own reads say what is wrong
                continue
            visible = [topic for topic, lowest in self._held.items() if lowest < horizon]
            for topic in visible:
                del self._held[topic]
            self.hub.publish(visible)
            pause = HORIZON_FIRST if visible else min(HORIZON_LONGEST, pause * 2)

    @asynccontextmanager
    async def exclusive(self, name: str) -> AsyncIterator[bool]:
        """A session advisory lock on a connection of its own (released by the server if this
        process dies)."""
        try:
            conn = await asyncpg.connect(self._asyncpg_dsn)
        except BROKEN as exc:
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
        if self._watcher is not None:
            self._watcher.cancel()
            await asyncio.gather(self._watcher, return_exceptions=True)
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
