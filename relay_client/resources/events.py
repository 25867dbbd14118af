"""``client.events``: the generated feed reads, and the stream written by hand on top of them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from relay_api.models import Event
from relay_client.resources import _generated


class Events(_generated.Events):
    """``client.events`` (sync)."""

    def stream(self, *, after: int | None = None) -> Iterator[Event]:
        """Events as they commit, forever: a long-poll loop that resumes at its cursor."""
        cursor = after
        while True:
            page = self.list(after=cursor, wait=30)
            cursor = page.cursor
            yield from page.events


class AsyncEvents(_generated.AsyncEvents):
    """``client.events`` (async)."""

    async def stream(self, *, after: int | None = None) -> AsyncIterator[Event]:
        """Events as they commit, forever: a long-poll loop that resumes at its cursor."""
        cursor = after
        while True:
            page = await self.list(after=cursor, wait=30)
            cursor = page.cursor
            for event in page.events:
                yield event
