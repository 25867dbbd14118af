"""Pydantic v2 models: the request bodies named in INTERFACE.md and every resource Relay returns.

Request bodies forbid unknown fields so a typo never passes silently. Resource models double as
the storage records; fields marked ``exclude=True`` (secrets' hashes) are stored but never sent.

Each model is built when it is first used (``defer_build``): a ``relay`` command uses a few of
them, and building every one on import cost about 35 ms of each command's start.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from datetime import datetime
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    SecretStr,
    StringConstraints,
    field_validator,
    model_validator,
)

import relay_api

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$"
OPERATOR = relay_api.OPERATOR
# Every secret says what it is by its first characters (the server decides what it is worth).
OPERATOR_TOKEN_PREFIX = "rly_op_"
AGENT_TOKEN_PREFIX = "rly_agent_"
CLAIM_PREFIX = "rly_claim_"

ResourceId = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
# The names Relay itself writes where an actor is recorded (an approval's decided_by, the audit's
# agent_id): no agent may take one, and no person's decision may be labelled with one.
RESERVED_ACTORS = frozenset({OPERATOR, "anonymous", "deadline", "system", "nobody"})
RESERVED_PREFIXES = ("policy:",)


def reserved_actor(name: str) -> bool:
    """Whether ``name`` is one Relay writes itself as an actor (``policy:3@2``, ``deadline``)."""
    return name.lower() in RESERVED_ACTORS or name.lower().startswith(RESERVED_PREFIXES)


def _not_an_actor_of_relays(name: str) -> None:
    if reserved_actor(name):
        raise ValueError(f"'{name}' is reserved: Relay records its own actions under that name")


# Integer ids are 64-bit in every database; a larger number cannot name anything.
IntegerId = Annotated[int, Field(ge=0, le=2**63 - 1)]
# Every character str.splitlines breaks a line at: CR, LF, VT, FF, the file, group and record
# separators, NEL, and Unicode's line and paragraph separators.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def _one_line(text: str) -> str:
    # A name, a title or a subject is shown as one line (in a session, a chat, a mail's
    # subject): a break in it would start a line that reads as Relay's own.
    if any(char in LINE_BREAKS for char in text):
        raise ValueError("must be one line: no line breaks (CR, LF, U+2028, U+2029 or the like)")
    return text


OneLine = AfterValidator(_one_line)
ShortText = Annotated[str, StringConstraints(min_length=1, max_length=200), OneLine]
Title = Annotated[str, StringConstraints(min_length=1, max_length=500), OneLine]


def _a_person(name: str) -> str:
    if name != OPERATOR:
        _not_an_actor_of_relays(name)
    return name


# Who decided an approval or answered a question, for the audit: a person's label, never one
# of Relay's own actors (the operator's name aside).
DecidedBy = Annotated[ShortText, AfterValidator(_a_person)]
LongText = Annotated[str, StringConstraints(max_length=65536)]
JsonObject = dict[str, Any]
MAX_JSON_BYTES = 65_536
EVERYONE = "*"  # the audience of what every caller may see (events, approvals)


def _bounded_json(value: dict[str, Any]) -> dict[str, Any]:
    if len(json.dumps(value, separators=(",", ":"), default=str)) > MAX_JSON_BYTES:
        raise ValueError(f"at most {MAX_JSON_BYTES} bytes of JSON")
    return value


# Metadata, payloads and parameters: small structured values, bounded on their own.
SmallJson = Annotated[dict[str, Any], AfterValidator(_bounded_json)]
Evidence = Annotated[str, StringConstraints(max_length=1_000_000)] | JsonObject

MessageStatus = Literal["pending", "delivered", "acked", "posted"]
TaskStatus = Literal["open", "claimed", "in_progress", "completed", "failed", "cancelled"]
ApprovalStatus = Literal["pending", "approved", "rejected", "expired", "withdrawn", "answered"]
ApprovalKind = Literal["enrollment", "intervention", "request", "question", "a2a"]
EnrollmentStatus = ApprovalStatus
SpaceStatus = Literal["active", "archived"]
InterventionStatus = Literal[
    "open", "awaiting_approval", "approved", "rejected", "remediated", "remediation_failed"
]
InterventionApprovalStatus = Literal["none", "pending", "approved", "rejected", "expired"]
NotificationStatus = Literal["pending", "sent", "failed"]
Presence = Literal["online", "offline"]
Risk = Literal["low", "medium", "high"]
Severity = Literal["info", "low", "medium", "high", "critical"]
RemediationStatus = Literal["succeeded", "failed", "partial"]


def _unstorable(value: Any) -> str | None:
    """Why a JSON value cannot be stored as given, or None: a NUL character (PostgreSQL cannot
    store one in text or JSON), or a number JSON has no way to write (NaN, Infinity, or one too
    large for a double, such as 1e400, which would be stored as null)."""
    # Loops, not any() over a generator: every request body passes here.
    if isinstance(value, str):
        return "text may not contain NUL (\\u0000) characters" if "\x00" in value else None
    if isinstance(value, float):
        return None if math.isfinite(value) else "numbers must be finite (no NaN, Infinity, 1e400)"
    if isinstance(value, dict):
        for key, item in value.items():
            why = _unstorable(key) or _unstorable(item)
            if why:
                return why
    elif isinstance(value, list):
        for item in value:
            why = _unstorable(item)
            if why:
                return why
    return None


class RequestBody(BaseModel):
    """Base of request bodies: unknown fields are an error, and so is a NUL character or a
    number JSON cannot write anywhere (no backend stores either as given)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _storable(cls, data: Any) -> Any:
        why = _unstorable(data)
        if why:
            raise ValueError(why)
        return data


class Resource(BaseModel):
    """Base of returned resources: tolerant of fields a newer server adds."""

    # Every field is in every answer (``None`` included), so a described answer requires them all.
    model_config = ConfigDict(
        extra="ignore", json_schema_serialization_defaults_required=True, defer_build=True
    )


def _rows_as_kept(value: Any) -> Any:
    """A list of records, or (in the server) records held as the JSON its database wrote them
    as (a sequence that reads as the records), written as the list they are."""
    return value if isinstance(value, list) else list(value)


def kept_rows(described: Any) -> PlainSerializer:
    """A hot page's records (``described``, their list type): the server may hold them as
    stored."""
    return PlainSerializer(_rows_as_kept, return_type=described)


class Page(Resource):
    """A page of a list: at most ``limit`` items, and while more follow, the cursor to them
    (``next_cursor``, absent on the last page)."""

    next_cursor: str | None = Field(
        default=None,
        exclude_if=lambda cursor: cursor is None,
        description="Pass as `cursor` to read the next page; absent on the last page",
    )


# ---------------------------------------------------------------- request bodies


class AgentRegister(RequestBody):
    """Register an agent, or update one that exists."""

    agent_id: ResourceId
    name: ShortText | None = None
    kind: ShortText | None = None
    capabilities: list[ShortText] = Field(default_factory=list, max_length=100)
    metadata: SmallJson = Field(default_factory=dict)
    rotate_token: bool = False

    @model_validator(mode="after")
    def _not_reserved(self) -> AgentRegister:
        _not_an_actor_of_relays(self.agent_id)
        return self


class AgentHeartbeat(RequestBody):
    """A sign of life, with an optional self-reported status."""

    status: ShortText | None = None
    note: LongText | None = None
    metadata: SmallJson | None = None


class A2ASkill(RequestBody):
    """A skill an agent offers over A2A, as its agent card lists it."""

    id: ResourceId
    name: ShortText
    description: Annotated[str, StringConstraints(min_length=1, max_length=2000)]
    tags: list[ShortText] = Field(default_factory=list, max_length=20)
    examples: list[Annotated[str, StringConstraints(max_length=2000)]] = Field(
        default_factory=list, max_length=20
    )


class A2AConfig(RequestBody):
    """Whether an agent is reachable over A2A (an agent card and a JSON-RPC endpoint of its
    own), and the skills its card lists; ``enabled: false`` takes it off A2A."""

    enabled: bool = True
    description: Annotated[str, StringConstraints(max_length=2000)] | None = None
    skills: list[A2ASkill] = Field(default_factory=list, max_length=50)


class MessageCreate(RequestBody):
    """A direct message (``to``) or a room post (``room_id``): exactly one of the two."""

    to: ResourceId | None = None
    room_id: ResourceId | None = None
    text: Annotated[str, StringConstraints(min_length=1, max_length=65536)]
    subject: ShortText | None = None
    payload: SmallJson = Field(default_factory=dict)
    reply_to: IntegerId | None = None
    from_agent: ResourceId | None = None

    @model_validator(mode="after")
    def _one_destination(self) -> MessageCreate:
        if (self.to is None) == (self.room_id is None):
            raise ValueError("give exactly one of 'to' (an agent) or 'room_id' (a room)")
        return self


class NotifyText(RequestBody):
    """Plain text pushed to the human operator's messaging platform."""

    text: Annotated[str, StringConstraints(min_length=1, max_length=4096)]
    agent_id: ResourceId | None = None


class NotifyReply(RequestBody):
    """The operator's answer to a notification, matched by the platform message id."""

    platform_message_id: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    text: Annotated[str, StringConstraints(min_length=1, max_length=65536)]


class MessageAck(RequestBody):
    """Names the agent acknowledging a message or joining a room: the caller's own agent when
    omitted (the operator must name one)."""

    agent_id: ResourceId | None = None


class SpaceCreate(RequestBody):
    """A new space; its id is derived from the name when omitted."""

    space_id: ResourceId | None = None
    name: ShortText
    description: LongText | None = None


class RoomInSpaceCreate(RequestBody):
    """A new room inside a space; its id is derived from the name when omitted."""

    room_id: ResourceId | None = None
    name: ShortText
    topic: LongText | None = None


class TaskCreate(RequestBody):
    """A unit of work for an agent to claim."""

    title: Title
    description: LongText | None = None
    payload: SmallJson = Field(default_factory=dict)
    priority: int = Field(default=0, ge=-1_000_000, le=1_000_000)
    assignee: ResourceId | None = None
    room_id: ResourceId | None = None
    max_attempts: int = Field(default=1, ge=1, le=100)


class TaskClaim(RequestBody):
    """Claim a task for an agent (the caller's own when ``agent_id`` is omitted), holding a
    lease."""

    agent_id: ResourceId | None = None
    lease_seconds: int | None = Field(default=None, ge=1, le=86400)


class TaskEventCreate(RequestBody):
    """Progress reported by the claimer; it extends the lease."""

    agent_id: ResourceId | None = None
    kind: ShortText = "progress"
    message: LongText | None = None
    progress: int | None = Field(default=None, ge=0, le=100)
    data: SmallJson = Field(default_factory=dict)


class TaskCancel(RequestBody):
    """Cancel a task that is not finished: its creator or the operator."""

    reason: LongText | None = None


class TaskFinish(RequestBody):
    """Complete or fail a task; ``retry`` puts a failed task with attempts left back to open."""

    agent_id: ResourceId | None = None
    result: SmallJson | None = None
    error: LongText | None = None
    retry: bool = False


class ActionCreate(RequestBody):
    """An append-only audit record of something an agent did."""

    agent_id: ResourceId | None = None
    action: ShortText
    target: Annotated[str, StringConstraints(max_length=1000)] | None = None
    params: SmallJson = Field(default_factory=dict)
    outcome: LongText | None = None
    task_id: IntegerId | None = None


class EnrollRequest(RequestBody):
    """A new agent asking to join; the operator approves or rejects it."""

    agent_id: ResourceId
    name: ShortText | None = None
    kind: ShortText | None = None
    capabilities: list[ShortText] = Field(default_factory=list, max_length=100)
    metadata: SmallJson = Field(default_factory=dict)
    reason: LongText | None = None

    @model_validator(mode="after")
    def _not_reserved(self) -> EnrollRequest:
        _not_an_actor_of_relays(self.agent_id)
        return self


OptionLabel = Annotated[str, StringConstraints(min_length=1, max_length=100), OneLine]
MAX_OTHER_ANSWER = 2000  # characters of an answer in the operator's own words
AnswerText = Annotated[str, StringConstraints(min_length=1, max_length=MAX_OTHER_ANSWER)]


class QuestionOption(RequestBody):
    """One answer a question offers."""

    label: OptionLabel
    description: Annotated[str, StringConstraints(max_length=500)] | None = None


class ApprovalAnswer(RequestBody):
    """The operator's answer to a question: the labels chosen (one, unless it takes several),
    or, where it allows another answer, the operator's own words as the one item."""

    answer: list[AnswerText] = Field(min_length=1, max_length=10)
    note: LongText | None = None
    decided_by: DecidedBy | None = Field(
        default=None, description="who answered, for the audit (default: operator)"
    )


class ApprovalWithdrawal(RequestBody):
    """Why the agent that asked no longer asks (shown on every platform in place of the
    question): ``the session answered at its terminal``."""

    reason: ShortText | None = None


class PolicyLimit(RequestBody):
    """At most ``count`` decisions per requesting agent in any ``per_seconds``."""

    count: int = Field(ge=1, le=1_000_000)
    per_seconds: int = Field(ge=1, le=31_536_000)


class RememberScope(RequestBody):
    """How widely a remembered approval's policy approves again."""

    agents: Literal["this", "every"] = Field(
        default="this", description="the agent that asked (default), or every agent"
    )
    command: Literal["approved", "asked"] = Field(
        default="approved",
        description="the command as approved (the operator's edit of it, if any; default), or"
        " as the agent asked it",
    )
    directory: Literal["this", "any"] = Field(
        default="this",
        description="a command line is approved again in the working directory it was asked"
        " in (default), or in any directory",
    )
    limit: PolicyLimit | None = Field(
        default=None, description="at most this many approvals per agent in a window"
    )


class ApprovalDecision(RequestBody):
    """The operator's decision note; ``decided_by`` labels who decided (default: operator)."""

    note: LongText | None = None
    payload: SmallJson | None = Field(
        default=None,
        description="approve only, an agent's request only: the payload as the operator"
        " approves it (a changed command, a narrower path), kept as the approval's"
        " approved_payload; the request's own payload is kept as asked. Refused (409) on a"
        " prompt whose host cannot run it changed (Codex's hook, a Claude Code channel)",
    )
    command: Annotated[str, StringConstraints(min_length=1, max_length=65536)] | None = Field(
        default=None,
        description="approve only, a coding agent's request to run a command only: approve it"
        " to run this command instead, the rest of its payload as asked (the payload so"
        " changed is kept as approved_payload). Not with payload",
    )
    remember: bool = Field(
        default=False,
        description="approve only, an agent's tool request only: also approve requests like this"
        " one from now on, without asking. A policy is created in the same transaction,"
        " narrowed to the request (the same tool; for a command, the same programs and"
        " arguments through the command condition, nothing chained, substituted or redirected"
        " out of its directory; the same agent unless remember_scope widens it); the approval"
        " names it (remembered_policy_id). Refused (409) on what cannot be narrowed so",
    )
    remember_scope: RememberScope | None = Field(
        default=None, description="with remember: how widely (default: this agent, as approved)"
    )
    interrupt: bool = Field(
        default=False,
        description="reject only: also ask the agent to stop what it is doing, not only this"
        " (Claude Code's hook ends the agent's turn; the note says why)",
    )
    decided_by: DecidedBy | None = Field(
        default=None,
        description="who decided, for the audit (default: operator); never one of Relay's own"
        " actors (policy:…, deadline, system, anonymous)",
    )

    @model_validator(mode="after")
    def _scope_with_remember(self) -> ApprovalDecision:
        if self.remember_scope is not None and not self.remember:
            raise ValueError("remember_scope is given with remember: true only")
        if self.command is not None and self.payload is not None:
            raise ValueError("give payload or command, not both")
        return self


class InterventionApprovalRequest(RequestBody):
    """Ask the operator to approve a proposed remediation."""

    agent_id: ResourceId | None = None
    title: Title
    reason: LongText
    proposed_action: LongText
    risk: Risk = "medium"


MAX_EXPIRES_IN = 604_800  # a week


class ApprovalRequest(RequestBody):
    """An agent asks the operator to approve what it is about to do, or (``kind: question``)
    asks a question with options for the operator to answer."""

    kind: Literal["request", "question"] = "request"
    title: Title
    detail: LongText | None = None
    payload: SmallJson | None = None
    options: list[QuestionOption] | None = Field(
        default=None,
        min_length=2,
        max_length=10,
        description="a question's answers to choose from (2 to 10, their labels distinct)",
    )
    multiple: bool = Field(default=False, description="a question: several options may be chosen")
    allow_other: bool = Field(
        default=False, description="a question: the operator may answer in their own words"
    )
    expires_in: int | None = Field(
        default=None,
        ge=1,
        le=MAX_EXPIRES_IN,
        description="Seconds until the approval expires unanswered; none: it waits for ever",
    )
    remind_after: int | None = Field(
        default=None,
        ge=1,
        le=MAX_EXPIRES_IN,
        description="Seconds unanswered before the operator is reminded once on every "
        "platform; none: the server's RELAY_REMIND_AFTER",
    )
    task_id: IntegerId | None = Field(
        default=None,
        description="the task this holds up: an A2A caller sees it input-required meanwhile",
    )
    escalate_after: int | None = Field(
        default=None,
        ge=1,
        le=MAX_EXPIRES_IN,
        description="Seconds unanswered before it is offered on the next step of the server's "
        "RELAY_ESCALATION (and again after as long, step by step); none: RELAY_ESCALATE_AFTER",
    )

    @model_validator(mode="after")
    def _options_for_a_question(self) -> ApprovalRequest:
        if self.kind != "question":
            if self.options is not None or self.multiple or self.allow_other:
                raise ValueError("options, multiple and allow_other are a question's")
            return self
        if self.options is None:
            raise ValueError("a question offers options (2 to 10)")
        labels = [option.label for option in self.options]
        if len(set(labels)) != len(labels):
            raise ValueError("a question's options have distinct labels")
        return self


class InterventionParticipant(RequestBody):
    """An agent the operator adds to an intervention, to work on it beside its creator."""

    agent_id: ResourceId


class DiagnosticUpload(RequestBody):
    """What an agent found while diagnosing; every upload is kept."""

    agent_id: ResourceId | None = None
    summary: Annotated[str, StringConstraints(min_length=1, max_length=2000)]
    content: Evidence
    content_type: ShortText | None = None
    severity: Severity = "info"


def _web_link(url: str) -> str:
    if urlsplit(url.strip()).scheme.lower() not in ("http", "https"):
        raise ValueError("an http:// or https:// link (it is shown to the operator as one)")
    return url


WebLink = Annotated[
    str,
    StringConstraints(max_length=2000),
    AfterValidator(_web_link),
    Field(description="an http:// or https:// URL"),
]


class InterventionActionCreate(RequestBody):
    """The real trace of a remediation: status, evidence before and after, and a link."""

    agent_id: ResourceId | None = None
    action: Annotated[str, StringConstraints(min_length=1, max_length=2000)]
    status: RemediationStatus
    evidence_before: Evidence
    evidence_after: Evidence
    link: WebLink | None = None


# ---------------------------------------------------------------- resources


class A2ASkillShown(Resource):
    """A skill an agent's card lists."""

    id: str
    name: str
    description: str
    tags: list[str] = Field(default_factory=list)
    examples: list[str] = Field(default_factory=list)


class A2AProfile(Resource):
    """How an agent is reached over A2A: whether it is, and what its card says."""

    enabled: bool
    description: str | None = None
    skills: list[A2ASkillShown] = Field(default_factory=list)


class Agent(Resource):
    """A registered agent; ``presence`` is computed from its last heartbeat."""

    agent_id: str
    name: str | None = None
    kind: str | None = None
    capabilities: list[str] = Field(default_factory=list)
    metadata: JsonObject = Field(default_factory=dict)
    status: str | None = None
    note: str | None = None
    presence: Presence = "offline"
    last_seen_at: datetime | None = None
    created_at: datetime
    updated_at: datetime
    pending_messages: int | None = None
    # Set through POST /v1/agents/{agent_id}/a2a; null until then.
    a2a: A2AProfile | None = None
    token_hash: str | None = Field(default=None, exclude=True)


class AgentRegistered(Agent):
    """A registered agent and, when one was issued now, its token (shown once)."""

    token: str | None = None


class AgentHeartbeatResult(Agent):
    """The agent after a heartbeat, with its count of unacknowledged messages and the server's
    presence window (beat again within it to stay ``online``)."""

    presence_window_seconds: float | None = None


class AgentsResponse(Page):
    """Every registered agent."""

    agents: list[Agent]


class Message(Resource):
    """A direct message (``to``) or a room post (``room_id``)."""

    message_id: int = 0
    from_agent: str
    to: str | None = None
    room_id: str | None = None
    subject: str | None = None
    text: str
    payload: JsonObject = Field(default_factory=dict)
    reply_to: int | None = None
    # The conversation it belongs to: its own id when it starts one, the first message's when
    # it answers one (set as it is written, never recomputed).
    thread_id: int | None = None
    reply_to_notification: int | None = None
    status: MessageStatus
    created_at: datetime
    delivered_at: datetime | None = None
    acked_at: datetime | None = None
    delivery_count: int = 0
    traceparent: str | None = Field(
        default=None,
        description="the W3C trace it was sent in: whoever handles it continues that trace",
    )


class InboxResponse(Resource):
    """An agent's unacknowledged direct messages, oldest first."""

    agent_id: str
    messages: Annotated[list[Message], kept_rows(list[Message])]
    count: int


class Room(Resource):
    """A place where agents meet; optionally inside a space."""

    room_id: str
    name: str
    topic: str | None = None
    space_id: str | None = None
    created_by: str
    created_at: datetime
    platform_thread_id: str | None = None


class RoomMember(Resource):
    """An agent's membership of a room."""

    member_id: int = Field(default=0, exclude=True)
    room_id: str
    agent_id: str
    joined_at: datetime


class RoomsResponse(Page):
    """Every room."""

    rooms: list[Room]


class RoomMessagesResponse(Resource):
    """The newest messages of a room, in chronological order."""

    room_id: str
    messages: Annotated[list[Message], kept_rows(list[Message])]
    count: int


SearchKind = Literal["message", "room_post", "task", "approval", "action"]


class SearchHit(Resource):
    """A record that answers a search: what it is, where the words stand (each match in ``[``
    and ``]``), and who wrote it where."""

    kind: SearchKind
    id: int
    title: str | None = None
    snippet: str
    score: float
    created_at: datetime
    from_agent: str | None = None
    room_id: str | None = None


class SearchResponse(Page):
    """What was found, best first (then newer first)."""

    hits: list[SearchHit]


class ThreadResponse(Page):
    """A conversation: its first message and every answer the caller may read, oldest first."""

    thread_id: int
    messages: list[Message]


class Space(Resource):
    """A group of rooms; archiving is one-way."""

    space_id: str
    name: str
    description: str | None = None
    status: SpaceStatus = "active"
    created_at: datetime
    archived_at: datetime | None = None


class SpacesResponse(Page):
    """Spaces, archived ones only when asked for."""

    spaces: list[Space]


class SyncFailure(Resource):
    """A room the bridge could not reconcile, and why."""

    room_id: str
    error: str


class SpaceSyncReport(Resource):
    """What a sync with an operator platform created, found and failed; the first platform's
    at the top, and under ``bridges`` every platform's."""

    bridge: str
    supports_topics: bool
    created: list[str] = Field(default_factory=list)
    found: list[str] = Field(default_factory=list)
    failed: list[SyncFailure] = Field(default_factory=list)
    detail: str | None = None
    bridges: list[SpaceSyncReport] | None = None


class Task(Resource):
    """A unit of work: open → claimed → in_progress → completed | failed; its creator (or the
    operator) may cancel it until it is finished."""

    task_id: int = 0
    title: str
    description: str | None = None
    payload: JsonObject = Field(default_factory=dict)
    priority: int = 0
    assignee: str | None = None
    room_id: str | None = None
    status: TaskStatus = "open"
    created_by: str
    claimed_by: str | None = None
    claimed_at: datetime | None = None
    lease_expires_at: datetime | None = None
    lease_seconds: int | None = None
    attempts: int = 0
    max_attempts: int = 1
    progress: int | None = None
    result: JsonObject | None = None
    error: str | None = None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None = None
    traceparent: str | None = Field(
        default=None,
        description="the W3C trace it was created in: whoever works on it continues that trace",
    )


class TasksResponse(Page):
    """Tasks matching the filters, by id."""

    tasks: Annotated[list[Task], kept_rows(list[Task])]


class TaskEvent(Resource):
    """A record on a task's trail: progress from the claimer, or a lapse noted by Relay."""

    event_id: int = 0
    task_id: int
    agent_id: str | None = None
    kind: str
    message: str | None = None
    progress: int | None = None
    data: JsonObject = Field(default_factory=dict)
    created_at: datetime


class TaskEventsResponse(Page):
    """A task's event trail, oldest first."""

    task_id: int
    events: list[TaskEvent]


class Action(Resource):
    """An audit record of something an agent did."""

    action_id: int = 0
    agent_id: str
    action: str
    target: str | None = None
    params: JsonObject = Field(default_factory=dict)
    outcome: str | None = None
    task_id: int | None = None
    created_at: datetime


class ActionsResponse(Page):
    """Audit records, newest first."""

    actions: list[Action]


DeliveryStatus = Literal["sent", "failed"]


class Delivery(Resource):
    """What one operator platform did with a notification or an approval."""

    bridge: str
    platform_message_id: str | None = None
    status: DeliveryStatus
    error: str | None = None
    created_at: datetime


class Notification(Resource):
    """Text sent to the operator's platforms: ``bridge`` and ``platform_message_id`` are the
    first platform's that delivered it, ``deliveries`` what each did."""

    notification_id: int = 0
    agent_id: str | None = None
    text: str
    bridge: str
    platform_message_id: str | None = None
    status: NotificationStatus = "pending"
    error: str | None = None
    created_at: datetime
    sent_at: datetime | None = None
    traceparent: str | None = Field(
        default=None,
        description="the W3C trace it was sent in: the operator's replies are handed on in it",
    )
    replies: int | None = None
    deliveries: list[Delivery] | None = None


class NotificationsResponse(Page):
    """Notifications, newest first."""

    notifications: list[Notification]


class Enrollment(Resource):
    """A new agent's request to join, decided through an approval."""

    enroll_id: int = 0
    agent_id: str
    name: str | None = None
    kind: str | None = None
    capabilities: list[str] = Field(default_factory=list)
    metadata: JsonObject = Field(default_factory=dict)
    reason: str | None = None
    status: EnrollmentStatus = "pending"
    approval_id: int | None = None
    token_delivered: bool = False
    created_at: datetime
    decided_at: datetime | None = None
    claim_hash: str = Field(default="", exclude=True)


class EnrollmentCreated(Resource):
    """A fresh enrollment with its claim: keep the claim, it is shown once."""

    enroll_id: int
    agent_id: str
    claim: str
    status: EnrollmentStatus
    approval_id: int


class EnrollmentState(Enrollment):
    """An enrollment as polled; ``token`` appears once, on the first poll after approval."""

    token: str | None = None


class Applicant(Resource):
    """The agent an enrollment approval would admit, as it describes itself."""

    agent_id: str
    name: str | None = None
    kind: str | None = None
    capabilities: list[str] = Field(default_factory=list)


class Approval(Resource):
    """A question for the operator: an enrollment, an intervention's remediation, an agent's
    request to approve or reject, or (``a2a``) a message to an external A2A agent that a
    policy holds for the operator."""

    approval_id: int = 0
    kind: ApprovalKind
    status: ApprovalStatus = "pending"
    title: str
    detail: str | None = None
    # What is to be approved, machine-readable (a request's), as the agent asked it.
    payload: JsonObject | None = None
    # The payload as the operator approved it, when it is not as asked (an edited command).
    approved_payload: JsonObject | None = None
    # The policy the operator's "always allow this" created with the decision (remember).
    remembered_policy_id: int | None = None
    # Rejected, and the agent asked to stop what it is doing (interrupt), not only this.
    interrupt: bool = False
    # A question's: the answers offered, whether several may be chosen or the operator's own
    # words given, and the answer once ``answered`` (labels, or the operator's words).
    options: list[QuestionOption] | None = None
    multiple: bool = False
    allow_other: bool = False
    answer: list[str] | None = None
    requested_by: str
    subject_id: str
    # Who may see it besides the operator: everyone (``*``), or the agent that asked (a
    # request, which may name what the agent is about to do).
    audience: str = EVERYONE
    created_at: datetime
    expires_at: datetime | None = None
    decided_at: datetime | None = None
    decided_by: str | None = None
    note: str | None = None
    platform_message_id: str | None = None
    # When the operator is (or was) reminded of it unanswered, once; when that happened.
    remind_at: datetime | None = None
    reminded_at: datetime | None = None
    # When it is next offered on a further step of the escalation (none: no further step), and
    # the step it was last escalated to (none: not escalated).
    escalate_at: datetime | None = None
    escalated_to: str | None = None
    # The task it holds up, if the agent named one (A2A shows the task input-required).
    task_id: int | None = None
    traceparent: str | None = Field(
        default=None,
        description="the W3C trace it was asked in: the agent that waits on it continues it",
    )
    # Only on the answer to approve/reject: false when the approval already had this decision,
    # so nothing changed (a note sent with it was not kept).
    changed: bool | None = None
    # Only on an enrollment's approval, as listed or shown: who asks to join.
    applicant: Applicant | None = None


class ApprovalsResponse(Page):
    """Approvals, newest first."""

    approvals: list[Approval]


class Intervention(Resource):
    """Diagnostic → approval → remediation, with evidence."""

    intervention_id: str
    status: InterventionStatus = "open"
    title: str | None = None
    risk: Risk | None = None
    proposed_action: str | None = None
    approval_id: int | None = None
    approval_status: InterventionApprovalStatus = "none"
    created_by: str
    # Agents the operator added: they may change the intervention as its creator may.
    participants: list[str] = Field(default_factory=list)
    created_at: datetime
    updated_at: datetime


class Diagnostic(Resource):
    """What an agent uploaded while diagnosing an intervention."""

    diagnostic_id: int = 0
    intervention_id: str
    agent_id: str
    summary: str
    content: str | JsonObject
    content_type: str | None = None
    severity: Severity = "info"
    created_at: datetime


class InterventionAction(Resource):
    """The recorded trace of a remediation."""

    action_id: int = 0
    intervention_id: str
    agent_id: str
    action: str
    status: RemediationStatus
    evidence_before: str | JsonObject
    evidence_after: str | JsonObject
    link: str | None = None
    created_at: datetime


class InterventionApprovalResult(Resource):
    """An intervention's approval request together with the intervention it moved."""

    approval_id: int
    approval: Approval
    intervention: Intervention


class InterventionSummary(Intervention):
    """An intervention in a list, with its latest diagnostic and last action."""

    latest_diagnostic: Diagnostic | None = None
    last_action: InterventionAction | None = None


class InterventionsResponse(Page):
    """The newest interventions."""

    interventions: list[InterventionSummary]


class Event(Resource):
    """Something that happened; ``event_id`` is the feed's cursor, and what committed before
    another change began has a lower one."""

    event_id: int = 0
    kind: str
    audience: str = EVERYONE
    subject_id: str
    data: JsonObject = Field(default_factory=dict)
    created_at: datetime
    traceparent: str | None = Field(
        default=None,
        description="the W3C trace it happened in (the request's that made it), handed on to"
        " whoever it reaches: a webhook delivery of it is sent in that trace",
    )


class EventsResponse(Resource):
    """Events after a cursor, oldest first, and the cursor to continue from."""

    events: list[Event]
    cursor: int


class Health(Resource):
    """Liveness: every value is a string."""

    status: str
    version: str


class StreamTicket(Resource):
    """Opens ``/v1/events/stream?ticket=…`` for one minute (a browser's EventSource cannot send
    Authorization); it opens nothing else."""

    ticket: str
    expires_at: datetime


class StatusCounts(Resource):
    """What is going on, in numbers."""

    agents: int
    online_agents: int
    pending_messages: int  # an agent's: of its own inbox
    open_tasks: int
    pending_approvals: int
    sent_notifications: int = 0
    failed_notifications: int = 0  # sends the platform refused for good (retry them)


class BridgeStatus(Resource):
    """One operator platform and how its last call went (in the process that answers)."""

    name: str
    healthy: bool
    last_error: str | None = None
    failed_at: datetime | None = None


class Status(Resource):
    """The service's version, uptime, backends and counts; ``bridge`` is the first platform,
    ``bridges`` every one with its health; ``caller`` who the server takes the token for."""

    version: str
    caller: str = Field(
        description="Who the token is, as the server checked it: `operator`, or the agent's id "
        "(the operator acting as an agent is that agent).",
        examples=["operator", "builder"],
    )
    uptime_seconds: float
    storage: str
    bridge: str
    bridges: list[BridgeStatus] = Field(default_factory=list)
    auth: str
    counts: StatusCounts


# ---------------------------------------------------------------- error bodies


class ErrorResponse(BaseModel):
    """The body of every error other than 422."""

    model_config = ConfigDict(defer_build=True)

    detail: str
    code: str


# Policies: rules that decide approvals the moment they are created (relay_core/policy_rules.py
# says how each part matches).

# answer: a question, with fixed options; ask: the operator, reminded and escalated as it says.
PolicyDecision = Literal["approve", "reject", "answer", "ask"]
Verdict = PolicyDecision
MAX_PATTERN = 1000  # characters of one regular expression
MAX_PROGRAM = 1000  # RE2 instructions of one: the time a match may take grows with it
# An agent id where "*" stands for any characters.
AgentPattern = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._:@*-]{1,128}$")]
ClockTime = Annotated[str, StringConstraints(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")]


def _re2_options(**given: int) -> Any:
    """RE2's options for operators' patterns: a refused pattern is the caller's 422, not a
    line on stderr; ``given`` sets others (``max_mem``)."""
    import re2

    options = re2.Options()
    options.log_errors = False
    for name, value in given.items():
        setattr(options, name, value)
    return options


def linear_pattern(pattern: str) -> Any:
    """``pattern`` compiled by RE2, whose matching takes time linear in the text whatever the
    pattern (Python's ``re`` backtracks: ``^(a+)+$`` doubles its time with each character).
    Raises ``ValueError`` saying why RE2 refuses it, or that it is too large."""
    import re2  # loaded by whoever validates or matches a policy, not by every client

    try:
        compiled = re2.compile(pattern, _re2_options())
    except re2.error as exc:
        why = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
        raise ValueError(f"not a regular expression RE2 accepts: {why}") from None
    if compiled.programsize > MAX_PROGRAM:
        raise ValueError(
            f"a regular expression too large to match quickly ({compiled.programsize} RE2"
            f" instructions, at most {MAX_PROGRAM}): use fewer or smaller repetitions"
        )
    return compiled


def linear_set(patterns: list[str]) -> Any:
    """``patterns`` (each accepted by ``linear_pattern``) in one RE2 set, searched in one pass:
    its ``Match(text)`` answers the indexes of those found (None: none)."""
    import re2

    # A set's DFA holds up to a state a character read, each as large as the set's program:
    # room for a title's 500 characters over SET_PROGRAM instructions.
    matcher = re2.Set.SearchSet(_re2_options(max_mem=64 << 20))
    for pattern in patterns:
        matcher.Add(pattern)
    matcher.Compile()
    return matcher


def _compiles(pattern: str | None) -> str | None:
    if pattern is not None:
        linear_pattern(pattern)
    return pattern


Pattern = Annotated[
    str,
    StringConstraints(max_length=MAX_PATTERN),
    AfterValidator(_compiles),
    Field(description="an RE2 regular expression (no backreferences or lookarounds)"),
]


def _command_pattern(pattern: str) -> str:
    try:
        words = shlex.split(pattern)
    except ValueError as exc:
        raise ValueError(f"not a command pattern: {exc}") from None
    if not words:
        raise ValueError("a command pattern names a program")
    if any(char in words[0] for char in "*?[") or "/" in words[0]:
        raise ValueError(f"a command pattern starts with a program's plain name, not {words[0]!r}")
    return pattern


CommandPattern = Annotated[
    str,
    StringConstraints(min_length=1, max_length=1000),
    AfterValidator(_command_pattern),
    Field(
        description="a program and its arguments as a shell writes them (`npm test`); an"
        " argument may be a glob (`tests/*`), and a last `*` stands for any further arguments"
        " (`pytest *`)"
    ),
]
FlagSpelling = Annotated[
    str, StringConstraints(pattern=r"^(-[A-Za-z0-9]|--[A-Za-z0-9][A-Za-z0-9-]*)$", max_length=100)
]


class RefusedProgram(RequestBody):
    """A program refused when it runs with at least one spelling of each flag group."""

    model_config = ConfigDict(extra="forbid")

    program: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._+-]{1,100}$")] = Field(
        description="the program's name (`rm`), found whatever its directory"
    )
    flags: list[Annotated[list[FlagSpelling], Field(min_length=1, max_length=20)]] = Field(
        default_factory=list,
        max_length=20,
        description='groups of spellings of one flag (`[["-r", "-R", "--recursive"], ["-f",'
        ' "--force"]]`): short flags are found combined too (`-rf`), long ones abbreviated',
    )


class CommandCondition(RequestBody):
    """A shell command line, read with a shell parser: exactly one of ``allow`` or ``refuse``
    (docs/resources/approvals.md, "Policies")."""

    model_config = ConfigDict(extra="forbid")

    allow: list[CommandPattern] | None = Field(
        default=None,
        min_length=1,
        max_length=1000,
        description="holds when every simple command matches one of these and nothing is"
        " substituted, redirected out of the working directory, or unreadable",
    )
    refuse: list[RefusedProgram] | None = Field(
        default=None,
        min_length=1,
        max_length=1000,
        description="holds when any simple command, nested ones included, runs one of these",
    )

    @model_validator(mode="after")
    def _one(self) -> CommandCondition:
        if (self.allow is None) == (self.refuse is None):
            raise ValueError("a command condition is exactly one of allow, refuse")
        return self


class PayloadCondition(RequestBody):
    """One condition on the value a JSON Pointer names in the payload: exactly one of these."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    eq: Any = Field(default=None, description="equal to this JSON value")
    in_: list[str | int | float | bool | None] | None = Field(
        default=None, alias="in", max_length=1000, description="equal to one of these values"
    )
    regex: Pattern | None = Field(default=None, description="a string this expression finds")
    lt: float | None = Field(default=None, description="a number below this")
    gt: float | None = Field(default=None, description="a number above this")
    exists: bool | None = Field(default=None, description="the pointer names a value, or not")
    command: CommandCondition | None = Field(
        default=None, description="a shell command line that only runs what is listed"
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> PayloadCondition:
        if len(self.model_fields_set) != 1:
            raise ValueError("a condition is exactly one of eq, in, regex, lt, gt, exists, command")
        return self


class HoursWindow(RequestBody):
    """A time of day window, in a timezone; ``from`` after ``to`` crosses midnight."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    from_: ClockTime = Field(alias="from", description="HH:MM, the window's start")
    to: ClockTime = Field(description="HH:MM, its end (excluded)")
    timezone: Annotated[str, StringConstraints(min_length=1, max_length=64)] = Field(
        description="an IANA name (Europe/Paris)"
    )

    @field_validator("timezone")
    @classmethod
    def _known(cls, name: str) -> str:
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"not an IANA timezone: {name!r}") from None
        return name


def _pointer(pointer: str) -> str:
    if pointer and not pointer.startswith("/"):
        raise ValueError(f"not a JSON Pointer (RFC 6901): {pointer!r} must start with '/'")
    if re.search(r"~[^01]|~$", pointer):
        raise ValueError(f"not a JSON Pointer (RFC 6901): '~' in {pointer!r} is not ~0 or ~1")
    return pointer


JsonPointer = Annotated[str, StringConstraints(max_length=1000), AfterValidator(_pointer)]


class ApprovalMatch(RequestBody):
    """What an approval must be for a policy to decide it: every given part holds (an empty
    match holds for every approval)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    kinds: list[ApprovalKind] | None = Field(default=None, max_length=5)
    agents: list[AgentPattern] | None = Field(
        default=None, max_length=1000, description="agent ids; '*' matches any characters"
    )
    title: Pattern | None = Field(default=None, description="a regular expression it finds")
    payload: dict[JsonPointer, PayloadCondition] | None = Field(
        default=None, max_length=100, description="JSON Pointer → condition"
    )
    hours: HoursWindow | None = None


class PolicyCreate(RequestBody):
    """A rule that decides the approvals it matches, as soon as they are created: approves,
    rejects, answers a question with fixed options, or leaves it to the operator (``ask``),
    reminded and escalated as it says."""

    name: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    decision: PolicyDecision
    note: LongText | None = None
    priority: int = Field(default=0, ge=-1_000_000, le=1_000_000)
    enabled: bool = True
    match: ApprovalMatch = Field(default_factory=ApprovalMatch)
    limit: PolicyLimit | None = None
    answer: list[OptionLabel] | None = Field(
        default=None,
        min_length=1,
        max_length=10,
        description="decision answer: the options' labels it answers a question with (a "
        "question without them all, or taking one where these are several, is not matched)",
    )
    remind_after: int | None = Field(
        default=None,
        ge=1,
        le=MAX_EXPIRES_IN,
        description="decision ask: seconds unanswered before the operator is reminded",
    )
    escalate_after: int | None = Field(
        default=None,
        ge=1,
        le=MAX_EXPIRES_IN,
        description="decision ask: seconds unanswered before each next step of the escalation",
    )

    @model_validator(mode="after")
    def _fields_of_its_decision(self) -> PolicyCreate:
        if (self.answer is not None) != (self.decision == "answer"):
            raise ValueError("an answer policy names its answer, and only it does")
        timed = self.remind_after is not None or self.escalate_after is not None
        if timed and self.decision != "ask":
            raise ValueError("remind_after and escalate_after are an ask policy's")
        if self.decision == "ask" and self.limit is not None:
            raise ValueError("an ask policy decides nothing: it has no limit")
        return self


class Policy(Resource):
    """A policy at its current (or a named) version."""

    policy_id: int = 0
    name: str
    decision: PolicyDecision
    note: str | None = None
    priority: int = 0
    enabled: bool = True
    match: JsonObject = Field(default_factory=dict)
    limit: JsonObject | None = None
    answer: list[str] | None = None
    remind_after: int | None = None
    escalate_after: int | None = None
    version: int = 1
    created_at: datetime
    updated_at: datetime


class PoliciesResponse(Page):
    """Policies in the order they are tried."""

    policies: list[Policy]


class PolicySimulation(RequestBody):
    """An approval as it would be created, to see what the policies would do with it."""

    agent_id: ResourceId
    kind: ApprovalKind = "request"
    title: Title
    detail: LongText | None = None
    payload: SmallJson | None = None
    options: list[QuestionOption] | None = Field(
        default=None, max_length=10, description="a question's options"
    )
    multiple: bool = Field(default=False, description="a question: several may be chosen")
    at: datetime | None = Field(default=None, description="when; default: now")


class PolicyVerdict(Resource):
    """What the policies would do: the decision, the policy and version that made it (none for
    ``ask``: the operator decides), and why."""

    decision: Verdict
    policy_id: int | None = None
    version: int | None = None
    reason: str
    answer: list[str] | None = Field(default=None, description="an answer policy's answer")


# ---------------------------------------------------------------- reservations

# A path pattern in git's wildmatch syntax, relative to the repository's root: ``src/api/**``,
# ``docs/*.md``, ``README.md``; a directory covers what is in it.
PathPattern = Annotated[
    str,
    # Printable, and more than blanks (gitignore's rules drop trailing blanks).
    StringConstraints(
        min_length=1,
        max_length=500,
        pattern=r"^[^\x00-\x1f\x7f]*[^\x00-\x20\x7f][^\x00-\x1f\x7f]*$",
    ),
]
ReservationStatus = Literal["active", "released", "expired"]


class ReservationCreate(RequestBody):
    """Paths an agent is about to edit in a repository the agents share."""

    workspace: Annotated[str, StringConstraints(min_length=1, max_length=200)] = Field(
        description="a name the agents share for one repository (its normalized remote URL)"
    )
    paths: list[PathPattern] = Field(
        min_length=1, max_length=100, description="patterns in git's wildmatch syntax"
    )
    exclusive: bool = Field(default=True, description="false: others may hold them shared")
    ttl_seconds: int = Field(default=3600, ge=60, le=86_400, description="until it lapses")
    reason: Annotated[str, StringConstraints(max_length=500), OneLine] | None = None
    task_id: IntegerId | None = Field(
        default=None, description="released when this task is done, failed or lost"
    )


class ReservationRenew(RequestBody):
    """A reservation's new time to live, from now."""

    ttl_seconds: int = Field(default=3600, ge=60, le=86_400)


class Reservation(Resource):
    """Paths an agent holds in a workspace, until ``expires_at`` or released."""

    reservation_id: int = 0
    workspace: str
    paths: list[str]
    exclusive: bool = True
    holder: str
    reason: str | None = None
    task_id: int | None = None
    status: ReservationStatus = "active"
    created_at: datetime
    expires_at: datetime
    ended_at: datetime | None = None


class ReservationsResponse(Page):
    """Reservations, newest first."""

    reservations: list[Reservation]


class Contested(Resource):
    """A reservation that stands in the way of a request, and why."""

    reservation_id: int
    holder: str
    paths: list[str]
    exclusive: bool
    expires_at: datetime
    reason: str | None = None


class ReservationConflict(ErrorResponse):
    """409 to a reservation: nothing was granted; ``conflicts`` are the reservations in the
    way (none when the conflict is another: a task not held, a retry key reused)."""

    conflicts: list[Contested] = Field(default_factory=list)


# ---------------------------------------------------------------- webhooks

# An event type, or a pattern of them with ``*`` inside (``approval.*``; ``*``: every one).
EventTypePattern = Annotated[
    str, StringConstraints(pattern=r"^[a-z_*]{1,40}(\.[a-z_*]{1,40}){0,3}$", max_length=100)
]
WebhookDeliveryStatus = Literal["pending", "succeeded", "failed"]


def _http_url(url: str, credentials_instead: str) -> str:
    """``url`` if it is an http(s) URL with a host and no credentials (their place is
    ``credentials_instead``)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("an http:// or https:// URL with a host")
    _ = parts.port  # a port past 65535 or not a number: ValueError
    if parts.username or parts.password:
        raise ValueError(f"a URL without credentials ({credentials_instead})")
    return url


def _web_address(url: str) -> str:
    return _http_url(url, "the signature authenticates Relay")


WebAddress = Annotated[
    str, StringConstraints(min_length=1, max_length=2000), AfterValidator(_web_address)
]


class WebhookCreate(RequestBody):
    """An endpoint Relay delivers events to: where, which events, what it is for."""

    url: WebAddress
    events: list[EventTypePattern] = Field(
        default_factory=lambda: ["*"], min_length=1, max_length=100
    )
    description: Annotated[str, StringConstraints(max_length=500)] | None = None


class A2APushKept(Resource):
    """An A2A push-notification config as kept with its endpoint: its id, whose it is (the
    caller) and of which agent's task, and what is sent with each notification: its token and
    credentials sealed, and the credentials' scheme."""

    config_id: str
    caller: str
    agent_id: str
    token: str | None = None
    scheme: str | None = None
    credentials: str | None = None


class Webhook(Resource):
    """An endpoint and what it subscribes to; ``secret`` only in the answers that make one (its
    creation and a rotation)."""

    webhook_id: int = 0
    url: str
    events: list[str]
    description: str | None = None
    enabled: bool = True
    disabled_reason: str | None = None
    created_at: datetime
    updated_at: datetime
    secret: str | None = Field(
        default=None, description="whsec_…: the signing secret, in the answer that made it only"
    )
    # The signing secret sealed (AES-GCM), and the one it replaced while both sign.
    sealed_secret: str = Field(default="", exclude=True)
    sealed_previous: str | None = Field(default=None, exclude=True)
    previous_until: datetime | None = Field(default=None, exclude=True)
    # The feed's cursor when it was created: it gets the events after it.
    after_event_id: int = Field(default=0, exclude=True)
    task_id: int | None = Field(
        default=None, description="an A2A push-notification config's: it takes this task's only"
    )
    # An A2A push-notification config's (kept, never sent).
    a2a_push: A2APushKept | None = Field(default=None, exclude=True)


class WebhooksResponse(Page):
    """Endpoints, oldest first."""

    webhooks: list[Webhook]


class WebhookDelivery(Resource):
    """One event on its way to one endpoint: ``message_id`` is its ``webhook-id`` header, the
    same on every attempt."""

    delivery_id: int = 0
    webhook_id: int
    event_type: str
    message_id: str
    attempts: int = 0
    status: WebhookDeliveryStatus = "pending"
    last_status_code: int | None = None
    last_error: str | None = None
    next_attempt_at: datetime | None = None
    created_at: datetime
    event_id: int = Field(default=0, exclude=True)
    body: str = Field(default="", exclude=True)  # what every attempt sends, byte for byte
    traceparent: str | None = Field(default=None, exclude=True)  # its event's, sent with it


class WebhookDeliveriesResponse(Page):
    """An endpoint's deliveries, newest first."""

    deliveries: list[WebhookDelivery]


# ---------------------------------------------------------------- A2A calls (outbound)

A2ACallStatus = Literal["awaiting_approval", "rejected", "sending", "sent", "failed"]


def _agent_address(url: str) -> str:
    return _http_url(url, "give a token as `bearer`")


AgentAddress = Annotated[
    str, StringConstraints(min_length=1, max_length=2000), AfterValidator(_agent_address)
]


class A2ASend(RequestBody):
    """A message for an external A2A agent, sent by Relay on the caller's behalf: its text, its
    data, or both; to continue one of its tasks, that task's id."""

    url: AgentAddress = Field(
        description="the agent's card (a URL ending in .json) or its base URL, under which "
        "/.well-known/agent-card.json is its card"
    )
    text: Annotated[str, StringConstraints(min_length=1, max_length=65536)] | None = None
    data: SmallJson | None = Field(default=None, description="sent as a data part")
    task_id: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = Field(
        default=None, description="the remote agent's task this message answers or continues"
    )
    context_id: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    bearer: SecretStr | None = Field(
        default=None,
        description="a token the remote agent's card asks for; kept sealed while the call is "
        "followed, never shown",
    )

    @model_validator(mode="after")
    def _says_something(self) -> A2ASend:
        if self.text is None and self.data is None:
            raise ValueError("a message has text, data or both")
        return self


class A2ACall(Resource):
    """A message Relay sent (or will send, once approved) to an external A2A agent, and what
    that agent answered: its task, followed until it ends or asks for input, or its reply."""

    call_id: int = 0
    agent_id: str = Field(description="the caller")
    url: str
    status: A2ACallStatus
    approval_id: int | None = Field(
        default=None, description="the approval a policy asked for before sending"
    )
    remote_name: str | None = Field(default=None, description="the name its card gives")
    endpoint: str | None = Field(default=None, description="its JSON-RPC endpoint, from the card")
    message: JsonObject = Field(description="the A2A Message sent, in A2A's JSON")
    remote_task_id: str | None = None
    context_id: str | None = None
    state: str | None = Field(
        default=None,
        description="the remote task's state, in A2A's words: TASK_STATE_WORKING, "
        "TASK_STATE_COMPLETED, TASK_STATE_INPUT_REQUIRED…",
    )
    answer: JsonObject | None = Field(
        default=None,
        description="what the agent last answered, in A2A's JSON: {task: …} or {message: …}",
    )
    error: str | None = None
    followed_until: datetime | None = Field(
        default=None, description="while its task runs, Relay reads it again until then"
    )
    created_at: datetime
    updated_at: datetime
    # When the follower next reads the remote task or sends the message (kept, never shown).
    due_at: datetime | None = Field(default=None, exclude=True)


class A2ACallsResponse(Page):
    """A2A calls, newest first."""

    calls: list[A2ACall]
