"""``client.notify``: text to the operator, the operator's replies, and the list of both."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from relay_client._base import compact
from relay_client.resources._resource import AsyncResource, SyncResource
from relay_core import operations as ops
from relay_core.models import Message, Notification, NotificationsResponse


class Notify(SyncResource):
    """Operator notifications (sync)."""

    def send(self, text: str, *, agent_id: str | None = None) -> Notification:
        """Push text to the operator's platform; raises ``BridgeError`` if the platform fails."""
        body = compact(text=text, agent_id=agent_id)
        return self._client.call(ops.NOTIFY_SEND, json=body)

    def reply(self, platform_message_id: str, text: str) -> Message:
        """Answer a notification as the operator; the reply lands in the agent's inbox."""
        body = {"platform_message_id": platform_message_id, "text": text}
        return self._client.call(ops.NOTIFY_REPLY, json=body)

    def retry(self, notification_id: int) -> Notification:
        """Send a failed notification again."""
        return self._client.call(ops.NOTIFY_RETRY, {"notification_id": notification_id})

    def list(self, *, limit: int | None = None, cursor: str | None = None) -> NotificationsResponse:
        """One page of notifications, newest first."""
        params = compact(limit=limit, cursor=cursor)
        return self._client.call(ops.NOTIFY_LIST, params=params)

    def iterate(self, *, limit: int | None = None) -> Iterator[Notification]:
        """Every notification, newest first, page after page."""
        for page in self._pages(ops.NOTIFY_LIST, compact(limit=limit)):
            yield from page.notifications


class AsyncNotify(AsyncResource):
    """Operator notifications (async)."""

    async def send(self, text: str, *, agent_id: str | None = None) -> Notification:
        """Push text to the operator's platform; raises ``BridgeError`` if the platform fails."""
        body = compact(text=text, agent_id=agent_id)
        return await self._client.call(ops.NOTIFY_SEND, json=body)

    async def reply(self, platform_message_id: str, text: str) -> Message:
        """Answer a notification as the operator; the reply lands in the agent's inbox."""
        body = {"platform_message_id": platform_message_id, "text": text}
        return await self._client.call(ops.NOTIFY_REPLY, json=body)

    async def retry(self, notification_id: int) -> Notification:
        """Send a failed notification again."""
        return await self._client.call(ops.NOTIFY_RETRY, {"notification_id": notification_id})

    async def list(
        self, *, limit: int | None = None, cursor: str | None = None
    ) -> NotificationsResponse:
        """One page of notifications, newest first."""
        params = compact(limit=limit, cursor=cursor)
        return await self._client.call(ops.NOTIFY_LIST, params=params)

    async def iterate(self, *, limit: int | None = None) -> AsyncIterator[Notification]:
        """Every notification, newest first, page after page."""
        async for page in self._pages(ops.NOTIFY_LIST, compact(limit=limit)):
            for item in page.notifications:
                yield item
