"""The events store: the feed's rows (``services/events.py`` says what the feed promises).
Each method runs one named statement of ``sqlite/queries/events.sql`` or
``postgres/queries/events.sql``."""

from __future__ import annotations

from relay_api import models as m
from relay_core.storage.queries import Statements
from relay_core.topics import FEED


class EventsStore:
    """The feed in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def add(self, event: m.Event) -> None:
        """Add ``event`` to the feed (held back on PostgreSQL: ``Statements.add``)."""
        await self._sql.add("add_event", **vars(event))

    async def newest_id(self, audiences: list[str] | None = None) -> int:
        """The id of the newest event a reader may see, 0 when there is none: where a reader
        of ``audiences`` (of every event, if None) starts; held rows wake that reader (a
        reader of audiences, through the held row's: its statement names it)."""
        if audiences is None:
            newest = await self._sql.feed(m.Event, "newest_event", (FEED,))
        else:
            newest = await self._sql.feed(m.Event, "newest_event_for", (), audiences=audiences)
        return newest[0].event_id if newest else 0

    async def after(
        self, after: int, limit: int, audiences: list[str] | None = None
    ) -> list[m.Event]:
        """Up to ``limit`` events after ``after``, oldest first; of ``audiences`` if given."""
        if audiences is None:
            return await self._sql.feed(m.Event, "events_after", (FEED,), after=after, limit=limit)
        return await self._sql.feed(
            m.Event, "events_after_for", (), after=after, audiences=audiences, limit=limit
        )
