"""The stores of the action log, notifications, their posts and the kept retry answers:
every named statement of ``queries/actions.sql``, ``notifications.sql``, ``posts.sql`` and
``idempotency_keys.sql`` run through its store method on both adapters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from relay_api import models as m
from relay_core import records
from relay_core.ports import StaleWrite, Storage

NOW = datetime(2026, 11, 28, 17, 30, 1, 5, tzinfo=UTC)


async def test_actions_logged_paged_newest_first_and_recounted(storage: Storage) -> None:
    async with storage.unit_of_work(write=True) as uow:
        logged = [
            await uow.actions.insert(
                m.Action(
                    agent_id=agent_id, action="did", params={"n": n}, target="t", created_at=NOW
                )
            )
            for n, agent_id in enumerate(["ada", "bob", "ada"])
        ]
        await uow.actions.set_params(logged[0].action_id, {"n": 0, "count": 7})
        await uow.commit()
    first, second, third = logged
    assert 0 < first.action_id < second.action_id < third.action_id
    async with storage.unit_of_work(write=False) as uow:
        recounted = await uow.actions.get(first.action_id)
        assert await uow.actions.get(0) is None
        assert await uow.actions.page(None, None, 2) == [third, second]
        assert await uow.actions.page(None, second.action_id, 5) == [recounted]
        assert await uow.actions.page("ada", None, 5) == [third, recounted]
    assert recounted is not None and recounted.params == {"n": 0, "count": 7}


async def test_notifications_sent_failed_found_counted_and_paged(storage: Storage) -> None:
    def note(agent_id: str | None, text: str) -> m.Notification:
        return m.Notification(
            agent_id=agent_id, text=text, bridge="local", status="pending", created_at=NOW
        )

    later = NOW + timedelta(seconds=3)
    async with storage.unit_of_work(write=True) as uow:
        made = [await uow.notifications.insert(note(a, t)) for a, t in [("ada", "1"), (None, "2")]]
        delivered = m.Delivery(
            bridge="slack", platform_message_id="p1", status="sent", created_at=later
        )
        sent = await uow.notifications.mark_sent(made[0].notification_id, delivered, later)
        failed = await uow.notifications.mark_failed(made[1].notification_id, "down")
        assert await uow.notifications.mark_failed(999_999, "none") is None
        await uow.commit()
    assert sent is not None and (sent.status, sent.bridge, sent.sent_at) == ("sent", "slack", later)
    assert failed is not None and (failed.status, failed.error) == ("failed", "down")
    async with storage.unit_of_work(write=False) as uow:
        assert await uow.notifications.get(made[0].notification_id) == sent
        assert await uow.notifications.on_platform("slack", "p1") == sent
        assert await uow.notifications.on_platform("local", "p1") is None
        assert await uow.notifications.page(None, None, 5) == [failed, sent]
        assert await uow.notifications.page(None, failed.notification_id, 5) == [sent]
        assert await uow.notifications.page("ada", None, 5) == [sent]
        counts = [
            await uow.notifications.count(status, agent_id)
            for status, agent_id in [("sent", None), ("sent", "bob"), ("failed", None)]
        ]
    assert counts == [1, 0, 1]


async def test_posts_kept_per_subject_and_found_by_platform_message(storage: Storage) -> None:
    async with storage.unit_of_work(write=True) as uow:
        for subject, subject_id, bridge, message in [
            ("approval", 1, "slack", "s1"),
            ("notification", 1, "slack", "s2"),
            ("approval", 2, "matrix", "m1"),
            ("approval", 1, "matrix", None),
        ]:
            await uow.posts.insert(
                records.Post(
                    subject=subject,
                    subject_id=subject_id,
                    bridge=bridge,
                    platform_message_id=message,
                    status="sent" if message else "failed",
                    created_at=NOW,
                )
            )
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        of_first = await uow.posts.of_subjects("approval", [1])
        of_both = await uow.posts.of_subjects("approval", [1, 2])
        assert await uow.posts.of_subjects("approval", []) == []
        assert await uow.posts.subject_of("approval", "matrix", "m1") == 2
        assert await uow.posts.subject_of("notification", "matrix", "m1") is None
    assert [(p.bridge, p.platform_message_id) for p in of_first] == [
        ("slack", "s1"),
        ("matrix", None),
    ]
    assert [p.subject_id for p in of_both] == [1, 2, 1] and of_first[0].post_id > 0


async def test_retry_answers_found_within_their_window_and_forgotten(storage: Storage) -> None:
    def answer(key_hash: str, at: datetime) -> records.IdempotencyRecord:
        return records.IdempotencyRecord(
            scope="ada", key_hash=key_hash, fingerprint="f", sealed_body="sealed", created_at=at
        )

    async with storage.unit_of_work(write=True) as uow:
        await uow.idempotency_keys.insert(answer("old", NOW - timedelta(hours=2)))
        await uow.idempotency_keys.insert(answer("new", NOW))
        await uow.commit()
    async with storage.unit_of_work(write=True) as uow:
        found = await uow.idempotency_keys.find("ada", "new", NOW - timedelta(hours=1))
        assert await uow.idempotency_keys.find("bob", "new", NOW - timedelta(hours=1)) is None
        assert await uow.idempotency_keys.find("ada", "new", NOW) is None  # kept at, not after
        assert await uow.idempotency_keys.find("ada", "old", NOW - timedelta(hours=3))
        await uow.idempotency_keys.forget_before(NOW - timedelta(hours=1))
        assert await uow.idempotency_keys.find("ada", "old", NOW - timedelta(hours=3)) is None
        await uow.commit()
    assert found is not None
    assert found == answer("new", NOW).model_copy(update={"record_id": found.record_id})
    with pytest.raises(StaleWrite):  # one answer a key
        async with storage.unit_of_work(write=True) as uow:
            await uow.idempotency_keys.insert(answer("new", NOW))
