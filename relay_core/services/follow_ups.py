"""What happens to an approval nobody answers, before its deadline: one reminder, and an
escalation step by step.

A pending approval is reminded once at ``remind_at``: a new message on every platform that
shows it, quoting its card. With an escalation (``RELAY_ESCALATION``, platforms in turn), the
platforms named after the first ask only when it reaches them: every ``escalate_after``
seconds unanswered, the approval is offered on the next one (``approval.escalated``, naming
from and to), until the last. Platforms the escalation does not name ask at once. Each
reminder and each step happens once on any number of instances (a guarded update); only the
deadline, if any, then expires the approval.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from relay_api import models as m
from relay_core.config import DomainSettings
from relay_core.ports import UnitOfWork
from relay_core.services import outbox
from relay_core.services.base import Service
from relay_core.services.events import announce_approval

log = logging.getLogger("relay.operator")


def timed(
    config: DomainSettings,
    approval: m.Approval,
    remind_after: int | None = None,
    escalate_after: int | None = None,
) -> m.Approval:
    """``approval`` with its reminder and its first escalation due: after the seconds given,
    else the settings' (no escalation where there is no second step)."""
    remind = remind_after or config.remind_after
    escalate = escalate_after or config.escalate_after
    if len(config.escalation_steps) < 2:
        escalate = None
    start = approval.created_at
    return approval.model_copy(
        update={
            "remind_at": start + timedelta(seconds=remind) if remind else None,
            "escalate_at": start + timedelta(seconds=escalate) if escalate else None,
        }
    )


class Step:
    """An approval's next step of the escalation, as ``escalate_at`` found it due."""

    def __init__(self, steps: tuple[str, ...], approval: m.Approval, due: datetime) -> None:
        current = approval.escalated_to or steps[0]
        # A step the settings no longer name: the escalation is over.
        reached = steps.index(current) + 1 if current in steps else len(steps)
        self.source = current
        self.target = steps[reached] if reached < len(steps) else None
        # Step n is due n intervals after the approval was created.
        interval = (due - approval.created_at) / reached
        further = self.target is not None and reached + 1 < len(steps)
        self.next_due = due + interval if further else None


async def remind_due(service: Service, limit: int) -> int:
    """Remind the operator of up to ``limit`` approvals whose reminder is due, on every
    platform that shows each; how many."""
    now = service.now()
    due = await service.read(lambda uow: uow.approvals.to_remind(now, limit))
    return sum([await _remind(service, approval) for approval in due])


async def _remind(service: Service, approval: m.Approval) -> bool:
    """Remind the operator of ``approval`` once, where it is shown (through the outbox);
    whether this did."""

    async def mark(uow: UnitOfWork) -> bool:
        now = service.now()
        if not await uow.approvals.remind(approval.approval_id, now):
            return False  # decided, or reminded by another instance, meanwhile
        await outbox.remind(uow, approval, now)
        return True

    return await service.write(mark)


async def escalate_due(service: Service, limit: int) -> int:
    """Offer up to ``limit`` approvals whose next step of the escalation is due on it; how
    many."""
    now = service.now()
    due = await service.read(lambda uow: uow.approvals.to_escalate(now, limit))
    return sum([await _escalate(service, approval) for approval in due])


async def _escalate(service: Service, approval: m.Approval) -> bool:
    """Offer ``approval`` on its next step of the escalation, once; whether this did."""
    due = approval.escalate_at
    steps = service.ctx.config.escalation_steps
    if due is None:
        return False
    step = Step(steps, approval, due) if steps else None

    async def take(uow: UnitOfWork) -> m.Approval | None:
        """The approval on its next step (announced, and asked there once this commits), or
        None: nothing to offer."""
        approval_id = approval.approval_id
        if step is None or step.target is None:  # the settings changed: nowhere further
            await uow.approvals.escalate(approval_id, due, approval.escalated_to, None)
            return None
        if not await uow.approvals.escalate(approval_id, due, step.target, step.next_due):
            return None  # decided, or escalated by another instance, meanwhile
        taken = await uow.approvals.get(approval_id)
        if taken is not None:
            now = service.now()
            moved = {"from": step.source, "to": step.target}
            await announce_approval(uow, taken, "approval.escalated", now, moved)
            bridge = service.ctx.bridge_named(step.target)
            if bridge is None:
                log.warning(
                    "approval %s escalated to %s, which is not configured here",
                    approval_id,
                    step.target,
                )
            else:
                await outbox.ask(uow, service.ctx, taken, now, (bridge,))
        return taken

    taken = await service.write(take)
    return taken is not None and taken.escalated_to is not None
