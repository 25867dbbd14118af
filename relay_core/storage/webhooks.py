"""The webhooks store: the operator's endpoints and the deliveries of events to them. Each
method runs one named statement of ``sqlite/queries/webhooks.sql`` or
``postgres/queries/webhooks.sql``."""

from __future__ import annotations

from datetime import datetime

from relay_api import models as m
from relay_core.storage.queries import Statements


class WebhooksStore:
    """Endpoints in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def get(self, webhook_id: int) -> m.Webhook | None:
        return await self._sql.record(m.Webhook, "get_webhook", webhook_id=webhook_id)

    async def insert(self, webhook: m.Webhook) -> m.Webhook:
        """Store a new endpoint; ``webhook`` is given its id and returned."""
        push = None if webhook.a2a_push is None else webhook.a2a_push.model_dump()
        fields = vars(webhook) | {"a2a_push": push}
        webhook.webhook_id = await self._sql.value("insert_webhook", **fields)
        return webhook

    async def page(self, after: int | None, limit: int) -> list[m.Webhook]:
        """Up to ``limit`` endpoints by id after ``after`` (None: from the first)."""
        return await self._sql.records(m.Webhook, "page_webhooks", after=after, limit=limit)

    async def every(self) -> list[m.Webhook]:
        return await self._sql.records(m.Webhook, "every_webhook")

    async def enabled(self) -> list[m.Webhook]:
        return await self._sql.records(m.Webhook, "enabled_webhooks")

    async def by_id(self, webhook_ids: list[int]) -> list[m.Webhook]:
        """The endpoints of ``webhook_ids`` (those that exist), by id."""
        return await self._sql.records(m.Webhook, "webhooks_by_id", webhook_ids=webhook_ids)

    async def pushing(self, task_id: int) -> list[m.Webhook]:
        """The enabled endpoints of A2A push-notification configs for ``task_id``, by id."""
        return await self._sql.records(m.Webhook, "push_webhooks_of_task", task_id=task_id)

    async def replace(
        self, webhook_id: int, body: m.WebhookCreate, now: datetime
    ) -> m.Webhook | None:
        """The endpoint with the URL, events and description of ``body``; None if there is
        none."""
        return await self._sql.record(
            m.Webhook,
            "replace_webhook",
            webhook_id=webhook_id,
            url=body.url,
            events=body.events,
            description=body.description,
            now=now,
        )

    async def disable(self, webhook_id: int, reason: str, now: datetime) -> m.Webhook | None:
        """The endpoint disabled for ``reason``; None if there is none."""
        return await self._sql.record(
            m.Webhook, "disable_webhook", webhook_id=webhook_id, reason=reason, now=now
        )

    async def enable(self, webhook_id: int, after_event_id: int, now: datetime) -> m.Webhook | None:
        """The endpoint enabled for the events after ``after_event_id``, if it was disabled;
        else None, and nothing changed."""
        return await self._sql.record(
            m.Webhook,
            "enable_webhook",
            webhook_id=webhook_id,
            after_event_id=after_event_id,
            now=now,
        )

    async def rotate_secret(
        self, read: m.Webhook, sealed_secret: str, previous_until: datetime, now: datetime
    ) -> m.Webhook | None:
        """The endpoint ``read`` signing with ``sealed_secret``, and with the secret before
        until ``previous_until``, if its secret is still as read; else None."""
        return await self._sql.record(
            m.Webhook,
            "rotate_webhook_secret",
            webhook_id=read.webhook_id,
            sealed_secret=sealed_secret,
            sealed_previous=read.sealed_secret,
            previous_until=previous_until,
            now=now,
        )


class WebhookDeliveriesStore:
    """Deliveries to the endpoints in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def get(self, delivery_id: int) -> m.WebhookDelivery | None:
        return await self._sql.record(
            m.WebhookDelivery, "get_webhook_delivery", delivery_id=delivery_id
        )

    async def insert(self, delivery: m.WebhookDelivery) -> m.WebhookDelivery:
        """Store a new delivery; ``delivery`` is given its id and returned."""
        delivery.delivery_id = await self._sql.value("insert_webhook_delivery", **vars(delivery))
        return delivery

    async def add(self, delivery: m.WebhookDelivery) -> None:
        """Store a new delivery nobody needs the id of (held back on PostgreSQL: a fan-out's
        are sent as one statement)."""
        await self._sql.add("insert_webhook_delivery", None, **vars(delivery))

    async def page(
        self, webhook_id: int, status: str | None, before: int | None, limit: int
    ) -> list[m.WebhookDelivery]:
        """Up to ``limit`` of an endpoint's deliveries, newest first, before ``before``
        (None: from the newest), in ``status`` (None: in any)."""
        return await self._sql.records(
            m.WebhookDelivery,
            "page_webhook_deliveries",
            webhook_id=webhook_id,
            status=status,
            before=before,
            limit=limit,
        )

    async def retry(self, delivery_id: int, now: datetime) -> m.WebhookDelivery | None:
        """The failed delivery pending again, due at ``now``; None if it was not failed."""
        return await self._sql.record(
            m.WebhookDelivery, "retry_webhook_delivery", delivery_id=delivery_id, now=now
        )

    async def due(self, now: datetime, left_out: list[int], limit: int) -> list[m.WebhookDelivery]:
        """Up to ``limit`` deliveries due by ``now``, by when they fall due then by id, but
        those to the endpoints ``left_out``."""
        return await self._sql.records(
            m.WebhookDelivery, "due_webhook_deliveries", now=now, left_out=left_out, limit=limit
        )
