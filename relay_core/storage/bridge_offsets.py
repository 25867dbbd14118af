"""The bridge offsets store: how far each operator platform's updates (and the webhooks'
fan-out, ``webhooks.CURSOR``) have been applied. Each method runs one named statement of
``sqlite/queries/bridge_offsets.sql`` or ``postgres/queries/bridge_offsets.sql``."""

from __future__ import annotations

from datetime import datetime

from relay_core import records
from relay_core.storage.queries import Statements


class BridgeOffsetsStore:
    """Offsets in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def get(self, bridge: str) -> records.BridgeOffset | None:
        return await self._sql.record(records.BridgeOffset, "get_bridge_offset", bridge=bridge)

    async def start(self, bridge: str, last_update_id: int, now: datetime) -> bool:
        """The first offset of ``bridge``; False if another unit stored one meanwhile."""
        started = await self._sql.run(
            "start_bridge_offset", bridge=bridge, last_update_id=last_update_id, now=now
        )
        return started == 1

    async def move(self, offset: records.BridgeOffset, to: int, now: datetime) -> bool:
        """``offset`` moved on to ``to``; False if it moved since it was read."""
        moved = await self._sql.run(
            "move_bridge_offset",
            bridge=offset.bridge,
            last_update_id=to,
            was=offset.last_update_id,
            now=now,
        )
        return moved == 1

    async def keep_cursor(self, bridge: str, cursor: str, now: datetime) -> None:
        """Where ``bridge`` resumes (a token the platform gave), offset or not."""
        await self._sql.run("keep_bridge_cursor", bridge=bridge, cursor=cursor, now=now)
