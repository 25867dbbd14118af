"""Search on SQLite: the FTS5 table ``search_index``, kept in the transaction
that writes its rows: triggers queue each entry and the writer indexes the
queue just before each COMMIT (``index_queued``), a segment a transaction rather than one a
unit of work. BM25 ranks (a title's words weigh twice a body's), ``snippet()`` shows them."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Generic, TypeVar

from relay_core.ports import SearchRow, SearchSpec
from relay_core.search_query import SNIPPET_CHARS, fts5
from relay_core.storage.sqlite.driver import sqlite3
from relay_core.storage.sqlite.times import decode_datetime, encode_datetime

# A title's words weigh twice a body's; the readers weigh nothing.
SCORE = "-bm25(search_index, 2.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0.0)"
# From the body where it matches, else the title (the readers column is never shown).
_BODY_SNIPPET = "snippet(search_index, 1, '[', ']', '…', 32)"
SNIPPET = (
    f"CASE WHEN instr({_BODY_SNIPPET}, '[') THEN {_BODY_SNIPPET} "
    "ELSE snippet(search_index, 0, '[', ']', '…', 32) END"
)
# Who may read an entry, as the index holds it: 'relay0everyone',
# and 'relay0a'/'relay0r' with the hex of each agent and room id that may (the tokenizer keeps
# them whole; no text holds them, so the words need no column filter, which cost a search 15%).
READERS = (
    "trim(CASE WHEN audience = '*' THEN 'relay0everyone ' ELSE '' END"
    " || CASE WHEN audience IS NOT NULL AND audience != '*' THEN 'relay0a' || hex(audience) || ' '"
    " ELSE '' END"
    " || CASE WHEN from_agent IS NOT NULL THEN 'relay0a' || hex(from_agent) || ' ' ELSE '' END"
    " || CASE WHEN to_agent IS NOT NULL THEN 'relay0a' || hex(to_agent) || ' ' ELSE '' END"
    " || CASE WHEN room_id IS NOT NULL THEN 'relay0r' || hex(room_id) ELSE '' END)"
)
MY_ROOMS = "SELECT room_id FROM room_members WHERE agent_id = ?"
# What an agent may read, tested on each match's stored columns.
READABLE = (
    "(audience = '*' OR audience = :me OR from_agent = :me OR to_agent = :me "
    "OR room_id IN (SELECT room_id FROM room_members WHERE agent_id = :me))"
)
# Up to this many matches of the words, an agent's search tests each on its stored columns
# (a read of its row, about a microsecond); past it, the index finds what the agent may read
# (its readers' words), which costs the same however many matches are hidden from it but more
# than the reads below it: the readers' lists are long, and BM25 counts each of them.
FEW_MATCHES = 1000
COUNT_MATCHES = (
    "SELECT count(*) FROM (SELECT 1 FROM search_index WHERE search_index MATCH ? "
    f"LIMIT {FEW_MATCHES + 1})"
)
AFTER = (
    f"({SCORE} < :score OR ({SCORE} = :score AND (created_at < :at "
    "OR (created_at = :at AND rowid < :key))))"
)


QUEUE = "search_queue"
_ENTRY = "kind, ref_id, title, body, from_agent, to_agent, room_id, audience, created_at"
INDEX_QUEUED = (
    f"DELETE FROM search_index WHERE rowid IN (SELECT key FROM {QUEUE} WHERE replaces)",
    f"INSERT INTO search_index (rowid, {_ENTRY}, readers) "
    f"SELECT key, {_ENTRY}, {READERS} FROM {QUEUE}",
    f"DELETE FROM {QUEUE}",
)


def index_queued(conn: sqlite3.Connection) -> None:
    """Move the entries the open transaction queued into the index (none: three empty reads)."""
    for statement in INDEX_QUEUED:
        conn.execute(statement)


def has_queue(conn: sqlite3.Connection) -> bool:
    """Whether this store's index is kept through the queue (a store without the index has
    neither)."""
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (QUEUE,))
    return found.fetchone() is not None


T = TypeVar("T")
# A search reads hundreds of scattered rows and its words' doclists (7 MB for a common pair in a
# million messages): in SQLite's default cache (2 MB) they were read from the OS again each time.
SEARCH_CACHE_KIB = 16_384


class SearchThreads:
    """Where searches run: a thread a core, each with a read connection of its own.

    Off the event loop, the other requests are answered meanwhile, and searches use every core
    (SQLite lets go of the interpreter's lock as it steps). However many searches wait, no more
    connections than threads read the file for them, each with a page cache of its own."""

    def __init__(
        self, connect: Callable[[], sqlite3.Connection], threads: int | None = None
    ) -> None:
        self._connect = connect
        self._threads = ThreadPoolExecutor(
            threads or os.cpu_count(), thread_name_prefix="relay-sqlite-search"
        )
        self._mine = threading.local()
        self._conns: list[sqlite3.Connection] = []

    async def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work`` on a search thread's connection. Should the caller leave first, the work
        does not start, or its statement is interrupted."""
        job = _Job(work, self._connection)
        running = asyncio.get_running_loop().run_in_executor(self._threads, job.run)
        try:
            return await asyncio.shield(running)
        except asyncio.CancelledError:
            job.abandon()
            running.add_done_callback(lambda done: done.cancelled() or done.exception())
            raise

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._mine, "conn", None)
        if conn is None:
            conn = self._mine.conn = self._connect()
            conn.execute("PRAGMA query_only=ON")
            conn.execute(f"PRAGMA cache_size=-{SEARCH_CACHE_KIB}")
            self._conns.append(conn)
        return conn

    def close(self) -> None:
        self._threads.shutdown(wait=True)
        for conn in self._conns:
            conn.close()
        self._conns.clear()


class _Job(Generic[T]):
    """One search on a search thread, which its caller may abandon."""

    def __init__(
        self, work: Callable[[sqlite3.Connection], T], connection: Callable[[], sqlite3.Connection]
    ) -> None:
        self._work = work
        self._connection = connection
        self._lock = threading.Lock()
        self._abandoned = False
        self._running: sqlite3.Connection | None = None

    def run(self) -> T:
        with self._lock:
            if self._abandoned:
                raise sqlite3.OperationalError("interrupted")
            conn = self._running = self._connection()
        try:
            return self._work(conn)
        finally:
            with self._lock:  # the thread's next job is not this caller's to interrupt
                self._running = None

    def abandon(self) -> None:
        with self._lock:
            self._abandoned = True
            if self._running is not None:
                self._running.interrupt()


class SqliteSearch:
    """The search index, searched on ``searches``' threads and connections (each statement a
    transaction of its own: the operator's snippets are made by a second, which finds the
    first's entries, or, for an entry changed in between, its new text or none)."""

    def __init__(self, searches: SearchThreads) -> None:
        self._searches = searches

    async def search(self, spec: SearchSpec) -> list[SearchRow]:
        return await self._searches.run(lambda conn: self._search(conn, spec))

    def _search(self, conn: sqlite3.Connection, spec: SearchSpec) -> list[SearchRow]:
        match = fts5(spec.query)
        by_index = False
        if spec.reader is not None and _many(conn, match):
            match += f" AND ({' OR '.join(_readers(conn, spec.reader))})"
            by_index = True
        where, params = _conditions(spec, by_index)
        # What an agent may read is few of the matches (its messages, its rooms' posts): their
        # snippets cost less made as they are ranked than by a second MATCH for the page's.
        # Every match is the operator's: a snippet for each would cost more than that MATCH.
        inline = spec.reader is not None
        found = conn.execute(
            f"SELECT rowid, kind, ref_id, title, {SCORE}, created_at, from_agent, room_id, "
            f"{SNIPPET if inline else 'NULL'} "
            f"FROM search_index WHERE search_index MATCH :match{where} "
            f"ORDER BY 5 DESC, created_at DESC, rowid DESC LIMIT +:limit",
            params | {"match": match, "limit": spec.limit},
        ).fetchall()
        snippets = {} if inline else _snippets(conn, match, [row[0] for row in found])
        return [
            SearchRow(
                key,
                kind,
                ref_id,
                title,
                (snippet if inline else snippets.get(key, ""))[:SNIPPET_CHARS],
                score,
                decode_datetime(at),
                by,
                room,
            )
            for key, kind, ref_id, title, score, at, by, room, snippet in found
        ]


def _snippets(conn: sqlite3.Connection, match: str, keys: list[int]) -> dict[int, str]:
    """Each hit's snippet, made for the page's hits only (not for every match)."""
    if not keys:
        return {}
    marks = ", ".join("?" for _ in keys)
    rows = conn.execute(
        f"SELECT rowid, {SNIPPET} FROM search_index "
        f"WHERE search_index MATCH ? AND rowid IN ({marks})",
        [match, *keys],
    )
    return dict(rows.fetchall())


def _many(conn: sqlite3.Connection, match: str) -> bool:
    """Whether the words match more than ``FEW_MATCHES`` entries (counted in the index alone,
    stopping there)."""
    (count,) = conn.execute(COUNT_MATCHES, (match,)).fetchone()
    return bool(count > FEW_MATCHES)


def _readers(conn: sqlite3.Connection, agent_id: str) -> list[str]:
    """The readers' words an agent's search asks for: everyone's, its own, its rooms'."""
    rooms = [room for (room,) in conn.execute(MY_ROOMS, (agent_id,))]
    mine = "relay0a" + agent_id.encode().hex()
    return ["relay0everyone", mine, *("relay0r" + room.encode().hex() for room in rooms)]


def _conditions(spec: SearchSpec, by_index: bool) -> tuple[str, dict[str, Any]]:
    """The filters of ``spec`` as SQL (each starting with AND), and their parameters; what the
    reader may read among them unless the index finds it (``by_index``)."""
    where: list[str] = []
    params: dict[str, Any] = {}
    kinds = {f"kind{n}": kind for n, kind in enumerate(spec.kinds)}
    where.append(f"kind IN ({', '.join(':' + name for name in kinds)})")
    params |= kinds
    if spec.reader is not None and not by_index:
        where.append(READABLE)
        params["me"] = spec.reader
    if spec.agent_id is not None:
        where.append("from_agent = :agent")
        params["agent"] = spec.agent_id
    if spec.room_id is not None:
        where.append("room_id = :room")
        params["room"] = spec.room_id
    for name, value, op in (("since", spec.since, ">="), ("until", spec.until, "<")):
        if value is not None:
            where.append(f"created_at {op} :{name}")
            params[name] = encode_datetime(value)
    if spec.after is not None:
        score, at, key = spec.after
        where.append(AFTER)
        params |= {"score": score, "at": encode_datetime(at), "key": key}
    return "".join(f" AND {condition}" for condition in where), params
