"""The room threads store: each room's place on an operator platform (a forum topic, a Matrix
room). Each method runs one named statement of ``sqlite/queries/room_threads.sql`` or
``postgres/queries/room_threads.sql``."""

from __future__ import annotations

from relay_core import records
from relay_core.storage.queries import Statements


class RoomThreadsStore:
    """Room threads in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def insert(self, thread: records.RoomThread) -> None:
        await self._sql.run("insert_room_thread", **vars(thread))

    async def of_room(self, room_id: str) -> list[records.RoomThread]:
        """The room's places on the platforms."""
        return await self._sql.records(records.RoomThread, "room_threads_of_room", room_id=room_id)

    async def on_bridge(self, bridge: str) -> list[records.RoomThread]:
        """Every room's place on one platform."""
        return await self._sql.records(records.RoomThread, "room_threads_on_bridge", bridge=bridge)
