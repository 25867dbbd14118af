"""The services, one per API resource; ``Services`` holds them all over one ``Context``."""

from __future__ import annotations

from relay_core.config import CoreConfig
from relay_core.services.a2a import A2AService
from relay_core.services.a2a_calls import A2ACallsService
from relay_core.services.access import AccessService
from relay_core.services.actions import ActionsService
from relay_core.services.agents import AgentsService
from relay_core.services.approvals import ApprovalsService
from relay_core.services.base import Context
from relay_core.services.enroll import EnrollService
from relay_core.services.events import EventsService
from relay_core.services.interventions import InterventionsService
from relay_core.services.messages import MessagesService
from relay_core.services.notify import NotifyService
from relay_core.services.outbox import OutboxService
from relay_core.services.policies import PoliciesService
from relay_core.services.reservations import ReservationsService
from relay_core.services.rooms import RoomsService
from relay_core.services.search import SearchService
from relay_core.services.spaces import SpacesService
from relay_core.services.system import SystemService
from relay_core.services.tasks import TasksService
from relay_core.services.webhooks import WebhooksService

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
        self.policies = PoliciesService(ctx)
        self.interventions = InterventionsService(ctx)
        self.events = EventsService(ctx)
        self.search = SearchService(ctx)
        self.system = SystemService(ctx)
        self.webhooks = WebhooksService(ctx)
        self.outbox = OutboxService(ctx)
        self.reservations = ReservationsService(ctx)
        self.a2a = A2AService(ctx)
        self.a2a_calls = A2ACallsService(ctx)
