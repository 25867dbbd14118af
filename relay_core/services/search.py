"""Search: what agents and the operator wrote, found by its words, as far as the caller may
read it."""

from __future__ import annotations

from datetime import UTC, datetime

from relay_api import models as m
from relay_api.errors import InvalidInput
from relay_api.params import SEARCH_KINDS
from relay_core import paging, search_query
from relay_core.auth import Caller
from relay_core.ports import SearchSpec, UnitOfWork
from relay_core.services.base import Service


class SearchService(Service):
    """Full-text search over messages, room posts, tasks, approvals and actions."""

    async def search(
        self,
        caller: Caller,
        q: str,
        kinds: str | None = None,
        agent_id: str | None = None,
        room_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 20,
        cursor: str | None = None,
    ) -> m.SearchResponse:
        """What answers ``q``, best first (then newer first); a page at a time. An agent finds
        only what it could read through the API; the operator finds everything."""
        since, until = _utc(since), _utc(until)
        if since is not None and until is not None and since >= until:
            raise InvalidInput("until", "until must come after since")
        spec = SearchSpec(
            query=search_query.parse(q),
            kinds=tuple(kinds.split(",")) if kinds else SEARCH_KINDS,
            reader=None if caller.is_operator else caller.name,
            agent_id=agent_id,
            room_id=room_id,
            since=since,
            until=until,
            after=paging.decode(cursor, (float, datetime, int)) if cursor else None,
            limit=limit + 1,
        )

        async def work(uow: UnitOfWork) -> m.SearchResponse:
            found = await uow.search_index.search(spec)
            hits = [m.SearchHit.model_validate(row._asdict()) for row in found[:limit]]
            last = found[limit - 1] if len(found) > limit else None
            next_cursor = paging.encode([last.score, last.created_at, last.key]) if last else None
            return m.SearchResponse(hits=hits, next_cursor=next_cursor)

        return await self.read(work)


def _utc(value: datetime | None) -> datetime | None:
    """A time given without a zone, taken as UTC (as the stores keep theirs)."""
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value
