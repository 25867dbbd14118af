"""The webhooks stores: every named statement of ``queries/webhooks.sql`` run through its
store method on both adapters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from relay_api import models as m
from relay_core.ports import Storage
from relay_core.records import PlatformJob

NOW = datetime(2026, 11, 28, 18, 10, 1, 5, tzinfo=UTC)
LATER = NOW + timedelta(minutes=1)


def endpoint(url: str) -> m.Webhook:
    return m.Webhook(
        url=url,
        events=["message.created"],
        sealed_secret="s1",
        after_event_id=0,
        created_at=NOW,
        updated_at=NOW,
    )


def delivery(webhook_id: int, event_id: int, due: datetime | None = NOW) -> m.WebhookDelivery:
    return m.WebhookDelivery(
        webhook_id=webhook_id,
        event_id=event_id,
        event_type="message.created",
        message_id=f"msg_{webhook_id}_{event_id}",
        body="{}",
        next_attempt_at=due,
        created_at=NOW,
    )


async def test_endpoints_changed_enabled_once_rotated_once_and_paged(storage: Storage) -> None:
    body = m.WebhookCreate(url="https://b.example/new", events=["task.updated"])
    async with storage.unit_of_work(write=True) as uow:
        a = await uow.webhooks.insert(endpoint("https://a.example/"))
        b = await uow.webhooks.insert(endpoint("https://b.example/"))
        replaced = await uow.webhooks.replace(b.webhook_id, body, LATER)
        assert await uow.webhooks.replace(0, body, LATER) is None
        disabled = await uow.webhooks.disable(a.webhook_id, "gone", LATER)
        assert await uow.webhooks.enable(b.webhook_id, 5, LATER) is None  # enabled already
        rotated = await uow.webhooks.rotate_secret(b, "s2", LATER + timedelta(days=1), LATER)
        assert await uow.webhooks.rotate_secret(b, "s3", LATER, LATER) is None  # not s1 now
        await uow.commit()
    assert replaced is not None and (replaced.url, replaced.events) == (body.url, body.events)
    assert disabled is not None and (disabled.enabled, disabled.disabled_reason) == (False, "gone")
    assert rotated is not None and (rotated.sealed_secret, rotated.sealed_previous) == ("s2", "s1")
    assert rotated.previous_until == LATER + timedelta(days=1)
    async with storage.unit_of_work(write=True) as uow:
        assert await uow.webhooks.get(b.webhook_id) == rotated
        assert await uow.webhooks.every() == [disabled, rotated]
        assert await uow.webhooks.enabled() == [rotated]
        assert await uow.webhooks.by_id([b.webhook_id, 0]) == [rotated]
        assert await uow.webhooks.page(None, 1) == [disabled]
        assert await uow.webhooks.page(a.webhook_id, 5) == [rotated]
        enabled = await uow.webhooks.enable(a.webhook_id, 9, LATER)
    assert enabled is not None and (enabled.enabled, enabled.after_event_id) == (True, 9)
    assert enabled.disabled_reason is None


async def test_deliveries_due_attempted_retried_paged_and_swept(storage: Storage) -> None:
    async with storage.unit_of_work(write=True) as uow:
        a = await uow.webhooks.insert(endpoint("https://a.example/"))
        b = await uow.webhooks.insert(endpoint("https://b.example/"))
        first = await uow.webhook_deliveries.insert(delivery(a.webhook_id, 1))
        await uow.webhook_deliveries.add(delivery(b.webhook_id, 1))
        await uow.webhook_deliveries.add(delivery(a.webhook_id, 2, LATER))
        # A platform's job shares the outbox: never a webhook's delivery, due on its own.
        await uow.outbox.add_platform_job(PlatformJob("slack", "settle", 7), NOW)
        await uow.commit()
    async with storage.unit_of_work(write=True) as uow:
        [job] = await uow.outbox.due_platform_jobs(LATER, 10)
        assert (job.bridge, job.kind, job.subject_id, job.attempts) == ("slack", "settle", 7, 0)
        assert await uow.webhook_deliveries.get(job.delivery_id) is None
        due = await uow.webhook_deliveries.due(NOW, [], 10)
        assert [d.webhook_id for d in due] == [a.webhook_id, b.webhook_id]
        assert await uow.webhook_deliveries.due(NOW, [a.webhook_id], 10) == due[1:]
        assert len(await uow.webhook_deliveries.due(LATER, [], 10)) == 3
        failed = {"status": "failed", "last_status_code": 500, "last_error": "x"}
        attempt = {**failed, "next_attempt_at": None}
        assert await uow.outbox.record_attempt(first.delivery_id, 0, **attempt)
        assert not await uow.outbox.record_attempt(first.delivery_id, 0, **attempt)
        gave_up = await uow.webhook_deliveries.get(first.delivery_id)
        retried = await uow.webhook_deliveries.retry(first.delivery_id, LATER)
        assert await uow.webhook_deliveries.retry(first.delivery_id, LATER) is None
        pages = [
            await uow.webhook_deliveries.page(a.webhook_id, status, before, 5)
            for status, before in [(None, None), ("pending", first.delivery_id + 10), (None, 0)]
        ]
        await uow.commit()
    assert gave_up is not None and (gave_up.status, gave_up.attempts) == ("failed", 1)
    assert gave_up.last_status_code == 500 and gave_up.next_attempt_at is None
    assert retried is not None and (retried.status, retried.attempts) == ("pending", 0)
    assert retried.next_attempt_at == LATER
    assert [d.event_id for d in pages[0]] == [2, 1] and pages[2] == []
    assert [d.event_id for d in pages[1]] == [2, 1]
    async with storage.unit_of_work(write=True) as uow:
        finished = {"last_status_code": 200, "last_error": None, "next_attempt_at": None}
        await uow.outbox.record_attempt(first.delivery_id, 0, status="succeeded", **finished)
        old = await uow.outbox.finished_before("succeeded", LATER, 5)
        assert await uow.outbox.finished_before("succeeded", NOW, 5) == []
        every = [d.delivery_id for d in await uow.webhook_deliveries.due(LATER, [], 10)]
        deleted = await uow.outbox.delete_finished([*old, *every, job.delivery_id])
        done = {"last_status_code": None, "last_error": None, "next_attempt_at": None}
        assert await uow.outbox.record_attempt(job.delivery_id, 0, status="succeeded", **done)
        assert await uow.outbox.due_platform_jobs(LATER, 10) == []
        await uow.commit()
    assert old == [first.delivery_id] and deleted == 1  # the pending ones stay
