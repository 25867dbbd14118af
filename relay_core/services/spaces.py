"""Spaces: list, create, add a room, sync with the operator platform, archive."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from relay_api import models as m
from relay_api.errors import BridgeError, Conflict, NotFound
from relay_api.params import DEFAULT_LIMIT
from relay_core import paging, records
from relay_core.auth import Caller
from relay_core.ports import Bridge, StaleWrite, UnitOfWork
from relay_core.services.base import Service


async def derive_id(name: str, fallback: str, exists: Callable[[str], Awaitable[Any]]) -> str:
    """A readable id from a name (``Ops Team`` → ``ops-team``), suffixed until it is free."""
    base = re.sub(r"[^a-z0-9._:@-]+", "-", name.lower()).strip("-._:@")[:100] or fallback
    candidate, n = base, 1
    while await exists(candidate) is not None:
        n += 1
        candidate = f"{base}-{n}"
    return candidate


async def new_id(
    given: str | None, name: str, kind: str, exists: Callable[[str], Awaitable[Any]]
) -> str:
    """The id given (a conflict when taken), else one derived from the name."""
    if given is None:
        return await derive_id(name, kind, exists)
    if await exists(given) is not None:
        raise Conflict(f"{kind} '{given}' already exists")
    return given


async def require_space(uow: UnitOfWork, space_id: str) -> m.Space:
    """The space, or NotFound."""
    space = await uow.spaces.get(space_id)
    if space is None:
        raise NotFound(f"space '{space_id}' does not exist")
    return space


class SpacesService(Service):
    """Spaces group rooms; the operator manages them."""

    async def list(
        self,
        caller: Caller,
        include_archived: bool = False,
        limit: int = DEFAULT_LIMIT,
        cursor: str | None = None,
    ) -> m.SpacesResponse:
        """Active spaces by id, and archived ones on request; a page at a time."""

        async def work(uow: UnitOfWork) -> m.SpacesResponse:
            after = paging.key_after(cursor, str)
            found = await uow.spaces.page(after, limit + 1, archived=include_archived)
            spaces, next_cursor = paging.cut(found, limit, lambda space: [space.space_id])
            return m.SpacesResponse(spaces=spaces, next_cursor=next_cursor)

        return await self.read(work)

    async def create(self, caller: Caller, body: m.SpaceCreate) -> m.Space:
        """Create a space; its id is derived from the name when not given."""

        async def work(uow: UnitOfWork) -> m.Space:
            space_id = await new_id(body.space_id, body.name, "space", uow.spaces.get)
            space = m.Space(
                space_id=space_id,
                name=body.name,
                description=body.description,
                created_at=self.now(),
            )
            return await uow.spaces.insert(space)

        return await self.write_answer(work)

    async def add_room(
        self,
        caller: Caller,
        space_id: str,
        body: m.RoomInSpaceCreate,
    ) -> m.Room:
        """Create a room inside a space that is not archived."""

        async def work(uow: UnitOfWork) -> m.Room:
            space = await require_space(uow, space_id)
            if space.status == "archived":
                raise Conflict(f"space '{space_id}' is archived; no rooms can be added")
            room_id = await new_id(body.room_id, body.name, "room", uow.rooms.get)
            room = m.Room(
                room_id=room_id,
                name=body.name,
                topic=body.topic,
                space_id=space_id,
                created_by=caller.name,
                created_at=self.now(),
            )
            return await uow.rooms.insert(room)

        return await self.write_answer(work)

    async def archive(self, caller: Caller, space_id: str) -> m.Space:
        """Archive a space (one-way); its rooms become read-only. Archiving twice is a no-op."""

        async def work(uow: UnitOfWork) -> m.Space:
            space = await require_space(uow, space_id)
            if space.status == "archived":
                return space
            archived = await uow.spaces.archive(space_id, self.now())
            if archived is None:
                raise StaleWrite("space changed")
            return archived

        return await self.write(work)

    async def sync(self, caller: Caller) -> m.SpaceSyncReport:
        """Give every room of an active space its place on every operator platform that has
        threads (a forum topic; a Matrix room in a Matrix space): made once, found after."""

        async def rooms_of_active_spaces(uow: UnitOfWork) -> list[tuple[m.Room, m.Space]]:
            active = {s.space_id: s for s in await uow.spaces.active()}
            rooms = await uow.rooms.in_spaces(list(active)) if active else []
            return [(room, active[room.space_id]) for room in rooms if room.space_id]

        rooms = await self.read(rooms_of_active_spaces)
        reports = [await self._sync_on(bridge, rooms) for bridge in self.ctx.bridges]
        return reports[0].model_copy(update={"bridges": reports})

    async def _sync_on(
        self, bridge: Bridge, rooms: Sequence[tuple[m.Room, m.Space]]
    ) -> m.SpaceSyncReport:
        report = m.SpaceSyncReport(bridge=bridge.name, supports_topics=bridge.capabilities.topics)
        if not bridge.capabilities.topics:
            report.found = [room.room_id for room, _ in rooms]
            report.detail = f"the '{bridge.name}' bridge has no topics; nothing to create"
            return report
        known = await self.read(lambda uow: threads_of(uow, bridge.name))
        for room, space in rooms:
            if room.room_id in known:
                report.found.append(room.room_id)
                continue
            try:
                thread_id = await bridge.ensure_topic(room, space)
            except BridgeError as exc:
                report.failed.append(m.SyncFailure(room_id=room.room_id, error=exc.detail))
                continue
            await self._record_thread(room.room_id, bridge.name, thread_id)
            report.created.append(room.room_id)
        return report

    async def _record_thread(self, room_id: str, bridge: str, thread_id: str) -> None:
        async def work(uow: UnitOfWork) -> None:
            thread = records.RoomThread(
                room_id=room_id, bridge=bridge, platform_thread_id=thread_id, created_at=self.now()
            )
            await uow.room_threads.insert(thread)

        await self.write(work)


async def threads_of(uow: UnitOfWork, bridge: str) -> dict[str, str]:
    """Every room's thread on that platform, by room id."""
    return {t.room_id: t.platform_thread_id for t in await uow.room_threads.on_bridge(bridge)}
