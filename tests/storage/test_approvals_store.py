"""The approvals and enrollments stores: every named statement of ``queries/approvals.sql``
and ``enrollments.sql`` run through its store method on both adapters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from relay_api import models as m
from relay_core.ports import Storage

NOW = datetime(2026, 11, 28, 17, 50, 1, 5, tzinfo=UTC)


def asked(by: str, audience: str = m.EVERYONE, **fields: object) -> m.Approval:
    return m.Approval(
        kind="request",
        title=f"{by} asks",
        requested_by=by,
        subject_id=by,
        audience=audience,
        payload={"cmd": ["ls"]},
        created_at=NOW,
        **fields,  # type: ignore[arg-type]
    )


async def test_approvals_decided_once_shown_found_and_paged(storage: Storage) -> None:
    later = NOW + timedelta(minutes=1)
    async with storage.unit_of_work(write=True) as uow:
        public = await uow.approvals.insert(asked("ada"))
        private = await uow.approvals.insert(asked("bob", "bob", expires_at=NOW))
        lasting = await uow.approvals.insert(asked("cy", expires_at=later + timedelta(hours=1)))
        decided = await uow.approvals.decide(public.approval_id, "approved", later, "op", "ok")
        assert await uow.approvals.decide(public.approval_id, "rejected", later, "op") is None
        shown = await uow.approvals.set_platform_message(private.approval_id, "p9")
        await uow.commit()
    assert decided is not None and (decided.status, decided.note) == ("approved", "ok")
    assert decided.decided_at == later and decided.payload == {"cmd": ["ls"]}
    assert shown is not None and shown.platform_message_id == "p9"
    async with storage.unit_of_work(write=False) as uow:
        assert await uow.approvals.get(public.approval_id) == decided
        assert await uow.approvals.on_platform("p9") == shown
        assert await uow.approvals.on_platform("p0") is None
        assert await uow.approvals.past_deadline(later, 10) == [shown]
        assert await uow.approvals.past_deadline(NOW, 10) == []
        assert await uow.approvals.page(None, None, None, 2) == [lasting, shown]
        assert await uow.approvals.page(None, None, shown.approval_id, 5) == [decided]
        assert await uow.approvals.page("pending", "ada", None, 5) == [lasting]
        assert await uow.approvals.page(None, "bob", None, 5) == [lasting, shown, decided]
        counts = [await uow.approvals.count_pending(who) for who in (None, "ada", "bob")]
    assert counts == [2, 1, 2]


async def test_enrollments_decided_once_delivered_once_and_due(storage: Storage) -> None:
    def enrollment(agent_id: str, at: datetime) -> m.Enrollment:
        return m.Enrollment(
            agent_id=agent_id,
            capabilities=["x"],
            metadata={"k": 1},
            claim_hash="c" * 64,
            created_at=at,
        )

    async with storage.unit_of_work(write=True) as uow:
        old = await uow.enrollments.insert(enrollment("old", NOW - timedelta(hours=1)))
        new = await uow.enrollments.insert(enrollment("new", NOW))
        await uow.enrollments.set_approval(new.enroll_id, 42)
        approved = await uow.enrollments.decide(new.enroll_id, "approved", NOW)
        assert await uow.enrollments.decide(new.enroll_id, "rejected", NOW) is None
        delivered = await uow.enrollments.deliver_token(new.enroll_id)
        assert await uow.enrollments.deliver_token(new.enroll_id) is None
        await uow.commit()
    assert approved is not None and (approved.status, approved.approval_id) == ("approved", 42)
    assert delivered is not None and delivered.token_delivered and not approved.token_delivered
    async with storage.unit_of_work(write=False) as uow:
        assert await uow.enrollments.get(new.enroll_id) == delivered
        assert await uow.enrollments.get(0) is None
        assert await uow.enrollments.by_id([old.enroll_id, new.enroll_id, 0]) == [old, delivered]
        assert await uow.enrollments.by_id([]) == []
        assert await uow.enrollments.past_time(NOW, 5) == [old]
        assert await uow.enrollments.past_time(NOW - timedelta(hours=1), 5) == []
