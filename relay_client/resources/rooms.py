"""``client.rooms``: list, join, read."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from relay_client._base import compact
from relay_client.resources._resource import AsyncResource, SyncResource, segment
from relay_core.models import Room, RoomMember, RoomMessagesResponse, RoomsResponse


class Rooms(SyncResource):
    """Rooms (sync)."""

    def join(self, room_id: str, *, agent_id: str | None = None) -> RoomMember:
        """Join a room (it is created if it does not exist)."""
        path = f"/v1/rooms/{segment(room_id)}/join"
        return self._client.request(
            "POST", path, RoomMember, json={"agent_id": self._agent(agent_id)}
        )

    def messages(self, room_id: str, *, limit: int | None = None) -> RoomMessagesResponse:
        """The newest messages of a room, oldest of them first."""
        path = f"/v1/rooms/{segment(room_id)}/messages"
        return self._client.request("GET", path, RoomMessagesResponse, params=compact(limit=limit))

    def list(self, *, limit: int | None = None, cursor: str | None = None) -> RoomsResponse:
        """One page of rooms, by id."""
        params = compact(limit=limit, cursor=cursor)
        return self._client.request("GET", "/v1/rooms", RoomsResponse, params=params)

    def iterate(self, *, limit: int | None = None) -> Iterator[Room]:
        """Every room, page after page."""
        for page in self._pages("/v1/rooms", RoomsResponse, compact(limit=limit)):
            yield from page.rooms


class AsyncRooms(AsyncResource):
    """Rooms (async)."""

    async def join(self, room_id: str, *, agent_id: str | None = None) -> RoomMember:
        """Join a room (it is created if it does not exist)."""
        path = f"/v1/rooms/{segment(room_id)}/join"
        body = {"agent_id": self._agent(agent_id)}
        return await self._client.request("POST", path, RoomMember, json=body)

    async def messages(self, room_id: str, *, limit: int | None = None) -> RoomMessagesResponse:
        """The newest messages of a room, oldest of them first."""
        path = f"/v1/rooms/{segment(room_id)}/messages"
        params = compact(limit=limit)
        return await self._client.request("GET", path, RoomMessagesResponse, params=params)

    async def list(self, *, limit: int | None = None, cursor: str | None = None) -> RoomsResponse:
        """One page of rooms, by id."""
        params = compact(limit=limit, cursor=cursor)
        return await self._client.request("GET", "/v1/rooms", RoomsResponse, params=params)

    async def iterate(self, *, limit: int | None = None) -> AsyncIterator[Room]:
        """Every room, page after page."""
        async for page in self._pages("/v1/rooms", RoomsResponse, compact(limit=limit)):
            for item in page.rooms:
                yield item
