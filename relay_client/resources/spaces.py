"""``client.spaces``: list, create, add a room, sync, archive (all but list: operator only)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from relay_client._base import compact
from relay_client.resources._resource import AsyncResource, SyncResource
from relay_core import operations as ops
from relay_core.models import Room, Space, SpacesResponse, SpaceSyncReport


class Spaces(SyncResource):
    """Spaces (sync)."""

    def create(
        self, name: str, *, space_id: str | None = None, description: str | None = None
    ) -> Space:
        """Create a space (its id is derived from the name when not given)."""
        body = compact(name=name, space_id=space_id, description=description)
        return self._client.call(ops.SPACES_CREATE, json=body)

    def add_room(
        self, space_id: str, name: str, *, room_id: str | None = None, topic: str | None = None
    ) -> Room:
        """Create a room inside a space."""
        body = compact(name=name, room_id=room_id, topic=topic)
        return self._client.call(ops.SPACES_ADD_ROOM, {"space_id": space_id}, json=body)

    def sync(self) -> SpaceSyncReport:
        """Reconcile spaces and rooms with the operator platform."""
        return self._client.call(ops.SPACES_SYNC)

    def archive(self, space_id: str) -> Space:
        """Archive a space (one-way; its rooms become read-only)."""
        return self._client.call(ops.SPACES_ARCHIVE, {"space_id": space_id})

    def list(
        self, *, include_archived: bool = False, limit: int | None = None, cursor: str | None = None
    ) -> SpacesResponse:
        """One page of spaces, by id, archived ones on request."""
        params = compact(
            include_archived="true" if include_archived else "false", limit=limit, cursor=cursor
        )
        return self._client.call(ops.SPACES_LIST, params=params)

    def iterate(
        self, *, include_archived: bool = False, limit: int | None = None
    ) -> Iterator[Space]:
        """Every space, archived ones on request, page after page."""
        for page in self._pages(
            ops.SPACES_LIST,
            compact(include_archived="true" if include_archived else "false", limit=limit),
        ):
            yield from page.spaces


class AsyncSpaces(AsyncResource):
    """Spaces (async)."""

    async def create(
        self, name: str, *, space_id: str | None = None, description: str | None = None
    ) -> Space:
        """Create a space (its id is derived from the name when not given)."""
        body = compact(name=name, space_id=space_id, description=description)
        return await self._client.call(ops.SPACES_CREATE, json=body)

    async def add_room(
        self, space_id: str, name: str, *, room_id: str | None = None, topic: str | None = None
    ) -> Room:
        """Create a room inside a space."""
        body = compact(name=name, room_id=room_id, topic=topic)
        return await self._client.call(ops.SPACES_ADD_ROOM, {"space_id": space_id}, json=body)

    async def sync(self) -> SpaceSyncReport:
        """Reconcile spaces and rooms with the operator platform."""
        return await self._client.call(ops.SPACES_SYNC)

    async def archive(self, space_id: str) -> Space:
        """Archive a space (one-way; its rooms become read-only)."""
        return await self._client.call(ops.SPACES_ARCHIVE, {"space_id": space_id})

    async def list(
        self, *, include_archived: bool = False, limit: int | None = None, cursor: str | None = None
    ) -> SpacesResponse:
        """One page of spaces, by id, archived ones on request."""
        params = compact(
            include_archived="true" if include_archived else "false", limit=limit, cursor=cursor
        )
        return await self._client.call(ops.SPACES_LIST, params=params)

    async def iterate(
        self, *, include_archived: bool = False, limit: int | None = None
    ) -> AsyncIterator[Space]:
        """Every space, archived ones on request, page after page."""
        async for page in self._pages(
            ops.SPACES_LIST,
            compact(include_archived="true" if include_archived else "false", limit=limit),
        ):
            for item in page.spaces:
                yield item
