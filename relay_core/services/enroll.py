"""Enrollment: a new agent asks to join; the operator's approval registers it.

The claim returned at request time is the only way to read the enrollment back (a wrong claim
looks exactly like a missing enrollment). The agent's token is not minted at approval but on the
first poll after it, so no token ever sits in the database in plaintext waiting to be picked up.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from relay_api import models as m
from relay_api.errors import Conflict, NotFound
from relay_api.models import AGENT_TOKEN_PREFIX, CLAIM_PREFIX
from relay_core.auth import hash_secret, new_token, same_secret
from relay_core.config import DomainSettings
from relay_core.policy_rules import Facts
from relay_core.ports import StaleWrite, UnitOfWork
from relay_core.services import outbox
from relay_core.services.access import CREDENTIALS
from relay_core.services.base import SWEEP_BATCH, Service
from relay_core.services.events import announce_approval
from relay_core.services.policies import open_approval, screen


async def expire_if_due(
    uow: UnitOfWork, enrollment: m.Enrollment, now: datetime, ttl: int
) -> m.Enrollment:
    """Mark a pending enrollment (and its approval) expired once its time is over."""
    if enrollment.status != "pending" or now - enrollment.created_at <= timedelta(seconds=ttl):
        return enrollment
    expired = await uow.enrollments.decide(enrollment.enroll_id, "expired", now)
    if expired is None:
        raise StaleWrite("enrollment changed")
    if enrollment.approval_id is not None:
        approval = await uow.approvals.decide(enrollment.approval_id, "expired", now, "relay")
        if approval is not None:
            await announce_approval(uow, approval, "approval.decided", now)
            await outbox.settle(uow, approval, now)
    return expired


async def expire_approval_if_due(
    uow: UnitOfWork, approval: m.Approval, now: datetime, config: DomainSettings
) -> m.Approval:
    """An enrollment's approval as it stands once its enrollment's time is checked: expired
    with it when that is over."""
    enrollment = await uow.enrollments.get(int(approval.subject_id))
    if enrollment is None:
        return approval
    await expire_if_due(uow, enrollment, now, config.enrollment_ttl_seconds)
    return await uow.approvals.get(approval.approval_id) or approval


async def expire_due(uow: UnitOfWork, now: datetime, ttl: int, limit: int) -> int:
    """Expire up to ``limit`` pending enrollments whose time is over; how many."""
    due = await uow.enrollments.past_time(now - timedelta(seconds=ttl), limit)
    for enrollment in due:
        await expire_if_due(uow, enrollment, now, ttl)
    return len(due)


async def apply_decision(uow: UnitOfWork, approval: m.Approval, now: datetime) -> None:
    """Carry an enrollment approval's decision to the enrollment (and register the agent)."""
    enrollment = await uow.enrollments.get(int(approval.subject_id))
    if enrollment is None:
        raise NotFound(
            f"enrollment {approval.subject_id} of approval {approval.approval_id} is gone"
        )
    if approval.status == "approved":
        if await uow.agents.get(enrollment.agent_id) is not None:
            raise Conflict(f"agent '{enrollment.agent_id}' is already registered")
        agent = m.Agent(
            agent_id=enrollment.agent_id,
            name=enrollment.name,
            kind=enrollment.kind,
            capabilities=enrollment.capabilities,
            metadata=enrollment.metadata,
            created_at=now,
            updated_at=now,
        )
        await uow.agents.insert(agent)
    decided = await uow.enrollments.decide(enrollment.enroll_id, approval.status, now)
    if decided is None:
        raise Conflict(f"enrollment {enrollment.enroll_id} was already decided")


class EnrollService(Service):
    """Public endpoints for agents that have no token yet."""

    async def sweep(self, limit: int = SWEEP_BATCH) -> int:
        """Persist the expiry of up to ``limit`` enrollments whose time is over, so the
        approvals queue and its count stop showing them; how many expired."""
        ttl = self.ctx.config.enrollment_ttl_seconds

        async def any_due(uow: UnitOfWork) -> bool:
            cutoff = self.now() - timedelta(seconds=ttl)
            return bool(await uow.enrollments.past_time(cutoff, 1))

        async def work(uow: UnitOfWork) -> int:
            return await expire_due(uow, self.now(), ttl, limit)

        if not await self.read(any_due):
            return 0
        return await self.write(work)

    async def request(self, body: m.EnrollRequest) -> m.EnrollmentCreated:
        """Ask to join; answers with the claim to poll with (shown once)."""
        claim = new_token(CLAIM_PREFIX)
        title = f"Enroll agent '{body.agent_id}'"
        screened = await screen(self, Facts("enrollment", body.agent_id, title, None))

        async def work(uow: UnitOfWork) -> m.EnrollmentCreated:
            now = self.now()
            if await uow.agents.get(body.agent_id) is not None:
                raise Conflict(f"agent '{body.agent_id}' is already registered")
            enrollment = await uow.enrollments.insert(
                m.Enrollment(
                    **body.model_dump(),
                    claim_hash=hash_secret(claim),
                    created_at=now,
                )
            )
            approval = await open_approval(
                self,
                uow,
                m.Approval(
                    kind="enrollment",
                    title=title,
                    detail=body.reason,
                    requested_by=body.agent_id,
                    subject_id=str(enrollment.enroll_id),
                    created_at=now,
                ),
                screened,
            )
            await uow.enrollments.set_approval(enrollment.enroll_id, approval.approval_id)
            if approval.status != "pending":  # a policy decided it
                await apply_decision(uow, approval, now)
            return m.EnrollmentCreated(
                enroll_id=enrollment.enroll_id,
                agent_id=body.agent_id,
                claim=claim,
                status=approval.status,
                approval_id=approval.approval_id,
            )

        return await self.write_answer(work)

    async def status(self, enroll_id: int, claim: str = "") -> m.EnrollmentState:
        """The enrollment's state; the first poll after approval carries the agent's token."""

        async def work(uow: UnitOfWork) -> m.EnrollmentState:
            now = self.now()
            enrollment = await uow.enrollments.get(enroll_id)
            if enrollment is None or not same_secret(claim, enrollment.claim_hash):
                raise NotFound(f"enrollment {enroll_id} does not exist")
            enrollment = await expire_if_due(
                uow, enrollment, now, self.ctx.config.enrollment_ttl_seconds
            )
            if enrollment.status != "approved" or enrollment.token_delivered:
                return m.EnrollmentState(**enrollment.model_dump())
            token = new_token(AGENT_TOKEN_PREFIX)
            delivered = await uow.enrollments.deliver_token(enroll_id)
            if delivered is None:
                raise StaleWrite("token delivered concurrently")
            agent = await uow.agents.set_token(enrollment.agent_id, hash_secret(token), now)
            uow.publish(CREDENTIALS)
            if agent is None:
                raise NotFound(f"agent '{enrollment.agent_id}' was removed")
            return m.EnrollmentState(**delivered.model_dump(), token=token)

        return await self.write(work)
