"""Rooms: list, join, read messages."""

from __future__ import annotations

from relay_api import models as m
from relay_api.params import DEFAULT_LIMIT
from relay_core import paging
from relay_core.auth import Caller
from relay_core.ports import UnitOfWork
from relay_core.services.agents import require_agent
from relay_core.services.base import Service
from relay_core.services.messages import require_member, require_room
from relay_core.topics import membership_topic


class RoomsService(Service):
    """Rooms and their members."""

    async def list(
        self, caller: Caller, limit: int = DEFAULT_LIMIT, cursor: str | None = None
    ) -> m.RoomsResponse:
        """Rooms by id; a page at a time."""

        async def work(uow: UnitOfWork) -> m.RoomsResponse:
            after = paging.key_after(cursor, str)
            rooms, next_cursor = paging.cut(
                await uow.rooms.page(after, limit + 1), limit, lambda room: [room.room_id]
            )
            return m.RoomsResponse(rooms=rooms, next_cursor=next_cursor)

        return await self.read(work)

    async def join(self, caller: Caller, room_id: str, body: m.MessageAck) -> m.RoomMember:
        """Join a room, creating it (outside any space) when it does not exist yet."""
        agent_id = caller.the_agent(body.agent_id)

        async def work(uow: UnitOfWork) -> m.RoomMember:
            now = self.now()
            await require_agent(uow, agent_id)
            if await uow.rooms.get(room_id) is None:
                room = m.Room(room_id=room_id, name=room_id, created_by=caller.name, created_at=now)
                await uow.rooms.insert(room)
            existing = await uow.rooms.membership(room_id, agent_id)
            if existing is not None:
                return existing
            member = m.RoomMember(room_id=room_id, agent_id=agent_id, joined_at=now)
            joined = await uow.rooms.join(member)
            uow.publish(membership_topic(agent_id))  # its streams read the room from now
            return joined

        return await self.write_answer(work)

    async def messages(
        self, caller: Caller, room_id: str, limit: int = 100, thread_id: int | None = None
    ) -> m.RoomMessagesResponse:
        """The newest ``limit`` messages of a room (of one conversation, with ``thread_id``),
        oldest of them first."""

        async def work(uow: UnitOfWork) -> m.RoomMessagesResponse:
            room = await require_room(uow, room_id)
            await require_member(uow, caller, room, caller.name)
            newest = await uow.messages.room_newest(room_id, thread_id, limit)
            return m.RoomMessagesResponse.model_construct(
                room_id=room_id, messages=newest.as_field(), count=newest.length
            )

        return await self.read(work)
