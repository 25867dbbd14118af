"""What each tool answers: a small model, declared as its ``outputSchema``, whose JSON is both
the structured content and the text the model reads, so the two never disagree (hosts show a
model one or the other).

An answer holds what a model acts on (ids, status, the text it must read), what to do next
when there is something to do (``next``), and what waits for the agent (``waiting``: its unread
messages and the approvals decided since its last answer; left out for the operator). The rest of
a resource is one call away: every host pays for these schemas in ``tools/list``, and for the
JSON in its context.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel, field_validator

Line = TypeVar("Line", bound=BaseModel)


def lines(line: type[Line], resources: Sequence[BaseModel]) -> list[Line]:
    """A page's resources as a list shows them: each one's fields that ``line`` has."""
    return [line.model_validate(resource, from_attributes=True) for resource in resources]


class Answer(BaseModel):
    """What every answer to an agent carries (the operator has no inbox: none)."""

    waiting: str | None = None


class Mail(BaseModel):
    """A message, as a model reads it."""

    message_id: int
    from_agent: str
    text: str
    subject: str | None = None
    reply_to: int | None = None
    payload: dict[str, Any] | None = None

    @field_validator("payload")
    @classmethod
    def _none_when_empty(cls, payload: dict[str, Any] | None) -> dict[str, Any] | None:
        return payload or None  # an empty payload says nothing: left out of the answer


class Me(Answer):
    agent_id: str
    presence: str
    unread: int
    held_tasks: list[int]
    pending_approvals: list[int]


class Sent(Answer):
    message_id: int


class Inbox(Answer):
    messages: list[Mail]
    next: str | None = None


class Acked(Answer):
    acked: list[int]


class Rooms(Answer):
    rooms: list[str]
    next_cursor: str | None = None


class Joined(Answer):
    room_id: str


class RoomPage(Answer):
    messages: list[Mail]


class Hit(BaseModel):
    """A search hit, as a model reads it: read_thread(id) for a message, the API for the rest."""

    kind: str
    id: int
    title: str | None = None
    snippet: str
    from_agent: str | None = None
    room_id: str | None = None


class Found(Answer):
    hits: list[Hit]
    next_cursor: str | None = None


class Thread(Answer):
    thread_id: int
    messages: list[Mail]
    next_cursor: str | None = None


class TaskLine(BaseModel):
    """A task, as a list shows it."""

    task_id: int
    title: str
    status: str
    assignee: str | None = None
    claimed_by: str | None = None


class Tasks(Answer):
    tasks: list[TaskLine]
    next_cursor: str | None = None


class TaskState(Answer):
    task_id: int | None = None
    title: str | None = None
    status: str | None = None
    description: str | None = None
    next: str | None = None


class TaskDone(Answer):
    """A task the caller created or finished: the rest it knows."""

    task_id: int
    status: str
    next: str | None = None


class Progress(Answer):
    task_id: int
    event_id: int


class Recorded(Answer):
    action_id: int


class Reply(Answer):
    notification_id: int | None = None
    approval_id: int | None = None  # a question with options
    pending: bool
    reply: str | None = None
    next: str | None = None


class ApprovalState(Answer):
    approval_id: int
    status: str
    note: str | None = None
    approved_payload: dict[str, Any] | None = None
    expires_at: datetime | None = None
    next: str | None = None


class Decided(Answer):
    """An approval the operator decided."""

    approval_id: int
    status: str


class Kept(Answer):
    diagnostic_id: int | None = None
    action_id: int | None = None


class EventLine(BaseModel):
    """An event, as a model reads it."""

    event_id: int
    kind: str
    subject_id: str


class Events(Answer):
    events: list[EventLine]
    cursor: int
    next: str | None = None


class Reserved(Answer):
    reservation_id: int
    expires_at: datetime
    next: str | None = None


class Released(Answer):
    status: str


class Held(BaseModel):
    """A reservation, as a model reads it."""

    reservation_id: int
    holder: str
    paths: list[str]
    exclusive: bool
    reason: str | None = None
    task_id: int | None = None
    expires_at: datetime


class Holders(Answer):
    reservations: list[Held]
    next_cursor: str | None = None


class Fleet(Answer):
    agents: int
    online_agents: int
    pending_messages: int
    open_tasks: int
    pending_approvals: int


class ApprovalLine(BaseModel):
    """An approval waiting for the operator, as a list shows it: a question with the labels
    it offers (and whether several, or the operator's own words, may answer it)."""

    approval_id: int
    kind: str
    title: str
    requested_by: str
    detail: str | None = None
    options: list[str] | None = None
    multiple: bool | None = None
    allow_other: bool | None = None

    @field_validator("options", mode="before")
    @classmethod
    def _labels(cls, options: list[Any] | None) -> list[str] | None:
        return [getattr(o, "label", o) for o in options] if options else None

    @field_validator("multiple", "allow_other")
    @classmethod
    def _none_when_false(cls, said: bool | None) -> bool | None:
        return said or None  # false says nothing: left out of the answer


class Approvals(Answer):
    approvals: list[ApprovalLine]
    next_cursor: str | None = None


class NotificationLine(BaseModel):
    """What an agent asked the operator, as a list shows it."""

    notification_id: int
    agent_id: str | None = None
    text: str
    replies: int | None = None


class Notifications(Answer):
    notifications: list[NotificationLine]
    next_cursor: str | None = None


class PolicyLine(BaseModel):
    """A policy, as a list shows it."""

    policy_id: int
    name: str
    decision: str
    priority: int
    enabled: bool
    version: int


class PolicyState(Answer, PolicyLine):
    """A policy as set_policy left it."""


class Policies(Answer):
    policies: list[PolicyLine]
    next_cursor: str | None = None


class Verdict(Answer):
    decision: str
    reason: str
    policy_id: int | None = None
