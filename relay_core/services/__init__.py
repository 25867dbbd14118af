"""The services, one per API resource; ``Services`` holds them all over one ``Context``.

An operation id such as ``approvals.approve`` is the attribute path to its service method.
"""

from __future__ import annotations

from relay_core import models as m
from relay_core.auth import Caller
from relay_core.services.access import AccessService
from relay_core.services.actions import ActionsService
from relay_core.services.agents import AgentsService
from relay_core.services.approvals import ApprovalsService
from relay_core.services.base import Context, CoreConfig
from relay_core.services.enroll import EnrollService
from relay_core.services.events import EventsService
from relay_core.services.interventions import InterventionsService
from relay_core.services.messages import MessagesService
from relay_core.services.notify import NotifyService
from relay_core.services.rooms import RoomsService
from relay_core.services.spaces import SpacesService
from relay_core.services.system import SystemService
from relay_core.services.tasks import TasksService

__all__ = ["Context", "CoreConfig", "Services"]


class Services:
    """Every service over one context."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.access = AccessService(ctx)
        self.agents = AgentsService(ctx)
        self.messages = MessagesService(ctx)
        self.notify = NotifyService(ctx)
        self.rooms = RoomsService(ctx)
        self.spaces = SpacesService(ctx)
        self.tasks = TasksService(ctx)
        self.actions = ActionsService(ctx)
        self.enroll = EnrollService(ctx)
        self.approvals = ApprovalsService(ctx)
        self.interventions = InterventionsService(ctx)
        self.events = EventsService(ctx)
        self.system = SystemService(ctx)

    async def health(self) -> m.Health:
        """Alive, and which version."""
        return await self.system.health()

    async def status(self, caller: Caller) -> m.Status:
        """Version, uptime, backends and counts."""
        return await self.system.status(caller)
