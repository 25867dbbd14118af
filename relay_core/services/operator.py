"""Putting approvals before the operator on their platforms, and showing how they were decided.

Both happen after the transaction that created or decided the approval has committed: a slow or
failing platform never holds a lock, and never undoes a decision (the failure is logged; the
approval stays decidable from the CLI, the console, the API and the other platforms).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from relay_api import models as m
from relay_core import records
from relay_core.ports import Bridge, UnitOfWork
from relay_core.services.base import Context, Service
from relay_core.services.deliveries import deliver, keep, posts_of, update_everywhere

log = logging.getLogger("relay.operator")


def asking_first(ctx: Context) -> tuple[Bridge, ...]:
    """The platforms that ask as an approval is created: all but the later steps of the
    escalation (``follow_ups``), which ask when it reaches them."""
    later = set(ctx.config.escalation_steps[1:])
    return tuple(bridge for bridge in ctx.bridges if bridge.name not in later)


async def present(
    service: Service, approval: m.Approval, bridges: Sequence[Bridge] | None = None
) -> m.Approval:
    """Ask the platforms (by default, those that ask first) to show the approval with a way to
    decide it; the approval keeps the first platform message, and each is kept as a post."""
    asking = asking_first(service.ctx) if bridges is None else bridges
    deliveries = await deliver(service.ctx, asking, lambda b: b.ask(approval))
    for failed in (d for d in deliveries if d.status == "failed"):
        log.warning(
            "approval %s not shown on %s: %s", approval.approval_id, failed.bridge, failed.error
        )
    shown = [d for d in deliveries if d.status == "sent"]
    if not deliveries:
        return approval

    async def work(uow: UnitOfWork) -> m.Approval:
        await keep(uow, "approval", approval.approval_id, deliveries)
        if not shown:
            return approval
        first = shown[0].platform_message_id
        return await uow.approvals.set_platform_message(approval.approval_id, first) or approval

    return await service.write(work)


async def show_decision(service: Service, approval: m.Approval) -> None:
    """Update the approval's message on every platform to show the outcome, whoever decided
    and wherever."""

    async def work(uow: UnitOfWork) -> list[records.Post]:
        return await posts_of(uow, "approval", approval.approval_id)

    posts = await service.read(work)
    if not posts and approval.platform_message_id is not None:  # shown before posts were kept
        posts = [_legacy_post(service, approval)]
    await update_everywhere(
        service.ctx,
        posts,
        f"decision of approval {approval.approval_id}",
        lambda bridge, platform_id: bridge.settle(platform_id, approval),
    )


def _legacy_post(service: Service, approval: m.Approval) -> records.Post:
    return records.Post(
        subject="approval",
        subject_id=approval.approval_id,
        bridge=service.ctx.bridge.name,
        platform_message_id=approval.platform_message_id,
        status="sent",
        created_at=approval.created_at,
    )
