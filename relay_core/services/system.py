"""Health and status of the service itself."""

from __future__ import annotations

from datetime import datetime, timedelta

from relay_api import __version__
from relay_api import models as m
from relay_core.auth import Caller
from relay_core.ports import UnitOfWork
from relay_core.services.base import Context, Service


class SystemService(Service):
    """Liveness and counts."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.started_at: datetime = ctx.clock()

    async def health(self) -> m.Health:
        """Alive, and which version."""
        return m.Health(status="ok", version=__version__)

    def _bridge_status(self, name: str) -> m.BridgeStatus:
        health = self.ctx.health.get(name)
        if health is None:  # not called yet in this process
            return m.BridgeStatus(name=name, healthy=True)
        return m.BridgeStatus(
            name=name, healthy=health.ok, last_error=health.last_error, failed_at=health.failed_at
        )

    async def status(self, caller: Caller) -> m.Status:
        """Version, uptime, backends and the counts that say what is going on: for an agent,
        of the messages, approvals and notifications it can see (its unacknowledged messages,
        the approvals for everyone and its own, its notifications)."""
        # An agent's approvals of kind request are private to it and the operator, as in the
        # approvals list; its notifications are its own.
        approvals_of = None if caller.is_operator else caller.name
        notifications_of = None if caller.is_operator else caller.name

        async def work(uow: UnitOfWork) -> m.StatusCounts:
            seen_since = now - timedelta(seconds=self.ctx.config.presence_ttl)
            return m.StatusCounts(
                agents=await uow.agents.count(),
                online_agents=await uow.agents.count_seen_since(seen_since),
                pending_messages=(
                    await uow.messages.count_unacked()
                    if caller.is_operator
                    else await uow.messages.count_unacked_to(caller.name)
                ),
                open_tasks=await uow.tasks.count_open(),
                pending_approvals=await uow.approvals.count_pending(approvals_of),
                sent_notifications=await uow.notifications.count("sent", notifications_of),
                failed_notifications=await uow.notifications.count("failed", notifications_of),
            )

        now = self.now()
        return m.Status(
            version=__version__,
            caller=caller.name,
            uptime_seconds=round((now - self.started_at).total_seconds(), 3),
            storage=self.ctx.storage.name,
            bridge=self.ctx.bridge.name,
            bridges=[self._bridge_status(bridge.name) for bridge in self.ctx.bridges],
            auth="token" if self.ctx.config.auth_enabled else "none",
            counts=await self.read(work),
        )
