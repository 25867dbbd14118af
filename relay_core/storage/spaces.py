"""The spaces store: groups of rooms. Each method runs one named statement of
``sqlite/queries/spaces.sql`` or ``postgres/queries/spaces.sql``."""

from __future__ import annotations

from datetime import datetime

from relay_api import models as m
from relay_core.storage.queries import Statements


class SpacesStore:
    """Spaces in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def get(self, space_id: str) -> m.Space | None:
        return await self._sql.record(m.Space, "get_space", space_id=space_id)

    async def insert(self, space: m.Space) -> m.Space:
        await self._sql.run("insert_space", **vars(space))
        return space

    async def archive(self, space_id: str, now: datetime) -> m.Space | None:
        """The space archived at ``now``, if it was active; else None, and nothing changed."""
        return await self._sql.record(m.Space, "archive_space", space_id=space_id, now=now)

    async def page(self, after: str | None, limit: int, *, archived: bool) -> list[m.Space]:
        """Up to ``limit`` spaces by id after ``after`` (None: from the first): the active
        ones, and with ``archived`` the archived ones too."""
        name = "page_spaces" if archived else "page_active_spaces"
        return await self._sql.records(m.Space, name, after=after, limit=limit)

    async def active(self) -> list[m.Space]:
        """Every active space, by id."""
        return await self._sql.records(m.Space, "active_spaces")
