"""The event feed's order without a ceiling (ids from transaction ids, read below the horizon)
and the hints that tell other instances of commits (LISTEN/NOTIFY).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import orjson
from sqlalchemy import Connection, text

from relay_core.storage.postgres.driver import asyncpg
from relay_core.storage.postgres.outages import BROKEN

log = logging.getLogger("relay.storage")

# PostgreSQL: the channel hints travel on, and the advisory lock of migrations.
CHANNEL = "relay"


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


def install_feed_functions(conn: Connection) -> None:
    """Define the feeds' functions (see ``FEED_FUNCTIONS``). The base is raised only when a
    feed holds an id that a transaction starting now could draw again (transaction ids
    started lower than the ids stored: a restored dump); it never goes down."""
    version = int(conn.execute(text("SHOW server_version_num")).scalar() or 0)
    if version < OLDEST_SERVER:
        raise RuntimeError(f"Relay needs PostgreSQL 13 or newer; this server is {version}")
    defined = conn.execute(text("SELECT to_regproc('relay_feed_base') IS NOT NULL")).scalar()
    current = int(conn.execute(text("SELECT relay_feed_base()")).scalar() or 0) if defined else 0
    # Committed rows are below the snapshot's xmax; later transactions draw ids above it.
    needed = conn.execute(
        text(
            "SELECT max(event_id) + 1 - pg_snapshot_xmax(pg_current_snapshot())::text::bigint"
            f" * {FEED_ORDINALS} FROM events"
        )
    ).scalar()
    base = max(current, int(needed or 0))
    if not defined or base > current:
        for statement in FEED_FUNCTIONS:
            conn.execute(text(statement.format(base=base)))


class HintSender:
    """Tells other instances which topics commits touched: after the commits, on a connection
    of its own, all the topics that arrived while the last NOTIFY was being sent in the next
    one. A NOTIFY inside each transaction instead would cost every commit PostgreSQL's
    notification lock and every listener a wake-up per commit (docs/performance.md has what it
    cost). A NOTIFY that fails is sent again once the connection is back; only a hint of an
    instance killed before it was sent is lost (its waiters elsewhere read at their next
    re-poll)."""

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
                    try:
                        for payload in self._payloads(sorted(topics)):
                            await conn.execute("SELECT pg_notify($1, $2)", CHANNEL, payload)
                    except BROKEN:
                        self._unsent |= topics  # sent again (twice is only a second look)
                        self._ready.set()
                        raise
                    failing = False
                except BROKEN as exc:
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
