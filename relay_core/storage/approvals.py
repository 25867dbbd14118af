"""The approvals store: what agents and enrollments ask the operator. Each method runs one
named statement of ``sqlite/queries/approvals.sql`` or ``postgres/queries/approvals.sql``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from relay_api import models as m
from relay_core.storage.queries import Statements


class ApprovalsStore:
    """Approvals in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def get(self, approval_id: int) -> m.Approval | None:
        return await self._sql.record(m.Approval, "get_approval", approval_id=approval_id)

    async def insert(self, approval: m.Approval) -> m.Approval:
        """Store a new approval; ``approval`` is given its id and returned."""
        approval.approval_id = await self._sql.value("insert_approval", **vars(approval))
        return approval

    async def decide(
        self,
        approval_id: int,
        status: m.ApprovalStatus,
        decided_at: datetime,
        decided_by: str | None,
        note: str | None = None,
        approved_payload: dict[str, Any] | None = None,
        remembered_policy_id: int | None = None,
        interrupt: bool = False,
        answer: list[str] | None = None,
    ) -> m.Approval | None:
        """The approval decided, if it was pending (approved as the operator changed it, with
        ``approved_payload``; naming the policy that remembers it; asking the agent to stop,
        ``interrupt``; a question with its ``answer``); else None, and nothing changed."""
        return await self._sql.record(
            m.Approval,
            "decide_approval",
            approval_id=approval_id,
            status=status,
            decided_at=decided_at,
            decided_by=decided_by,
            note=note,
            approved_payload=approved_payload,
            remembered_policy_id=remembered_policy_id,
            interrupt=interrupt,
            answer=answer,
        )

    async def set_platform_message(
        self, approval_id: int, platform_message_id: str | None
    ) -> m.Approval | None:
        """The approval naming the platform message that showed it first."""
        return await self._sql.record(
            m.Approval,
            "set_approval_platform_message",
            approval_id=approval_id,
            platform_message_id=platform_message_id,
        )

    async def on_platform(self, platform_message_id: str) -> m.Approval | None:
        """The approval that names this platform message itself (one shown before posts were
        kept)."""
        return await self._sql.record(
            m.Approval, "approval_on_platform", platform_message_id=platform_message_id
        )

    async def past_deadline(self, now: datetime, limit: int) -> list[m.Approval]:
        """Up to ``limit`` pending approvals whose deadline is before ``now``."""
        return await self._sql.records(m.Approval, "approvals_past_deadline", now=now, limit=limit)

    async def to_remind(self, now: datetime, limit: int) -> list[m.Approval]:
        """Up to ``limit`` pending approvals whose reminder is due at ``now``, not yet sent."""
        return await self._sql.records(m.Approval, "approvals_to_remind", now=now, limit=limit)

    async def remind(self, approval_id: int, now: datetime) -> bool:
        """Mark the pending approval's reminder sent at ``now``; whether this did (not sent
        before, and still pending)."""
        return await self._sql.run("remind_approval", approval_id=approval_id, now=now) > 0

    async def to_escalate(self, now: datetime, limit: int) -> list[m.Approval]:
        """Up to ``limit`` pending approvals whose next step of the escalation is due at
        ``now``."""
        return await self._sql.records(m.Approval, "approvals_to_escalate", now=now, limit=limit)

    async def escalate(
        self,
        approval_id: int,
        due: datetime,
        escalated_to: str | None,
        escalate_at: datetime | None,
    ) -> bool:
        """The pending approval offered on the step ``escalated_to``, its next step due at
        ``escalate_at`` (None: no further step); whether this did (it still waited for the step
        ``due``, and was pending)."""
        changed = await self._sql.run(
            "escalate_approval",
            approval_id=approval_id,
            due=due,
            escalated_to=escalated_to,
            escalate_at=escalate_at,
        )
        return changed > 0

    async def page(
        self, status: str | None, seen_by: str | None, before: int | None, limit: int
    ) -> list[m.Approval]:
        """Up to ``limit`` approvals, newest first, before ``before`` (None: from the newest),
        in ``status`` (None: in any), of those ``seen_by`` may see (None: every one; else
        those for everyone and its own)."""
        return await self._sql.records(
            m.Approval, "page_approvals", status=status, seen_by=seen_by, before=before, limit=limit
        )

    async def count_pending(self, seen_by: str | None) -> int:
        """How many approvals wait for a decision, of those ``seen_by`` may see (as ``page``)."""
        count: int = await self._sql.value("count_pending_approvals", seen_by=seen_by)
        return count
