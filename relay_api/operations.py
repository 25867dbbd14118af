"""Every operation of the API, described once.

One row per operation: how it is reached (method, path), what it takes (path, query, body
models) and answers (status, response model), who may call it (a token; the operator's alone),
whether a create honours ``Idempotency-Key``, how it is rate-limited, and the errors it raises
beyond those its shape implies. The server binds each row to the service
method that serves it (``relay_server.bindings``) and builds its router and its OpenAPI
document from the table; the client takes its paths, retry-safety and error classes from it,
and the CLI checks its coverage against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from relay_api import errors
from relay_api import models as m
from relay_api import params as p

R = TypeVar("R", bound=BaseModel)

Method = Literal["GET", "POST"]
Access = Literal["public", "token"]
# Whom a rate limit counts: the authenticated caller, or the client's address (public routes).
RateLimit = Literal["caller", "address", "none"]

ErrorClass = type[errors.RelayError]


@dataclass(frozen=True)
class Operation(Generic[R]):
    """One operation: how it is reached, what it takes and answers."""

    id: str
    method: Method
    path: str
    response: type[R]
    status: int = 200
    body: type[BaseModel] | None = None
    path_params: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    access: Access = "token"
    rate_limit: RateLimit = "caller"
    stream: bool = False  # Server-Sent Events of ``response`` instead of one JSON body
    # Domain errors it raises beyond those its shape implies (see ``raises``).
    errors: tuple[ErrorClass, ...] = ()
    # What it does, for people: the first sentence is OpenAPI's summary, the SDK's first line.
    doc: str = ""
    # A create that honours ``Idempotency-Key``: a retry with the key answers the first answer.
    idempotent: bool = False
    # The operator's alone: the server refuses an agent's token before the service is called.
    operator_only: bool = False
    # The body of its 409, where it says more than ``ErrorResponse``.
    conflict: type[BaseModel] | None = None

    def __post_init__(self) -> None:
        if self.idempotent and self.method != "POST":
            raise ValueError(f"{self.id}: only a POST honours Idempotency-Key")
        if self.operator_only and self.access != "token":
            raise ValueError(f"{self.id}: an operator-only operation needs a token")

    @property
    def raises(self) -> tuple[ErrorClass, ...]:
        """Every domain error the operation can raise."""
        found: dict[ErrorClass, None] = dict.fromkeys(self.errors)
        found[errors.StorageUnavailable] = None
        if self.access == "token":
            found |= {errors.AuthenticationError: None, errors.PermissionDenied: None}
        if self.path_params is not None:
            found[errors.NotFound] = None
        if self.method == "POST" and self.access == "token":
            found[errors.Conflict] = None
        return tuple(found)

    @property
    def tag(self) -> str:
        """The resource the operation belongs to."""
        return self.id.split(".")[0]


Op = Operation
HEALTH = Op(
    "health",
    "GET",
    "/health",
    m.Health,
    access="public",
    rate_limit="none",
    doc="Alive, and which version.",
)
STATUS = Op(
    "status",
    "GET",
    "/v1/status",
    m.Status,
    doc="Version, uptime, backends and the counts that say what is going on.",
)

AGENTS_REGISTER = Op(
    "agents.register",
    "POST",
    "/v1/agents/register",
    m.AgentRegistered,
    status=201,
    body=m.AgentRegister,
    doc="Register an agent (or update it); a token is issued when it has none or on rotation.",
    idempotent=True,
    operator_only=True,
)
AGENTS_ME = Op(
    "agents.me",
    "GET",
    "/v1/agents/me",
    m.Agent,
    errors=(errors.NotFound,),
    doc=(
        "The agent the token belongs to, with its presence and its count of unacknowledged "
        "messages."
    ),
)
AGENTS_HEARTBEAT = Op(
    "agents.heartbeat",
    "POST",
    "/v1/agents/{agent_id}/heartbeat",
    m.AgentHeartbeatResult,
    body=m.AgentHeartbeat,
    path_params=p.AgentPath,
    doc="Record a sign of life; answer with the count of unacknowledged messages.",
)
AGENTS_LIST = Op(
    "agents.list",
    "GET",
    "/v1/agents",
    m.AgentsResponse,
    query=p.PageQuery,
    doc=(
        "Registered agents by id, with their presence and their count of unacknowledged "
        "messages; a page at a time."
    ),
)
AGENTS_INBOX = Op(
    "agents.inbox",
    "GET",
    "/v1/agents/{agent_id}/inbox",
    m.InboxResponse,
    path_params=p.AgentPath,
    query=p.InboxQuery,
    doc=(
        "The agent's unacknowledged direct messages, oldest first; pending ones become "
        "delivered. With ``wait``, an empty inbox is answered when a message arrives, or "
        "empty after that many seconds."
    ),
)
AGENTS_A2A = Op(
    "agents.a2a",
    "POST",
    "/v1/agents/{agent_id}/a2a",
    m.Agent,
    body=m.A2AConfig,
    path_params=p.AgentPath,
    doc=(
        "Make the agent reachable over A2A, or no longer: an agent card of its own, listing "
        "its skills, and a JSON-RPC endpoint at /a2a/agents/{agent_id}. The agent itself or "
        "the operator."
    ),
)

MESSAGES_SEND = Op(
    "messages.send",
    "POST",
    "/v1/messages",
    m.Message,
    status=201,
    body=m.MessageCreate,
    errors=(errors.NotFound,),
    doc="Send a direct message or post to a room, as the caller.",
    idempotent=True,
)
MESSAGES_ACK = Op(
    "messages.ack",
    "POST",
    "/v1/messages/{message_id}/ack",
    m.Message,
    body=m.MessageAck,
    path_params=p.MessagePath,
    doc="Acknowledge a direct message; acknowledging twice answers the same.",
)
MESSAGES_SHOW = Op(
    "messages.show",
    "GET",
    "/v1/messages/{message_id}",
    m.Message,
    path_params=p.MessagePath,
    doc=(
        "One message with its receipts (``delivered_at``, ``acked_at``), to its sender, its "
        "recipient (a room's members for a post) and the operator; 404 to anyone else. Its "
        "recipient reading it is a delivery."
    ),
)
MESSAGES_THREAD = Op(
    "messages.thread",
    "GET",
    "/v1/messages/{message_id}/thread",
    m.ThreadResponse,
    path_params=p.MessagePath,
    query=p.ThreadQuery,
    doc=(
        "The conversation a message belongs to: its first message and every answer the "
        "caller may read, oldest first; a page at a time. 404 when the caller may read none "
        "of it."
    ),
)

SEARCH = Op(
    "search",
    "GET",
    "/v1/search",
    m.SearchResponse,
    query=p.SearchQuery,
    doc=(
        "What agents and the operator wrote, found by words (web-search syntax): messages, room "
        "posts, tasks, approvals and actions the caller may read, best first; a page at a time."
    ),
)

NOTIFY_SEND = Op(
    "notify.send",
    "POST",
    "/v1/notify",
    m.Notification,
    status=201,
    body=m.NotifyText,
    errors=(errors.BridgeError,),
    doc=(
        "Send ``text`` to the operator on every platform. When none delivered it, the "
        "notification is kept as failed and ``BridgeError`` is raised."
    ),
    idempotent=True,
)
NOTIFY_REPLY = Op(
    "notify.reply",
    "POST",
    "/v1/notify/replies",
    m.Message,
    status=201,
    body=m.NotifyReply,
    errors=(errors.NotFound,),
    doc="Deliver the operator's reply to the agent that sent the matching notification.",
    idempotent=True,
    operator_only=True,
)
NOTIFY_LIST = Op(
    "notify.list",
    "GET",
    "/v1/notifications",
    m.NotificationsResponse,
    query=p.PageQuery,
    doc=(
        "Notifications, newest first, with how many replies each got: all of them for the "
        "operator, its own for an agent; a page at a time."
    ),
)
NOTIFY_RETRY = Op(
    "notify.retry",
    "POST",
    "/v1/notifications/{notification_id}/retry",
    m.Notification,
    path_params=p.NotificationPath,
    errors=(errors.BridgeError,),
    doc=(
        "Send a failed notification again (its own agent or the operator), to the platforms "
        "that did not deliver it; a sent one answers as it is."
    ),
)

ROOMS_LIST = Op(
    "rooms.list",
    "GET",
    "/v1/rooms",
    m.RoomsResponse,
    query=p.PageQuery,
    doc="Rooms by id; a page at a time.",
)
ROOMS_JOIN = Op(
    "rooms.join",
    "POST",
    "/v1/rooms/{room_id}/join",
    m.RoomMember,
    status=201,
    body=m.MessageAck,
    path_params=p.RoomPath,
    doc="Join a room, creating it (outside any space) when it does not exist yet.",
    idempotent=True,
)
ROOMS_MESSAGES = Op(
    "rooms.messages",
    "GET",
    "/v1/rooms/{room_id}/messages",
    m.RoomMessagesResponse,
    path_params=p.RoomPath,
    query=p.RoomMessagesQuery,
    doc=(
        "The newest ``limit`` messages of a room, oldest of them first; with ``thread_id``, of "
        "that conversation only."
    ),
)

SPACES_LIST = Op(
    "spaces.list",
    "GET",
    "/v1/spaces",
    m.SpacesResponse,
    query=p.SpacesQuery,
    doc="Active spaces by id, and archived ones on request; a page at a time.",
)
SPACES_CREATE = Op(
    "spaces.create",
    "POST",
    "/v1/spaces",
    m.Space,
    status=201,
    body=m.SpaceCreate,
    doc="Create a space; its id is derived from the name when not given.",
    idempotent=True,
    operator_only=True,
)
SPACES_ADD_ROOM = Op(
    "spaces.add_room",
    "POST",
    "/v1/spaces/{space_id}/rooms",
    m.Room,
    status=201,
    body=m.RoomInSpaceCreate,
    path_params=p.SpacePath,
    doc="Create a room inside a space that is not archived.",
    idempotent=True,
    operator_only=True,
)
SPACES_SYNC = Op(
    "spaces.sync",
    "POST",
    "/v1/spaces/sync",
    m.SpaceSyncReport,
    doc=(
        "Give every room of an active space its place on every operator platform that has "
        "threads (a forum topic; a Matrix room in a Matrix space): made once, found after."
    ),
    operator_only=True,
)
SPACES_ARCHIVE = Op(
    "spaces.archive",
    "POST",
    "/v1/spaces/{space_id}/archive",
    m.Space,
    path_params=p.SpacePath,
    doc="Archive a space (one-way); its rooms become read-only. Archiving twice is a no-op.",
    operator_only=True,
)

TASKS_CREATE = Op(
    "tasks.create",
    "POST",
    "/v1/tasks",
    m.Task,
    status=201,
    body=m.TaskCreate,
    errors=(errors.NotFound,),
    doc="Create an open task.",
    idempotent=True,
)
TASKS_LIST = Op(
    "tasks.list",
    "GET",
    "/v1/tasks",
    m.TasksResponse,
    query=p.TasksQuery,
    doc="Tasks matching every given filter, by id; a page at a time.",
)
TASKS_GET = Op(
    "tasks.get",
    "GET",
    "/v1/tasks/{task_id}",
    m.Task,
    path_params=p.TaskPath,
    doc="One task.",
)
TASKS_EVENTS = Op(
    "tasks.events",
    "GET",
    "/v1/tasks/{task_id}/events",
    m.TaskEventsResponse,
    path_params=p.TaskPath,
    query=p.PageQuery,
    doc="A task's trail, oldest first; a page at a time.",
)
TASKS_CLAIM = Op(
    "tasks.claim",
    "POST",
    "/v1/tasks/{task_id}/claim",
    m.Task,
    body=m.TaskClaim,
    path_params=p.TaskPath,
    doc="Claim an open task; exactly one claimer wins, a repeat by the winner answers the same.",
)
TASKS_EVENT = Op(
    "tasks.event",
    "POST",
    "/v1/tasks/{task_id}/events",
    m.TaskEvent,
    status=201,
    body=m.TaskEventCreate,
    path_params=p.TaskPath,
    doc="Record progress by the claimer; it moves the task to in_progress and renews the lease.",
    idempotent=True,
)
TASKS_COMPLETE = Op(
    "tasks.complete",
    "POST",
    "/v1/tasks/{task_id}/complete",
    m.Task,
    body=m.TaskFinish,
    path_params=p.TaskPath,
    doc="Complete a task held by the agent; completing twice answers the same.",
)
TASKS_FAIL = Op(
    "tasks.fail",
    "POST",
    "/v1/tasks/{task_id}/fail",
    m.Task,
    body=m.TaskFinish,
    path_params=p.TaskPath,
    doc="Fail a task held by the agent; with ``retry`` and attempts left it is open again.",
)
TASKS_CANCEL = Op(
    "tasks.cancel",
    "POST",
    "/v1/tasks/{task_id}/cancel",
    m.Task,
    body=m.TaskCancel,
    path_params=p.TaskPath,
    doc=(
        "Cancel a task that is not finished: its creator or the operator; cancelling twice "
        "answers the same."
    ),
)

ACTIONS_RECORD = Op(
    "actions.record",
    "POST",
    "/v1/actions",
    m.Action,
    status=201,
    body=m.ActionCreate,
    errors=(errors.NotFound,),
    doc="Append an action by the caller (or the agent the operator names).",
    idempotent=True,
)
ACTIONS_LIST = Op(
    "actions.list",
    "GET",
    "/v1/actions",
    m.ActionsResponse,
    query=p.ActionsQuery,
    doc=(
        "Actions, newest first, optionally of one agent; a page at a time. An agent sees its "
        "own only (the log holds every refused request with its client's address); the "
        "operator sees all."
    ),
)

ENROLL_REQUEST = Op(
    "enroll.request",
    "POST",
    "/v1/enroll",
    m.EnrollmentCreated,
    status=201,
    body=m.EnrollRequest,
    access="public",
    rate_limit="address",
    errors=(errors.Conflict,),
    doc="Ask to join; answers with the claim to poll with (shown once).",
    idempotent=True,
)
ENROLL_STATUS = Op(
    "enroll.status",
    "GET",
    "/v1/enroll/{enroll_id}",
    m.EnrollmentState,
    path_params=p.EnrollPath,
    query=p.EnrollQuery,
    access="public",
    rate_limit="address",
    doc="The enrollment's state; the first poll after approval carries the agent's token.",
)

APPROVALS_LIST = Op(
    "approvals.list",
    "GET",
    "/v1/approvals",
    m.ApprovalsResponse,
    query=p.ApprovalsQuery,
    doc=(
        "Approvals, newest first, optionally of one status; a page at a time. An agent's page "
        "leaves out other agents' requests."
    ),
)
APPROVALS_REQUEST = Op(
    "approvals.request",
    "POST",
    "/v1/approvals",
    m.Approval,
    status=201,
    body=m.ApprovalRequest,
    errors=(errors.NotFound,),
    doc="An agent asks the operator to approve something; every platform shows it.",
    idempotent=True,
)
APPROVALS_SHOW = Op(
    "approvals.show",
    "GET",
    "/v1/approvals/{approval_id}",
    m.Approval,
    path_params=p.ApprovalPath,
    query=p.WaitQuery,
    doc=(
        "One approval; with ``wait``, once it is decided (or expires), or after ``wait`` "
        "seconds still pending."
    ),
)
APPROVALS_APPROVE = Op(
    "approvals.approve",
    "POST",
    "/v1/approvals/{approval_id}/approve",
    m.Approval,
    body=m.ApprovalDecision,
    path_params=p.ApprovalPath,
    doc=(
        "Approve; approving twice answers the same with ``changed`` false, approving a "
        "decided one is a conflict. With ``payload``, an agent's request is approved as the "
        "operator changed it (``approved_payload``); on anything else, or on a prompt whose host "
        "cannot run it changed (Codex's, a channel's), that is a conflict. ``command`` changes "
        "only the command of a coding agent's request (a request that runs none is a "
        "conflict). With ``remember``, a "
        "policy approving requests like it from now on is created with the decision "
        "(``remembered_policy_id``); a request it cannot be narrowed to is a conflict."
    ),
    operator_only=True,
)
APPROVALS_WITHDRAW = Op(
    "approvals.withdraw",
    "POST",
    "/v1/approvals/{approval_id}/withdraw",
    m.Approval,
    body=m.ApprovalWithdrawal,
    path_params=p.ApprovalPath,
    doc=(
        "Withdraw a pending request, as the agent that asked it (nobody waits for its answer "
        "any more): it is ``withdrawn``, decided by nobody, and every platform's card says so. "
        "Withdrawing twice answers the same with ``changed`` false; withdrawing a decided one, "
        "or anything but a request, is a conflict."
    ),
)
APPROVALS_REJECT = Op(
    "approvals.reject",
    "POST",
    "/v1/approvals/{approval_id}/reject",
    m.Approval,
    body=m.ApprovalDecision,
    path_params=p.ApprovalPath,
    doc=(
        "Reject; rejecting twice answers the same with ``changed`` false, rejecting a decided "
        "one is a conflict. The note reaches the agent as the reason; with ``interrupt`` the "
        "agent is also asked to stop what it is doing (Claude Code's hook ends its turn)."
    ),
    operator_only=True,
)
APPROVALS_ANSWER = Op(
    "approvals.answer",
    "POST",
    "/v1/approvals/{approval_id}/answer",
    m.Approval,
    body=m.ApprovalAnswer,
    path_params=p.ApprovalPath,
    doc=(
        "Answer a question (an approval of kind ``question``): the labels chosen, or the "
        "operator's own words where it allows them; it is then ``answered``. The first answer "
        "stands: answering again answers the same with ``changed`` false. An answer that is "
        "not among its options is invalid; anything but a pending question is a conflict."
    ),
    operator_only=True,
)

POLICIES_CREATE = Op(
    "policies.create",
    "POST",
    "/v1/policies",
    m.Policy,
    status=201,
    body=m.PolicyCreate,
    doc="A new policy, version 1; it decides approvals created from now on.",
    idempotent=True,
    operator_only=True,
)
POLICIES_LIST = Op(
    "policies.list",
    "GET",
    "/v1/policies",
    m.PoliciesResponse,
    query=p.PageQuery,
    doc="Policies, oldest first; a page at a time.",
    operator_only=True,
)
POLICIES_SIMULATE = Op(
    "policies.simulate",
    "POST",
    "/v1/policies/simulate",
    m.PolicyVerdict,
    body=m.PolicySimulation,
    doc=(
        "What the enabled policies would do with such an approval; creates nothing (a limit "
        "is counted as it stands)."
    ),
    operator_only=True,
)
POLICIES_SHOW = Op(
    "policies.show",
    "GET",
    "/v1/policies/{policy_id}",
    m.Policy,
    path_params=p.PolicyPath,
    query=p.PolicyVersionQuery,
    doc="The policy now, or as it was at ``version``.",
    operator_only=True,
)
POLICIES_REPLACE = Op(
    "policies.replace",
    "POST",
    "/v1/policies/{policy_id}",
    m.Policy,
    body=m.PolicyCreate,
    path_params=p.PolicyPath,
    doc="Replace a policy whole: its next version (earlier ones stay readable).",
    operator_only=True,
)
POLICIES_DISABLE = Op(
    "policies.disable",
    "POST",
    "/v1/policies/{policy_id}/disable",
    m.Policy,
    path_params=p.PolicyPath,
    doc="Stop the policy deciding (a new version); it stays readable.",
    operator_only=True,
)
POLICIES_ENABLE = Op(
    "policies.enable",
    "POST",
    "/v1/policies/{policy_id}/enable",
    m.Policy,
    path_params=p.PolicyPath,
    doc="Let the policy decide again (a new version).",
    operator_only=True,
)

RESERVATIONS_CREATE = Op(
    "reservations.create",
    "POST",
    "/v1/reservations",
    m.Reservation,
    status=201,
    body=m.ReservationCreate,
    errors=(errors.Contested, errors.NotFound),
    conflict=m.ReservationConflict,
    doc=(
        "Reserve paths of a workspace for the calling agent: all of them, or none (409 names "
        "the reservations in the way)."
    ),
    idempotent=True,
)
RESERVATIONS_LIST = Op(
    "reservations.list",
    "GET",
    "/v1/reservations",
    m.ReservationsResponse,
    query=p.ReservationsQuery,
    doc="Reservations, newest first: active ones, of a workspace, a holder or covering a path.",
)
RESERVATIONS_SHOW = Op(
    "reservations.show",
    "GET",
    "/v1/reservations/{reservation_id}",
    m.Reservation,
    path_params=p.ReservationPath,
    doc="One reservation.",
)
RESERVATIONS_RENEW = Op(
    "reservations.renew",
    "POST",
    "/v1/reservations/{reservation_id}/renew",
    m.Reservation,
    body=m.ReservationRenew,
    path_params=p.ReservationPath,
    doc="Hold an active reservation for ``ttl_seconds`` more from now (its holder).",
)
RESERVATIONS_RELEASE = Op(
    "reservations.release",
    "POST",
    "/v1/reservations/{reservation_id}/release",
    m.Reservation,
    path_params=p.ReservationPath,
    doc="Release a reservation (its holder or the operator); releasing twice is fine.",
)
A2A_SEND = Op(
    "a2a.send",
    "POST",
    "/v1/a2a/send",
    m.A2ACall,
    status=201,
    body=m.A2ASend,
    doc=(
        "Send a message to an external A2A agent through Relay: its card is read, the message "
        "sent, and its task followed in the feed (a2a.call.changed) until it ends or asks for "
        "input; an agent out of reach leaves the call failed, its error in words. Where a "
        "policy matches the call (approval kind a2a), it is held for its approval first "
        "(status awaiting_approval) and sent once approved. The call is logged."
    ),
    idempotent=True,
)
A2A_LIST = Op(
    "a2a.list",
    "GET",
    "/v1/a2a/calls",
    m.A2ACallsResponse,
    query=p.A2ACallsQuery,
    doc="A2A calls, newest first: the calling agent's own; the operator's, every agent's.",
)
A2A_SHOW = Op(
    "a2a.show",
    "GET",
    "/v1/a2a/calls/{call_id}",
    m.A2ACall,
    path_params=p.A2ACallPath,
    doc="One A2A call, as its remote agent last answered (its caller or the operator).",
)
WEBHOOKS_CREATE = Op(
    "webhooks.create",
    "POST",
    "/v1/webhooks",
    m.Webhook,
    status=201,
    body=m.WebhookCreate,
    doc=(
        "A new endpoint; it gets the events that happen from now on. The answer holds its "
        "signing secret, shown this once."
    ),
    idempotent=True,
    operator_only=True,
)
WEBHOOKS_LIST = Op(
    "webhooks.list",
    "GET",
    "/v1/webhooks",
    m.WebhooksResponse,
    query=p.PageQuery,
    doc="Endpoints, oldest first; a page at a time.",
    operator_only=True,
)
WEBHOOKS_SHOW = Op(
    "webhooks.show",
    "GET",
    "/v1/webhooks/{webhook_id}",
    m.Webhook,
    path_params=p.WebhookPath,
    doc="An endpoint (never its secret).",
    operator_only=True,
)
WEBHOOKS_REPLACE = Op(
    "webhooks.replace",
    "POST",
    "/v1/webhooks/{webhook_id}",
    m.Webhook,
    body=m.WebhookCreate,
    path_params=p.WebhookPath,
    doc="Replace an endpoint's URL, events and description; its secret stays.",
    operator_only=True,
)
WEBHOOKS_DISABLE = Op(
    "webhooks.disable",
    "POST",
    "/v1/webhooks/{webhook_id}/disable",
    m.Webhook,
    path_params=p.WebhookPath,
    doc="Stop delivering to the endpoint; what is pending waits until it is enabled.",
    operator_only=True,
)
WEBHOOKS_ENABLE = Op(
    "webhooks.enable",
    "POST",
    "/v1/webhooks/{webhook_id}/enable",
    m.Webhook,
    path_params=p.WebhookPath,
    doc="Deliver to the endpoint again, from where it stopped.",
    operator_only=True,
)
WEBHOOKS_ROTATE_SECRET = Op(
    "webhooks.rotate_secret",
    "POST",
    "/v1/webhooks/{webhook_id}/rotate-secret",
    m.Webhook,
    path_params=p.WebhookPath,
    doc=(
        "A new signing secret, shown this once; for a while (24 hours unless configured) "
        "every delivery is signed with the old one too."
    ),
    operator_only=True,
)
WEBHOOKS_TEST = Op(
    "webhooks.test",
    "POST",
    "/v1/webhooks/{webhook_id}/test",
    m.WebhookDelivery,
    path_params=p.WebhookPath,
    doc="Send the endpoint a ``webhook.test`` event now; the answer is its delivery.",
    operator_only=True,
)
WEBHOOKS_DELIVERIES = Op(
    "webhooks.deliveries",
    "GET",
    "/v1/webhooks/{webhook_id}/deliveries",
    m.WebhookDeliveriesResponse,
    path_params=p.WebhookPath,
    query=p.WebhookDeliveriesQuery,
    doc="An endpoint's deliveries, newest first; a page at a time.",
    operator_only=True,
)
WEBHOOKS_RETRY = Op(
    "webhooks.retry",
    "POST",
    "/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry",
    m.WebhookDelivery,
    path_params=p.WebhookDeliveryPath,
    doc="Send a failed delivery again, as new (its attempts start over, its webhook-id stays).",
    operator_only=True,
)

INTERVENTIONS_REQUEST_APPROVAL = Op(
    "interventions.request_approval",
    "POST",
    "/v1/interventions/{intervention_id}/request-approval",
    m.InterventionApprovalResult,
    status=201,
    body=m.InterventionApprovalRequest,
    path_params=p.InterventionPath,
    doc="Ask the operator to approve a proposed remediation (one pending request at a time).",
    idempotent=True,
)
INTERVENTIONS_APPROVAL = Op(
    "interventions.approval",
    "GET",
    "/v1/interventions/{intervention_id}/approval",
    m.Approval,
    path_params=p.InterventionPath,
    doc="The intervention's current approval request.",
)
INTERVENTIONS_DIAGNOSTIC = Op(
    "interventions.diagnostic",
    "POST",
    "/v1/interventions/{intervention_id}/diagnostic",
    m.Diagnostic,
    status=201,
    body=m.DiagnosticUpload,
    path_params=p.InterventionPath,
    doc="Keep a diagnostic; every upload is stored.",
    idempotent=True,
)
INTERVENTIONS_SHOW_DIAGNOSTIC = Op(
    "interventions.show_diagnostic",
    "GET",
    "/v1/interventions/{intervention_id}/diagnostic",
    m.Diagnostic,
    path_params=p.InterventionPath,
    doc="The latest diagnostic.",
)
INTERVENTIONS_LIST = Op(
    "interventions.list",
    "GET",
    "/v1/interventions",
    m.InterventionsResponse,
    query=p.InterventionsQuery,
    doc=(
        "Interventions, newest first, each with its latest diagnostic and last action; a page "
        "at a time."
    ),
)
INTERVENTIONS_ACTION = Op(
    "interventions.action",
    "POST",
    "/v1/interventions/{intervention_id}/action",
    m.InterventionAction,
    status=201,
    body=m.InterventionActionCreate,
    path_params=p.InterventionPath,
    doc="Record the real trace of a remediation; it needs an approved approval.",
    idempotent=True,
)

INTERVENTIONS_ADD_PARTICIPANT = Op(
    "interventions.add_participant",
    "POST",
    "/v1/interventions/{intervention_id}/participants",
    m.Intervention,
    status=200,
    body=m.InterventionParticipant,
    path_params=p.InterventionPath,
    errors=(errors.Conflict,),
    doc="Let another agent change the intervention beside its creator (operator only).",
    operator_only=True,
)

EVENTS_LIST = Op(
    "events.list",
    "GET",
    "/v1/events",
    m.EventsResponse,
    query=p.EventsQuery,
    doc=(
        "Events the caller may see after the cursor (none given: from now), waiting up to "
        "``wait`` seconds for the first one."
    ),
)
EVENTS_TICKET = Op(
    "events.ticket",
    "POST",
    "/v1/events/ticket",
    m.StreamTicket,
    doc=(
        "A ticket that opens the caller's event stream for the next minute, for a browser's "
        "EventSource, which cannot send Authorization: ``/v1/events/stream?ticket=…``. It is "
        "a random value, kept by its hash, and opens nothing else."
    ),
)
EVENTS_STREAM = Op(
    "events.stream",
    "GET",
    "/v1/events/stream",
    m.Event,
    query=p.EventStreamQuery,
    stream=True,
    doc=(
        "Events as they commit, forever. Yields None now and then when nothing happened (the "
        "transport sends a keep-alive); ends when the service shuts down. (``ticket`` is how "
        "a browser authenticated; the server read it before.)"
    ),
)

OPERATIONS: tuple[Operation[Any], ...] = tuple(
    value for value in list(globals().values()) if isinstance(value, Operation)
)
