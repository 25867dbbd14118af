"""The stores of one unit of work, one a resource, each made on first use over the unit's
named statements: a unit touches few of them. Each storage adapter's unit is a ``Stores``
(through ``relay_core.ports.UnitOfWork``), whose statements run on its connection."""

from functools import cached_property

from relay_core.storage.a2a_calls import A2ACallsStore
from relay_core.storage.a2a_tasks import A2ATasksStore
from relay_core.storage.actions import ActionsStore
from relay_core.storage.agents import AgentsStore
from relay_core.storage.approvals import ApprovalsStore
from relay_core.storage.bridge_offsets import BridgeOffsetsStore
from relay_core.storage.enrollments import EnrollmentsStore
from relay_core.storage.events import EventsStore
from relay_core.storage.idempotency_keys import IdempotencyKeysStore
from relay_core.storage.interventions import InterventionsStore
from relay_core.storage.messages import MessagesStore
from relay_core.storage.notifications import NotificationsStore
from relay_core.storage.outbox import OutboxStore
from relay_core.storage.policies import PoliciesStore
from relay_core.storage.posts import PostsStore
from relay_core.storage.queries import Statements
from relay_core.storage.reservations import ReservationsStore
from relay_core.storage.room_threads import RoomThreadsStore
from relay_core.storage.rooms import RoomsStore
from relay_core.storage.spaces import SpacesStore
from relay_core.storage.stream_tickets import StreamTicketsStore
from relay_core.storage.task_events import TaskEventsStore
from relay_core.storage.tasks import TasksStore
from relay_core.storage.webhooks import WebhookDeliveriesStore, WebhooksStore


class Stores:
    """Every store of a unit of work, as an attribute of its own."""

    _sql: Statements  # the unit's named statements, set before a store is first used

    @cached_property
    def a2a_calls(self) -> A2ACallsStore:
        return A2ACallsStore(self._sql)

    @cached_property
    def a2a_tasks(self) -> A2ATasksStore:
        return A2ATasksStore(self._sql)

    @cached_property
    def actions(self) -> ActionsStore:
        return ActionsStore(self._sql)

    @cached_property
    def agents(self) -> AgentsStore:
        return AgentsStore(self._sql)

    @cached_property
    def approvals(self) -> ApprovalsStore:
        return ApprovalsStore(self._sql)

    @cached_property
    def bridge_offsets(self) -> BridgeOffsetsStore:
        return BridgeOffsetsStore(self._sql)

    @cached_property
    def enrollments(self) -> EnrollmentsStore:
        return EnrollmentsStore(self._sql)

    @cached_property
    def events(self) -> EventsStore:
        return EventsStore(self._sql)

    @cached_property
    def idempotency_keys(self) -> IdempotencyKeysStore:
        return IdempotencyKeysStore(self._sql)

    @cached_property
    def interventions(self) -> InterventionsStore:
        return InterventionsStore(self._sql)

    @cached_property
    def messages(self) -> MessagesStore:
        return MessagesStore(self._sql)

    @cached_property
    def notifications(self) -> NotificationsStore:
        return NotificationsStore(self._sql)

    @cached_property
    def outbox(self) -> OutboxStore:
        return OutboxStore(self._sql)

    @cached_property
    def policies(self) -> PoliciesStore:
        return PoliciesStore(self._sql)

    @cached_property
    def posts(self) -> PostsStore:
        return PostsStore(self._sql)

    @cached_property
    def reservations(self) -> ReservationsStore:
        return ReservationsStore(self._sql)

    @cached_property
    def room_threads(self) -> RoomThreadsStore:
        return RoomThreadsStore(self._sql)

    @cached_property
    def rooms(self) -> RoomsStore:
        return RoomsStore(self._sql)

    @cached_property
    def spaces(self) -> SpacesStore:
        return SpacesStore(self._sql)

    @cached_property
    def stream_tickets(self) -> StreamTicketsStore:
        return StreamTicketsStore(self._sql)

    @cached_property
    def task_events(self) -> TaskEventsStore:
        return TaskEventsStore(self._sql)

    @cached_property
    def tasks(self) -> TasksStore:
        return TasksStore(self._sql)

    @cached_property
    def webhook_deliveries(self) -> WebhookDeliveriesStore:
        return WebhookDeliveriesStore(self._sql)

    @cached_property
    def webhooks(self) -> WebhooksStore:
        return WebhooksStore(self._sql)
