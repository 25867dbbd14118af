"""``client.rooms``: list, join, read."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from relay_client._base import compact
from relay_client.resources._resource import AsyncResource, SyncResource
from relay_core import operations as ops
from relay_core.models import Room, RoomMember, RoomMessagesResponse, RoomsResponse


class Rooms(SyncResource):
    """Rooms (sync)."""

    def join(self, room_id: str, *, agent_id: str | None = None) -> RoomMember:
        """Join a room (it is created if it does not exist)."""
        body = compact(agent_id=self._acting(agent_id))
        return self._client.call(ops.ROOMS_JOIN, {"room_id": room_id}, json=body)

    def messages(self, room_id: str, *, limit: int | None = None) -> RoomMessagesResponse:
        """The newest messages of a room, oldest of them first."""
        return self._client.call(
            ops.ROOMS_MESSAGES, {"room_id": room_id}, params=compact(limit=limit)
        )

    def list(self, *, limit: int | None = None, cursor: str | None = None) -> RoomsResponse:
        """One page of rooms, by id."""
        params = compact(limit=limit, cursor=cursor)
        return self._client.call(ops.ROOMS_LIST, params=params)

    def iterate(self, *, limit: int | None = None) -> Iterator[Room]:
        """Every room, page after page."""
        for page in self._pages(ops.ROOMS_LIST, compact(limit=limit)):
            yield from page.rooms


class AsyncRooms(AsyncResource):
    """Rooms (async)."""

    async def join(self, room_id: str, *, agent_id: str | None = None) -> RoomMember:
        """Join a room (it is created if it does not exist)."""
        body = compact(agent_id=self._acting(agent_id))
        return await self._client.call(ops.ROOMS_JOIN, {"room_id": room_id}, json=body)

    async def messages(self, room_id: str, *, limit: int | None = None) -> RoomMessagesResponse:
        """The newest messages of a room, oldest of them first."""
        params = compact(limit=limit)
        return await self._client.call(ops.ROOMS_MESSAGES, {"room_id": room_id}, params=params)

    async def list(self, *, limit: int | None = None, cursor: str | None = None) -> RoomsResponse:
        """One page of rooms, by id."""
        params = compact(limit=limit, cursor=cursor)
        return await self._client.call(ops.ROOMS_LIST, params=params)

    async def iterate(self, *, limit: int | None = None) -> AsyncIterator[Room]:
        """Every room, page after page."""
        async for page in self._pages(ops.ROOMS_LIST, compact(limit=limit)):
            for item in page.rooms:
                yield item
