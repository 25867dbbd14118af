"""The built-in bridge: notifications stay in Relay's own store and replies come through the API.

It needs no platform, so the whole notify → reply loop works on the embedded default. Its
platform message id is derived from the notification id, which the store already keeps unique.
"""

from __future__ import annotations

from relay_api import models as m
from relay_core.ports import BridgeCapabilities


class LocalBridge:
    """Stores instead of sending; the operator answers with ``POST /v1/notify/replies``."""

    name = "local"
    capabilities = BridgeCapabilities(topics=False, replies=True, cards=False)

    async def send(self, text: str, *, reference: str) -> str:
        return f"local-{reference}"

    async def ensure_topic(self, room: m.Room, space: m.Space | None) -> str:
        return f"local-room-{room.room_id}"

    async def start(self) -> None:
        return None

    async def mirror(self, platform_thread_id: str, text: str) -> None:
        return None

    async def ask(self, approval: m.Approval) -> str | None:
        return None  # the operator decides with the CLI, the console or the API

    async def settle(self, platform_message_id: str, approval: m.Approval) -> None:
        return None

    async def remind(self, platform_message_id: str, approval: m.Approval) -> None:
        return None  # nothing is shown here: the console lists what waits

    async def answered(self, platform_message_id: str, text: str, answer: str) -> None:
        return None

    async def close(self) -> None:
        return None
