"""Search on SQLite: the FTS5 table ``search_index`` (revision 0019), kept in the transaction
that writes its rows: triggers queue each entry (revision 0021) and the writer indexes the
queue just before each COMMIT (``index_queued``), a segment a transaction rather than one a
unit of work. BM25 ranks (a title's words weigh twice a body's), ``snippet()`` shows them."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any, TypeVar

from relay_core.ports import SearchRow, SearchSpec
from relay_core.search_query import SNIPPET_CHARS, fts5
from relay_core.storage.sqlite.sql import decode_datetime, encode_datetime

SCORE = "-bm25(search_index, 2.0, 1.0)"
# -1: from the column that matches best (a title, where the body does not).
SNIPPET = "snippet(search_index, -1, '[', ']', '…', 32)"
# What an agent may read: what it wrote or was sent, what everyone may, its rooms' posts.
READABLE = (
    "(audience = '*' OR audience = :me OR from_agent = :me OR to_agent = :me "
    "OR room_id IN (SELECT room_id FROM room_members WHERE agent_id = :me))"
)
AFTER = (
    f"({SCORE} < :score OR ({SCORE} = :score AND (created_at < :at "
    "OR (created_at = :at AND rowid < :key))))"
)


QUEUE = "search_queue"
_ENTRY = "kind, ref_id, title, body, from_agent, to_agent, room_id, audience, created_at"
INDEX_QUEUED = (
    f"DELETE FROM search_index WHERE rowid IN (SELECT key FROM {QUEUE} WHERE replaces)",
    f"INSERT INTO search_index (rowid, {_ENTRY}) SELECT key, {_ENTRY} FROM {QUEUE}",
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


async def in_thread(threads: Executor, conn: sqlite3.Connection, work: Callable[[], T]) -> T:
    """``work`` on ``conn``, run on one of ``threads``. Should the caller leave first, the
    statement is interrupted and waited for: the connection goes back to its pool idle."""
    running = asyncio.get_running_loop().run_in_executor(threads, work)
    try:
        return await asyncio.shield(running)
    except asyncio.CancelledError:
        while not running.done():
            conn.interrupt()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait([running])
        if not running.cancelled():
            running.exception()  # an interrupted statement's error: expected, and retrieved
        raise


class SqliteSearch:
    """The search index on one connection, searched on ``threads``."""

    def __init__(self, conn: sqlite3.Connection, threads: Executor) -> None:
        self._conn = conn
        self._threads = threads

    async def search(self, spec: SearchSpec) -> list[SearchRow]:
        return await in_thread(self._threads, self._conn, lambda: self._search(spec))

    def _search(self, spec: SearchSpec) -> list[SearchRow]:
        match = fts5(spec.query)
        where, params = _conditions(spec)
        # What an agent may read is few of the matches (its messages, its rooms' posts): their
        # snippets cost less made as they are ranked than by a second MATCH for the page's.
        # Every match is the operator's: a snippet for each would cost more than that MATCH.
        inline = spec.reader is not None
        found = self._conn.execute(
            f"SELECT rowid, kind, ref_id, title, {SCORE}, created_at, from_agent, room_id, "
            f"{SNIPPET if inline else 'NULL'} "
            f"FROM search_index WHERE search_index MATCH :match{where} "
            f"ORDER BY 5 DESC, created_at DESC, rowid DESC LIMIT :limit",
            params | {"match": match, "limit": spec.limit},
        ).fetchall()
        snippets = {} if inline else self._snippets(match, [row[0] for row in found])
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

    def _snippets(self, match: str, keys: list[int]) -> dict[int, str]:
        """Each hit's snippet, made for the page's hits only (not for every match)."""
        if not keys:
            return {}
        marks = ", ".join("?" for _ in keys)
        rows = self._conn.execute(
            f"SELECT rowid, {SNIPPET} FROM search_index "
            f"WHERE search_index MATCH ? AND rowid IN ({marks})",
            [match, *keys],
        )
        return dict(rows.fetchall())


def _conditions(spec: SearchSpec) -> tuple[str, dict[str, Any]]:
    """The filters of ``spec`` as SQL (each starting with AND), and their parameters."""
    where: list[str] = []
    params: dict[str, Any] = {}
    kinds = {f"kind{n}": kind for n, kind in enumerate(spec.kinds)}
    where.append(f"kind IN ({', '.join(':' + name for name in kinds)})")
    params |= kinds
    if spec.reader is not None:
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
