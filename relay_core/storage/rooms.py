"""The rooms store: rooms and their members. Each method runs one named statement of
``sqlite/queries/rooms.sql`` or ``postgres/queries/rooms.sql``."""

from __future__ import annotations

from relay_api import models as m
from relay_core.storage.queries import Statements


class RoomsStore:
    """Rooms and memberships in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def get(self, room_id: str) -> m.Room | None:
        return await self._sql.record(m.Room, "get_room", room_id=room_id)

    async def insert(self, room: m.Room) -> m.Room:
        await self._sql.run("insert_room", **vars(room))
        return room

    async def page(self, after: str | None, limit: int) -> list[m.Room]:
        """Up to ``limit`` rooms by id, after ``after`` (None: from the first)."""
        return await self._sql.records(m.Room, "page_rooms", after=after, limit=limit)

    async def in_spaces(self, space_ids: list[str]) -> list[m.Room]:
        """The rooms of these spaces, by id."""
        return await self._sql.records(m.Room, "rooms_in_spaces", space_ids=space_ids)

    async def is_member(self, room_id: str, agent_id: str) -> bool:
        return bool(await self._sql.value("is_member", room_id=room_id, agent_id=agent_id))

    async def rooms_of(self, agent_id: str) -> list[str]:
        """The rooms ``agent_id`` is a member of."""
        return [room for (room,) in await self._sql.rows("rooms_of_member", agent_id=agent_id)]

    async def membership(self, room_id: str, agent_id: str) -> m.RoomMember | None:
        return await self._sql.record(
            m.RoomMember, "get_membership", room_id=room_id, agent_id=agent_id
        )

    async def join(self, member: m.RoomMember) -> m.RoomMember:
        """Store a new membership; ``member`` is given its id and returned."""
        member.member_id = await self._sql.value("insert_membership", **vars(member))
        return member
