"""The stores of named statements, one a resource, by the name a unit of work holds each."""

from collections.abc import Callable

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

# Each built over a unit's named statements (``queries.Statements``).
STORES: dict[str, Callable[[Statements], object]] = {
    "a2a_calls": A2ACallsStore,
    "a2a_tasks": A2ATasksStore,
    "webhook_deliveries": WebhookDeliveriesStore,
    "webhooks": WebhooksStore,
    "interventions": InterventionsStore,
    "enrollments": EnrollmentsStore,
    "approvals": ApprovalsStore,
    "policies": PoliciesStore,
    "reservations": ReservationsStore,
    "notifications": NotificationsStore,
    "actions": ActionsStore,
    "posts": PostsStore,
    "idempotency_keys": IdempotencyKeysStore,
    "agents": AgentsStore,
    "bridge_offsets": BridgeOffsetsStore,
    "events": EventsStore,
    "messages": MessagesStore,
    "room_threads": RoomThreadsStore,
    "rooms": RoomsStore,
    "spaces": SpacesStore,
    "stream_tickets": StreamTicketsStore,
    "task_events": TaskEventsStore,
    "tasks": TasksStore,
}
