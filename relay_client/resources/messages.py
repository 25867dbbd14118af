"""``client.messages``: send and acknowledge."""

from __future__ import annotations

from typing import Any

from relay_client._base import compact
from relay_client.resources._resource import AsyncResource, SyncResource
from relay_core import operations as ops
from relay_core.models import Message


class Messages(SyncResource):
    """Messages (sync)."""

    def send(
        self,
        text: str,
        *,
        to: str | None = None,
        room_id: str | None = None,
        subject: str | None = None,
        payload: dict[str, Any] | None = None,
        reply_to: int | None = None,
        from_agent: str | None = None,
    ) -> Message:
        """Send a direct message (``to``) or post to a room (``room_id``)."""
        body = compact(
            text=text,
            to=to,
            room_id=room_id,
            subject=subject,
            payload=payload,
            reply_to=reply_to,
            from_agent=from_agent,
        )
        return self._client.call(ops.MESSAGES_SEND, json=body)

    def ack(self, message_id: int, *, agent_id: str | None = None) -> Message:
        """Acknowledge a direct message (twice is fine)."""
        body = compact(agent_id=self._acting(agent_id))
        return self._client.call(ops.MESSAGES_ACK, {"message_id": message_id}, json=body)


class AsyncMessages(AsyncResource):
    """Messages (async)."""

    async def send(
        self,
        text: str,
        *,
        to: str | None = None,
        room_id: str | None = None,
        subject: str | None = None,
        payload: dict[str, Any] | None = None,
        reply_to: int | None = None,
        from_agent: str | None = None,
    ) -> Message:
        """Send a direct message (``to``) or post to a room (``room_id``)."""
        body = compact(
            text=text,
            to=to,
            room_id=room_id,
            subject=subject,
            payload=payload,
            reply_to=reply_to,
            from_agent=from_agent,
        )
        return await self._client.call(ops.MESSAGES_SEND, json=body)

    async def ack(self, message_id: int, *, agent_id: str | None = None) -> Message:
        """Acknowledge a direct message (twice is fine)."""
        body = compact(agent_id=self._acting(agent_id))
        return await self._client.call(ops.MESSAGES_ACK, {"message_id": message_id}, json=body)
