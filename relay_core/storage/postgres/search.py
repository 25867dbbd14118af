"""Search on PostgreSQL: ``search_docs``, kept by triggers as rows are written,
with a generated ``tsvector`` of the words of its title (weight A) and body (B) and its GIN
index, and a generated array of who may read it and its GIN index; ``ts_rank``
ranks, ``ts_headline`` shows the page's hits."""

from __future__ import annotations

from typing import Any

from relay_core.ports import SearchRow, SearchSpec
from relay_core.search_query import SNIPPET_CHARS, tsquery
from relay_core.storage.postgres.transaction import Transaction

HEADLINE = (
    "StartSel=[, StopSel=], MaxWords=35, MinWords=15, ShortWord=0, MaxFragments=1, "
    'FragmentDelimiter=" … "'
)


class PgSearch:
    """The search index in one unit of work's transaction."""

    def __init__(self, tx: Transaction) -> None:
        self._tx = tx

    async def search(self, spec: SearchSpec) -> list[SearchRow]:
        params: list[Any] = [tsquery(spec.query), list(spec.kinds)]

        def param(value: Any) -> str:
            params.append(value)
            return f"${len(params)}"

        where = ["d.document @@ q", "d.kind = ANY($2)"]
        if spec.reader is not None:
            # What the agent may read, found by the readers' GIN index beside the words':
            # everyone's entries, its own, its rooms'.
            me = param(spec.reader)
            where.append(
                f"d.readers && (ARRAY['*', 'a:' || {me}] || ARRAY(SELECT 'r:' || room_id "
                f"FROM room_members WHERE agent_id = {me}))"
            )
        if spec.agent_id is not None:
            where.append(f"d.from_agent = {param(spec.agent_id)}")
        if spec.room_id is not None:
            where.append(f"d.room_id = {param(spec.room_id)}")
        if spec.since is not None:
            where.append(f"d.created_at >= {param(spec.since)}")
        if spec.until is not None:
            where.append(f"d.created_at < {param(spec.until)}")
        after = ""
        if spec.after is not None:
            score, at, key = (param(value) for value in spec.after)
            after = (
                f"WHERE score < {score} OR (score = {score} AND (created_at < {at} "
                f"OR (created_at = {at} AND key < {key})))"
            )
        limit = param(spec.limit)
        order = "ORDER BY score DESC, created_at DESC, key DESC"
        hits = (
            "SELECT d.key, d.kind, d.ref_id, d.title, d.body, d.created_at, d.from_agent, "
            "d.room_id, q, ts_rank(d.document, q)::float8 AS score "
            "FROM search_docs d, to_tsquery('simple', $1) q "
            f"WHERE {' AND '.join(where)}"
        )
        # The headline is made for the page's hits only, once they are chosen.
        text = (
            "SELECT key, kind, ref_id, title, score, created_at, from_agent, room_id, "
            f"ts_headline('simple', concat_ws(' · ', title, nullif(body, '')), q, '{HEADLINE}') "
            f"FROM (SELECT * FROM ({hits}) AS hits {after} {order} LIMIT {limit}) AS page {order}"
        )
        conn = await self._tx.ready()
        rows = await conn.fetch(text, *params)
        return [
            SearchRow(key, kind, id_, title, headline[:SNIPPET_CHARS], score, at, by, room)
            for key, kind, id_, title, score, at, by, room, headline in rows
        ]
