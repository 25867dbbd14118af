"""Approvals: the operator's queue. Deciding one drives its subject in the same transaction."""

from __future__ import annotations

from relay_core import models as m
from relay_core import paging
from relay_core.auth import Caller
from relay_core.errors import Conflict, NotFound, StaleWrite
from relay_core.ports import Cond, UnitOfWork, eq, in_
from relay_core.services import enroll, interventions
from relay_core.services.base import Service
from relay_core.services.deliveries import subject_of
from relay_core.services.events import announce_approval
from relay_core.services.operator import show_decision


async def require_approval(uow: UnitOfWork, approval_id: int) -> m.Approval:
    """The approval, or NotFound."""
    approval = await uow.approvals.get(approval_id)
    if approval is None:
        raise NotFound(f"approval {approval_id} does not exist")
    return approval


async def with_applicants(uow: UnitOfWork, approvals: list[m.Approval]) -> list[m.Approval]:
    """The approvals, each enrollment's with the agent asking to join (one query)."""
    ids = [int(a.subject_id) for a in approvals if a.kind == "enrollment"]
    if not ids:
        return approvals
    found = {e.enroll_id: e for e in await uow.enrollments.find(in_("enroll_id", ids))}

    def applicant(approval: m.Approval) -> m.Approval:
        enrollment = found.get(int(approval.subject_id)) if approval.kind == "enrollment" else None
        if enrollment is None:
            return approval
        who = m.Applicant.model_validate(enrollment, from_attributes=True)
        return approval.model_copy(update={"applicant": who})

    return [applicant(a) for a in approvals]


class ApprovalsService(Service):
    """List, show and decide approvals."""

    async def list(
        self,
        caller: Caller,
        status: m.ApprovalStatus | None = None,
        limit: int = paging.DEFAULT_LIMIT,
        cursor: str | None = None,
    ) -> m.ApprovalsResponse:
        """Approvals, newest first, optionally of one status; a page at a time."""
        conds: list[Cond] = [eq("status", status)] if status else []

        async def work(uow: UnitOfWork) -> m.ApprovalsResponse:
            newest, next_cursor = await paging.page(
                uow.approvals,
                *conds,
                key=("approval_id", int),
                descending=True,
                limit=limit,
                cursor=cursor,
            )
            shown = await with_applicants(uow, newest)
            return m.ApprovalsResponse(approvals=shown, next_cursor=next_cursor)

        return await self.read(work)

    async def show(self, caller: Caller, approval_id: int) -> m.Approval:
        """One approval."""

        async def work(uow: UnitOfWork) -> m.Approval:
            [shown] = await with_applicants(uow, [await require_approval(uow, approval_id)])
            return shown

        return await self.read(work)

    async def approve(
        self, caller: Caller, approval_id: int, body: m.ApprovalDecision
    ) -> m.Approval:
        """Approve; approving twice answers the same with ``changed`` false, approving a decided
        one is a conflict."""
        return await self._decide(caller, approval_id, body, "approved")

    async def reject(
        self, caller: Caller, approval_id: int, body: m.ApprovalDecision
    ) -> m.Approval:
        """Reject; rejecting twice answers the same with ``changed`` false, rejecting a decided
        one is a conflict."""
        return await self._decide(caller, approval_id, body, "rejected")

    async def _decide(
        self, caller: Caller, approval_id: int, body: m.ApprovalDecision, outcome: m.ApprovalStatus
    ) -> m.Approval:
        caller.require_operator()

        async def work(uow: UnitOfWork) -> m.Approval:
            now = self.now()
            approval = await require_approval(uow, approval_id)
            if approval.kind == "enrollment" and approval.status == "pending":
                enrollment = await uow.enrollments.get(int(approval.subject_id))
                if enrollment is not None:
                    await enroll.expire_if_due(
                        uow, enrollment, now, self.ctx.config.enrollment_ttl_seconds
                    )
                    approval = await require_approval(uow, approval_id)
            if approval.status != "pending":
                return approval  # already decided (or expired just now): said after commit
            decided = await uow.approvals.update(
                approval_id,
                {
                    "status": outcome,
                    "decided_at": now,
                    "decided_by": body.decided_by or caller.name,
                    "note": body.note,
                },
                expect={"status": "pending"},
            )
            if decided is None:
                raise StaleWrite("approval decided concurrently")
            if decided.kind == "enrollment":
                await enroll.apply_decision(uow, decided, now)
            else:
                await interventions.apply_decision(uow, decided, now)
            await announce_approval(uow, decided, "approval.decided", now)
            newly.append(decided)
            return decided

        newly: list[m.Approval] = []
        # An expiry found here is committed, not rolled back with the conflict it causes.
        approval = await self.write(work)
        if newly:
            await show_decision(self, newly[-1])
            return approval.model_copy(update={"changed": True})
        if approval.status != outcome:
            raise Conflict(f"approval {approval_id} is already {approval.status}")
        return approval.model_copy(update={"changed": False})

    async def by_platform_message(self, bridge: str, platform_message_id: str) -> m.Approval | None:
        """The approval shown as this message on that platform, if any."""

        async def work(uow: UnitOfWork) -> m.Approval | None:
            approval_id = await subject_of(uow, "approval", bridge, platform_message_id)
            if approval_id is not None:
                return await uow.approvals.get(approval_id)
            # Shown before posts were kept: the approval names its message itself.
            found = await uow.approvals.find(
                eq("platform_message_id", platform_message_id), limit=1
            )
            return found[0] if found else None

        return await self.read(work)
