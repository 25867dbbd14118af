"""``client.events``: the feed of what happened, read by cursor (long-poll) or streamed (SSE)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from relay_client._base import compact, long_poll_timeout
from relay_client.resources._resource import AsyncResource, SyncResource
from relay_core import operations as ops
from relay_core.models import Event, EventsResponse, StreamTicket


class Events(SyncResource):
    """Event feed (sync)."""

    def list(
        self, *, after: int | None = None, wait: float | None = None, limit: int | None = None
    ) -> EventsResponse:
        """Events after the cursor (none given: from now), oldest first, with the next cursor;
        ``wait`` long-polls up to that many seconds (at most 60) for the first one."""
        params = compact(after=after, wait=wait, limit=limit)
        timeout = long_poll_timeout(wait, self._client.config.timeout)
        return self._client.call(ops.EVENTS_LIST, params=params, timeout=timeout)

    def ticket(self) -> StreamTicket:
        """A ticket that opens this caller's event stream for a minute, for a browser page:
        an EventSource on the stream's URL with ``?ticket=`` and it."""
        return self._client.call(ops.EVENTS_TICKET)

    def stream(self, *, after: int | None = None) -> Iterator[Event]:
        """Events as they commit, forever: a long-poll loop that resumes at its cursor."""
        cursor = after
        while True:
            page = self.list(after=cursor, wait=30)
            cursor = page.cursor
            yield from page.events


class AsyncEvents(AsyncResource):
    """Event feed (async)."""

    async def list(
        self, *, after: int | None = None, wait: float | None = None, limit: int | None = None
    ) -> EventsResponse:
        """Events after the cursor (none given: from now), oldest first, with the next cursor;
        ``wait`` long-polls up to that many seconds (at most 60) for the first one."""
        params = compact(after=after, wait=wait, limit=limit)
        timeout = long_poll_timeout(wait, self._client.config.timeout)
        return await self._client.call(ops.EVENTS_LIST, params=params, timeout=timeout)

    async def ticket(self) -> StreamTicket:
        """A ticket that opens this caller's event stream for a minute (see the sync twin)."""
        return await self._client.call(ops.EVENTS_TICKET)

    async def stream(self, *, after: int | None = None) -> AsyncIterator[Event]:
        """Events as they commit, forever: a long-poll loop that resumes at its cursor."""
        cursor = after
        while True:
            page = await self.list(after=cursor, wait=30)
            cursor = page.cursor
            for event in page.events:
                yield event
