"""The rooms, spaces and room threads stores: every named statement of ``queries/rooms.sql``,
``spaces.sql`` and ``room_threads.sql`` run through its store method on both adapters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from relay_api import models as m
from relay_core import records
from relay_core.ports import StaleWrite, Storage

NOW = datetime(2026, 11, 28, 15, 0, 1, 5, tzinfo=UTC)


async def test_rooms_and_their_members(storage: Storage) -> None:
    async with storage.unit_of_work(write=True) as uow:
        for agent_id in ("ada", "bob"):
            await uow.agents.insert(m.Agent(agent_id=agent_id, created_at=NOW, updated_at=NOW))
        await uow.spaces.insert(m.Space(space_id="s1", name="S1", created_at=NOW))
        await uow.spaces.insert(m.Space(space_id="s2", name="S2", created_at=NOW))
        made = [
            await uow.rooms.insert(
                m.Room(
                    room_id=room_id,
                    name=room_id.upper(),
                    created_by="ada",
                    created_at=NOW,
                    **fields,
                )
            )
            for room_id, fields in [
                ("a", {"space_id": "s1", "topic": "t"}),
                ("b", {}),
                ("c", {"space_id": "s2"}),
                ("d", {"space_id": "s1", "platform_thread_id": "legacy"}),
            ]
        ]
        joined = await uow.rooms.join(m.RoomMember(room_id="a", agent_id="bob", joined_at=NOW))
        await uow.rooms.join(m.RoomMember(room_id="c", agent_id="bob", joined_at=NOW))
        await uow.commit()
    assert joined.member_id > 0
    async with storage.unit_of_work(write=False) as uow:
        assert await uow.rooms.get("a") == made[0] and await uow.rooms.get("zz") is None
        assert await uow.rooms.page(None, 3) == made[:3]
        assert await uow.rooms.page("b", 3) == made[2:]
        assert await uow.rooms.in_spaces(["s1"]) == [made[0], made[3]]
        assert await uow.rooms.in_spaces([]) == []
        assert (await uow.rooms.is_member("a", "bob"), await uow.rooms.is_member("b", "bob")) == (
            True,
            False,
        )
        assert await uow.rooms.rooms_of("bob") == ["a", "c"]
        assert await uow.rooms.rooms_of("ada") == []
        assert await uow.rooms.membership("a", "bob") == joined
        assert await uow.rooms.membership("a", "ada") is None
    with pytest.raises(StaleWrite):  # one membership an agent and room
        async with storage.unit_of_work(write=True) as uow:
            await uow.rooms.join(m.RoomMember(room_id="a", agent_id="bob", joined_at=NOW))


async def test_spaces_archived_once_and_paged(storage: Storage) -> None:
    later = NOW + timedelta(minutes=1)
    async with storage.unit_of_work(write=True) as uow:
        made = [
            await uow.spaces.insert(m.Space(space_id=f"s{n}", name=str(n), created_at=NOW))
            for n in range(3)
        ]
        archived = await uow.spaces.archive("s1", later)
        assert await uow.spaces.archive("s1", later) is None  # archived before
        assert await uow.spaces.archive("nowhere", later) is None
        await uow.commit()
    assert archived is not None and (archived.status, archived.archived_at) == ("archived", later)
    async with storage.unit_of_work(write=False) as uow:
        assert await uow.spaces.get("s1") == archived and await uow.spaces.get("x") is None
        assert await uow.spaces.page(None, 10, archived=True) == [made[0], archived, made[2]]
        assert await uow.spaces.page(None, 10, archived=False) == [made[0], made[2]]
        assert await uow.spaces.page("s0", 1, archived=False) == [made[2]]
        assert await uow.spaces.active() == [made[0], made[2]]


async def test_room_threads_by_room_and_by_platform(storage: Storage) -> None:
    def thread(room_id: str, bridge: str, platform: str) -> records.RoomThread:
        return records.RoomThread(
            room_id=room_id, bridge=bridge, platform_thread_id=platform, created_at=NOW
        )

    async with storage.unit_of_work(write=True) as uow:
        await uow.room_threads.insert(thread("a", "telegram", "7"))
        await uow.room_threads.insert(thread("a", "matrix", "!x:hs"))
        await uow.room_threads.insert(thread("b", "telegram", "9"))
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        of_a = await uow.room_threads.of_room("a")
        on_telegram = await uow.room_threads.on_bridge("telegram")
    assert [(t.bridge, t.platform_thread_id) for t in of_a] == [
        ("telegram", "7"),
        ("matrix", "!x:hs"),
    ]
    assert [(t.room_id, t.platform_thread_id) for t in on_telegram] == [("a", "7"), ("b", "9")]
    assert all(t.thread_key > 0 and t.created_at == NOW for t in of_a)
