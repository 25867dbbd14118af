"""The rows Relay keeps and never answers: where a room lives on each platform, what each
delivery carried, how far a platform's updates were applied, the first answers to retried
creates, and policies' versions and uses. The models on the wire are ``relay_api.models``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, get_args

from relay_api.models import Approval, Delivery, JsonObject, Resource, Task, TaskEvent


class RoomThread(Resource):
    """A room's place on one operator platform: a forum topic, a Matrix room (internal)."""

    thread_key: int = 0
    room_id: str
    bridge: str
    platform_thread_id: str
    created_at: datetime


class Post(Delivery):
    """A delivery as kept (internal): which notification or approval it carried."""

    post_id: int = 0
    subject: Literal["notification", "approval"]
    subject_id: int


# What a platform is asked after a commit: show an approval with a way to decide it (ask),
# show how it was decided (settle), remind the operator of it (remind), show a notification's
# first answer (answered), copy a room post to the room's thread (mirror).
PlatformJobKind = Literal["ask", "settle", "remind", "answered", "mirror"]


@dataclass(frozen=True)
class PlatformJob:
    """One platform's job in the outbox: its kind, what it is about (an approval's id; for
    ``answered`` a notification's, for ``mirror`` a room post's), and its text (the answer; the
    line to mirror) and target (the thread mirrored to), where it has them."""

    bridge: str
    kind: PlatformJobKind
    subject_id: int
    text: str | None = None
    target: str | None = None
    delivery_id: int = 0  # the outbox row, once stored
    attempts: int = 0  # made before now

    def arguments_json(self) -> str:
        """What the row's body keeps: all but the platform, the kind and the row's state."""
        return json.dumps({"subject_id": self.subject_id, "text": self.text, "target": self.target})

    @classmethod
    def of_row(
        cls, delivery_id: int, bridge: str, kind: str, body: str, attempts: int
    ) -> PlatformJob:
        """The job a ``due_platform_jobs`` row holds."""
        if kind not in get_args(PlatformJobKind):
            raise ValueError(f"outbox row {delivery_id}: no platform job is {kind!r}")
        arguments = json.loads(body)
        return cls(bridge, kind, delivery_id=delivery_id, attempts=attempts, **arguments)  # type: ignore[arg-type]


class BridgeOffset(Resource):
    """How far the updates of an operator platform have been applied (internal)."""

    bridge: str
    last_update_id: int
    updated_at: datetime
    cursor: str | None = None  # where a platform resumes by a string token (Matrix)


class IdempotencyRecord(Resource):
    """The first answer to a create made with a retry key (internal)."""

    record_id: int = 0
    scope: str
    key_hash: str
    fingerprint: str
    sealed_body: str
    created_at: datetime


class StreamTicket(Resource):
    """A ticket that opens one caller's event stream for a minute: random, kept by its hash
    only, and naming the token it was issued for by that token's hash (internal)."""

    ticket_hash: str
    kind: Literal["operator", "agent"]
    agent_id: str | None = None
    token_hash: str | None = None
    expires_at: datetime


class PolicyVersion(Resource):
    """A version of a policy, kept when it was replaced (stored, not answered)."""

    version_key: int = 0
    policy_id: int
    version: int
    policy: JsonObject
    created_at: datetime


class PolicyUse(Resource):
    """A decision a policy made, counted by its ``limit`` (stored, not answered)."""

    use_id: int = 0
    policy_id: int
    agent_id: str
    approval_id: int
    decided_at: datetime


class A2ATask(Task):
    """A task asked of an agent over A2A, with the conversation it belongs to, the id of the
    message that asked it, the latest note of that conversation, and the newest pending
    approval that names it (internal)."""

    context_id: str
    message_id: str
    latest_note: TaskEvent | None = None
    waiting_on: Approval | None = None
