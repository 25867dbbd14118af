"""The notifications store. Each method runs one named statement of
``sqlite/queries/notifications.sql`` or ``postgres/queries/notifications.sql``."""

from __future__ import annotations

from datetime import datetime

from relay_api import models as m
from relay_core.storage.queries import Statements


class NotificationsStore:
    """Notifications in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def get(self, notification_id: int) -> m.Notification | None:
        return await self._sql.record(
            m.Notification, "get_notification", notification_id=notification_id
        )

    async def insert(self, notification: m.Notification) -> m.Notification:
        """Store a new notification; ``notification`` is given its id and returned."""
        notification.notification_id = await self._sql.value(
            "insert_notification", **vars(notification)
        )
        return notification

    async def on_platform(self, bridge: str, platform_message_id: str) -> m.Notification | None:
        """The notification that names this platform message itself (one sent before posts
        were kept)."""
        return await self._sql.record(
            m.Notification,
            "notification_on_platform",
            bridge=bridge,
            platform_message_id=platform_message_id,
        )

    async def mark_sent(
        self, notification_id: int, delivered: m.Delivery, sent_at: datetime
    ) -> m.Notification | None:
        """The notification sent, as ``delivered`` says; None if there is none."""
        return await self._sql.record(
            m.Notification,
            "mark_notification_sent",
            notification_id=notification_id,
            bridge=delivered.bridge,
            platform_message_id=delivered.platform_message_id,
            sent_at=sent_at,
        )

    async def mark_failed(self, notification_id: int, error: str) -> m.Notification | None:
        """The notification failed with ``error``; None if there is none."""
        return await self._sql.record(
            m.Notification,
            "mark_notification_failed",
            notification_id=notification_id,
            error=error,
        )

    async def page(
        self, agent_id: str | None, before: int | None, limit: int
    ) -> list[m.Notification]:
        """Up to ``limit`` notifications, newest first, before ``before`` (None: from the
        newest), of ``agent_id`` (None: of everyone)."""
        return await self._sql.records(
            m.Notification, "page_notifications", agent_id=agent_id, before=before, limit=limit
        )

    async def count(self, status: str, agent_id: str | None) -> int:
        """How many notifications are in ``status``, of ``agent_id`` (None: of everyone)."""
        count: int = await self._sql.value("count_notifications", status=status, agent_id=agent_id)
        return count
