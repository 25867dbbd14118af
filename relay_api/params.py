"""Path and query parameters of the operations, as pydantic models (validated like bodies)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from relay_api.models import (
    A2ACallStatus,
    ApprovalStatus,
    IntegerId,
    ResourceId,
    TaskStatus,
    WebhookDeliveryStatus,
)

# Every list answers pages: this many items unless asked, never more than MAX_LIMIT.
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
MAX_CURSOR_LENGTH = 512


class Params(BaseModel):
    """Base of parameter models; unknown query parameters are ignored, as FastAPI does."""

    model_config = ConfigDict(extra="ignore", defer_build=True)


class AgentPath(Params):
    agent_id: ResourceId


class MessagePath(Params):
    message_id: IntegerId


class RoomPath(Params):
    room_id: ResourceId


class SpacePath(Params):
    space_id: ResourceId


class TaskPath(Params):
    task_id: IntegerId


class EnrollPath(Params):
    enroll_id: IntegerId


class ApprovalPath(Params):
    approval_id: IntegerId


class PolicyPath(Params):
    policy_id: IntegerId


class PolicyVersionQuery(Params):
    # A version is an INTEGER column (32 bits on PostgreSQL): past that, no version exists.
    version: int | None = Field(
        default=None, ge=1, le=2**31 - 1, description="An earlier version; none: now"
    )


class NotificationPath(Params):
    notification_id: IntegerId


class InterventionPath(Params):
    intervention_id: ResourceId


class PageQuery(Params):
    """A page of a list: how many items, and where the previous page ended."""

    limit: int = Field(default=DEFAULT_LIMIT, ge=1, le=MAX_LIMIT)
    cursor: str | None = Field(
        default=None,
        max_length=MAX_CURSOR_LENGTH,
        description="The `next_cursor` of the previous page; omitted: the first page",
    )


class WaitQuery(Params):
    wait: float = Field(default=0, ge=0, le=60, description="Long-poll: seconds to wait")


class InboxQuery(Params):
    limit: int = Field(default=100, ge=1, le=1000)
    wait: float = Field(default=0, ge=0, le=60, description="Long-poll: seconds to wait")
    peek: bool = Field(
        default=False,
        description="Read without delivering: statuses and delivery counts stay as they are",
    )


class EventsQuery(Params):
    after: IntegerId | None = Field(default=None, description="Cursor; omitted: from now")
    wait: float = Field(default=0, ge=0, le=60, description="Long-poll: seconds to wait")
    limit: int = Field(default=100, ge=1, le=1000)


class EventStreamQuery(Params):
    after: IntegerId | None = Field(default=None, description="Cursor (Last-Event-ID wins)")
    ticket: Annotated[str, StringConstraints(max_length=1000)] | None = Field(
        default=None,
        description="A ticket from POST /v1/events/ticket, in place of Authorization (for a "
        "browser's EventSource)",
    )


class RoomMessagesQuery(Params):
    limit: int = Field(default=100, ge=1, le=1000)
    thread_id: IntegerId | None = Field(
        default=None, description="Only this conversation's messages (a thread's first id)"
    )


class ThreadQuery(PageQuery):
    """A page of a thread: 100 messages by default."""

    limit: int = Field(default=100, ge=1, le=MAX_LIMIT)


class SpacesQuery(PageQuery):
    include_archived: bool = Field(default=False, description="Include archived spaces")


class TasksQuery(PageQuery):
    status: TaskStatus | None = Field(default=None, description="Only tasks in this state")
    assignee: ResourceId | None = Field(
        default=None, description="Only tasks assigned to this agent"
    )
    claimed_by: ResourceId | None = Field(
        default=None, description="Only tasks claimed by this agent"
    )


class EnrollQuery(Params):
    claim: str = Field(default="", max_length=200)


class ApprovalsQuery(PageQuery):
    status: ApprovalStatus | None = Field(default=None, description="Only approvals in this state")


class InterventionsQuery(PageQuery):
    limit: int = Field(default=50, ge=1, le=MAX_LIMIT)


SEARCH_KINDS = ("message", "room_post", "task", "approval", "action")
SearchKinds = Annotated[
    str,
    StringConstraints(
        pattern=r"^(message|room_post|task|approval|action)(,(message|room_post|task|approval|action))*$"
    ),
]


class SearchQuery(Params):
    """What to find, where, and a page of what was found."""

    q: Annotated[str, StringConstraints(min_length=1, max_length=500)] = Field(
        description='Words (all must appear), "a quoted phrase", -excluded, OR'
    )
    kinds: SearchKinds | None = Field(
        default=None, description=f"Comma-separated, among {', '.join(SEARCH_KINDS)}; omitted: all"
    )
    agent_id: ResourceId | None = Field(default=None, description="Only what this agent wrote")
    room_id: ResourceId | None = Field(default=None, description="Only what was said in this room")
    since: datetime | None = Field(default=None, description="Only what was written from then")
    until: datetime | None = Field(default=None, description="Only what was written before then")
    limit: int = Field(default=20, ge=1, le=100)
    cursor: str | None = Field(
        default=None,
        max_length=MAX_CURSOR_LENGTH,
        description="The `next_cursor` of the previous page; omitted: the first page",
    )


class ActionsQuery(PageQuery):
    agent_id: ResourceId | None = Field(default=None, description="Only this agent's actions")


class ReservationPath(Params):
    reservation_id: IntegerId


class ReservationsQuery(PageQuery):
    """Which reservations: a workspace's, a holder's, those that cover a path (active ones,
    unless ``all``)."""

    workspace: str | None = Field(default=None, min_length=1, max_length=200)
    holder: ResourceId | None = None
    path: str | None = Field(
        default=None, min_length=1, max_length=500, description="a concrete path they cover"
    )
    include_ended: bool = Field(default=False, description="released and expired ones too")


class A2ACallPath(Params):
    call_id: IntegerId


class A2ACallsQuery(PageQuery):
    """Which A2A calls: the caller's (an agent's own; the operator's: every agent's, or one's),
    in some status."""

    agent_id: ResourceId | None = Field(default=None, description="the operator's: one caller's")
    status: A2ACallStatus | None = None


class WebhookPath(Params):
    webhook_id: IntegerId


class WebhookDeliveryPath(WebhookPath):
    delivery_id: IntegerId


class WebhookDeliveriesQuery(PageQuery):
    status: WebhookDeliveryStatus | None = Field(
        default=None, description="Only deliveries in this state"
    )
