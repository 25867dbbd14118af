"""Putting approvals before the operator on their platform, and showing how they were decided.

Both happen after the transaction that created or decided the approval has committed: a slow or
failing platform never holds a lock, and never undoes a decision (the failure is logged; the
approval stays decidable from the CLI, the console and the API).
"""

from __future__ import annotations

import logging

from relay_core import models as m
from relay_core.errors import BridgeError
from relay_core.ports import UnitOfWork
from relay_core.services.base import Service

log = logging.getLogger("relay.operator")


async def present(service: Service, approval: m.Approval) -> m.Approval:
    """Ask the operator's platform to show the approval with a way to decide it."""
    try:
        platform_message_id = await service.ctx.bridge.ask(approval)
    except BridgeError as exc:
        log.warning(
            "approval %s not shown on %s: %s",
            approval.approval_id,
            service.ctx.bridge.name,
            exc.detail,
        )
        return approval
    if platform_message_id is None:
        return approval

    async def work(uow: UnitOfWork) -> m.Approval:
        shown = await uow.approvals.update(
            approval.approval_id, {"platform_message_id": platform_message_id}
        )
        return shown or approval

    return await service.write(work, final=False)


async def show_decision(service: Service, approval: m.Approval) -> None:
    """Edit the approval's platform message to show the outcome, whoever decided."""
    if approval.platform_message_id is None:
        return
    try:
        await service.ctx.bridge.settle(approval.platform_message_id, approval)
    except BridgeError as exc:
        log.warning(
            "decision of approval %s not shown on %s: %s",
            approval.approval_id,
            service.ctx.bridge.name,
            exc.detail,
        )
