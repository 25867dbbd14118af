"""Every operation of the API, described once.

One row per operation: how it is reached (method, path), the service method that serves it,
what it takes (path, query, body models) and answers (status, response model), who may call it,
how it is rate-limited, and the domain errors it raises beyond those its shape implies. The
server builds its router and its OpenAPI document from this table, the client its paths,
retry-safety and error classes, and the CLI checks its coverage against it.

A service method is called with the caller first (for operations that need a token), then the
path and query fields and ``body`` as keyword arguments; a creating operation also takes
``once``, the retry key of ``relay_core.idempotency``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from relay_core import errors
from relay_core import models as m
from relay_core import params as p
from relay_core.services.actions import ActionsService
from relay_core.services.agents import AgentsService
from relay_core.services.approvals import ApprovalsService
from relay_core.services.enroll import EnrollService
from relay_core.services.events import EventsService
from relay_core.services.interventions import InterventionsService
from relay_core.services.messages import MessagesService
from relay_core.services.notify import NotifyService
from relay_core.services.policies import PoliciesService
from relay_core.services.rooms import RoomsService
from relay_core.services.spaces import SpacesService
from relay_core.services.system import SystemService
from relay_core.services.tasks import TasksService

R = TypeVar("R", bound=BaseModel)

Method = Literal["GET", "POST"]
Access = Literal["public", "token"]
# Whom a rate limit counts: the authenticated caller, or the client's address (public routes).
RateLimit = Literal["caller", "address", "none"]

ErrorClass = type[errors.RelayError]


@dataclass(frozen=True)
class Operation(Generic[R]):
    """One operation: how it is reached, what serves it, what it takes and answers."""

    id: str
    method: Method
    path: str
    serve: Callable[..., Any]
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

    @property
    def creates(self) -> bool:
        """A creating operation: retry-safe with a key (``once``), whatever the transport."""
        return self.method == "POST" and self.status == 201

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
HEALTH = Op("health", "GET", "/health", SystemService.health, m.Health, access="public",
           rate_limit="none")  # fmt: skip
STATUS = Op("status", "GET", "/v1/status", SystemService.status, m.Status)

AGENTS_REGISTER = Op(
    "agents.register", "POST", "/v1/agents/register", AgentsService.register, m.AgentRegistered,
    201, m.AgentRegister,
)  # fmt: skip
AGENTS_ME = Op("agents.me", "GET", "/v1/agents/me", AgentsService.me, m.Agent,
               errors=(errors.NotFound,))  # fmt: skip
AGENTS_HEARTBEAT = Op(
    "agents.heartbeat", "POST", "/v1/agents/{agent_id}/heartbeat", AgentsService.heartbeat,
    m.AgentHeartbeatResult, body=m.AgentHeartbeat, path_params=p.AgentPath,
)  # fmt: skip
AGENTS_LIST = Op(
    "agents.list", "GET", "/v1/agents", AgentsService.list, m.AgentsResponse, query=p.PageQuery
)
AGENTS_INBOX = Op(
    "agents.inbox", "GET", "/v1/agents/{agent_id}/inbox", AgentsService.inbox, m.InboxResponse,
    path_params=p.AgentPath, query=p.InboxQuery,
)  # fmt: skip

MESSAGES_SEND = Op(
    "messages.send", "POST", "/v1/messages", MessagesService.send, m.Message, 201,
    m.MessageCreate, errors=(errors.NotFound,),
)  # fmt: skip
MESSAGES_ACK = Op(
    "messages.ack", "POST", "/v1/messages/{message_id}/ack", MessagesService.ack, m.Message,
    body=m.MessageAck, path_params=p.MessagePath,
)  # fmt: skip

NOTIFY_SEND = Op(
    "notify.send", "POST", "/v1/notify", NotifyService.send, m.Notification, 201, m.NotifyText,
    errors=(errors.BridgeError,),
)  # fmt: skip
NOTIFY_REPLY = Op(
    "notify.reply", "POST", "/v1/notify/replies", NotifyService.reply, m.Message, 201,
    m.NotifyReply, errors=(errors.NotFound,),
)  # fmt: skip
NOTIFY_LIST = Op(
    "notify.list", "GET", "/v1/notifications", NotifyService.list, m.NotificationsResponse,
    query=p.PageQuery,
)  # fmt: skip
NOTIFY_RETRY = Op(
    "notify.retry", "POST", "/v1/notifications/{notification_id}/retry", NotifyService.retry,
    m.Notification, path_params=p.NotificationPath, errors=(errors.BridgeError,),
)  # fmt: skip

ROOMS_LIST = Op("rooms.list", "GET", "/v1/rooms", RoomsService.list, m.RoomsResponse,
               query=p.PageQuery)  # fmt: skip
ROOMS_JOIN = Op(
    "rooms.join", "POST", "/v1/rooms/{room_id}/join", RoomsService.join, m.RoomMember, 201,
    m.MessageAck, p.RoomPath,
)  # fmt: skip
ROOMS_MESSAGES = Op(
    "rooms.messages", "GET", "/v1/rooms/{room_id}/messages", RoomsService.messages,
    m.RoomMessagesResponse, path_params=p.RoomPath, query=p.RoomMessagesQuery,
)  # fmt: skip

SPACES_LIST = Op("spaces.list", "GET", "/v1/spaces", SpacesService.list, m.SpacesResponse,
                query=p.SpacesQuery)  # fmt: skip
SPACES_CREATE = Op("spaces.create", "POST", "/v1/spaces", SpacesService.create, m.Space, 201,
                  m.SpaceCreate)  # fmt: skip
SPACES_ADD_ROOM = Op(
    "spaces.add_room", "POST", "/v1/spaces/{space_id}/rooms", SpacesService.add_room, m.Room,
    201, m.RoomInSpaceCreate, p.SpacePath,
)  # fmt: skip
SPACES_SYNC = Op("spaces.sync", "POST", "/v1/spaces/sync", SpacesService.sync, m.SpaceSyncReport)
SPACES_ARCHIVE = Op(
    "spaces.archive", "POST", "/v1/spaces/{space_id}/archive", SpacesService.archive, m.Space,
    path_params=p.SpacePath,
)  # fmt: skip

TASKS_CREATE = Op("tasks.create", "POST", "/v1/tasks", TasksService.create, m.Task, 201,
                 m.TaskCreate, errors=(errors.NotFound,))  # fmt: skip
TASKS_LIST = Op("tasks.list", "GET", "/v1/tasks", TasksService.list, m.TasksResponse,
               query=p.TasksQuery)  # fmt: skip
TASKS_GET = Op("tasks.get", "GET", "/v1/tasks/{task_id}", TasksService.get, m.Task,
              path_params=p.TaskPath)  # fmt: skip
TASKS_EVENTS = Op(
    "tasks.events", "GET", "/v1/tasks/{task_id}/events", TasksService.events,
    m.TaskEventsResponse, path_params=p.TaskPath, query=p.PageQuery,
)  # fmt: skip
TASKS_CLAIM = Op("tasks.claim", "POST", "/v1/tasks/{task_id}/claim", TasksService.claim, m.Task,
                body=m.TaskClaim, path_params=p.TaskPath)  # fmt: skip
TASKS_EVENT = Op(
    "tasks.event", "POST", "/v1/tasks/{task_id}/events", TasksService.event, m.TaskEvent, 201,
    m.TaskEventCreate, p.TaskPath,
)  # fmt: skip
TASKS_COMPLETE = Op(
    "tasks.complete", "POST", "/v1/tasks/{task_id}/complete", TasksService.complete, m.Task,
    body=m.TaskFinish, path_params=p.TaskPath,
)  # fmt: skip
TASKS_FAIL = Op("tasks.fail", "POST", "/v1/tasks/{task_id}/fail", TasksService.fail, m.Task,
               body=m.TaskFinish, path_params=p.TaskPath)  # fmt: skip

ACTIONS_RECORD = Op("actions.record", "POST", "/v1/actions", ActionsService.record, m.Action, 201,
                   m.ActionCreate, errors=(errors.NotFound,))  # fmt: skip
ACTIONS_LIST = Op("actions.list", "GET", "/v1/actions", ActionsService.list, m.ActionsResponse,
                 query=p.ActionsQuery)  # fmt: skip

ENROLL_REQUEST = Op(
    "enroll.request", "POST", "/v1/enroll", EnrollService.request, m.EnrollmentCreated, 201,
    m.EnrollRequest, access="public", rate_limit="address", errors=(errors.Conflict,),
)  # fmt: skip
ENROLL_STATUS = Op(
    "enroll.status", "GET", "/v1/enroll/{enroll_id}", EnrollService.status, m.EnrollmentState,
    path_params=p.EnrollPath, query=p.EnrollQuery, access="public", rate_limit="address",
)  # fmt: skip

APPROVALS_LIST = Op("approvals.list", "GET", "/v1/approvals", ApprovalsService.list,
                   m.ApprovalsResponse, query=p.ApprovalsQuery)  # fmt: skip
APPROVALS_REQUEST = Op("approvals.request", "POST", "/v1/approvals", ApprovalsService.request,
                      m.Approval, 201, m.ApprovalRequest)  # fmt: skip
APPROVALS_SHOW = Op("approvals.show", "GET", "/v1/approvals/{approval_id}", ApprovalsService.show,
                   m.Approval, path_params=p.ApprovalPath, query=p.WaitQuery)  # fmt: skip
APPROVALS_APPROVE = Op(
    "approvals.approve", "POST", "/v1/approvals/{approval_id}/approve", ApprovalsService.approve,
    m.Approval, body=m.ApprovalDecision, path_params=p.ApprovalPath,
)  # fmt: skip
APPROVALS_REJECT = Op(
    "approvals.reject", "POST", "/v1/approvals/{approval_id}/reject", ApprovalsService.reject,
    m.Approval, body=m.ApprovalDecision, path_params=p.ApprovalPath,
)  # fmt: skip

POLICIES_CREATE = Op("policies.create", "POST", "/v1/policies", PoliciesService.create, m.Policy,
                     201, m.PolicyCreate)  # fmt: skip
POLICIES_LIST = Op("policies.list", "GET", "/v1/policies", PoliciesService.list,
                   m.PoliciesResponse, query=p.PageQuery)  # fmt: skip
POLICIES_SIMULATE = Op(
    "policies.simulate", "POST", "/v1/policies/simulate", PoliciesService.simulate,
    m.PolicyVerdict, body=m.PolicySimulation,
)  # fmt: skip
POLICIES_SHOW = Op("policies.show", "GET", "/v1/policies/{policy_id}", PoliciesService.show,
                   m.Policy, path_params=p.PolicyPath, query=p.PolicyVersionQuery)  # fmt: skip
POLICIES_REPLACE = Op("policies.replace", "POST", "/v1/policies/{policy_id}",
                      PoliciesService.replace, m.Policy, body=m.PolicyCreate,
                      path_params=p.PolicyPath)  # fmt: skip
POLICIES_DISABLE = Op("policies.disable", "POST", "/v1/policies/{policy_id}/disable",
                      PoliciesService.disable, m.Policy, path_params=p.PolicyPath)  # fmt: skip
POLICIES_ENABLE = Op("policies.enable", "POST", "/v1/policies/{policy_id}/enable",
                     PoliciesService.enable, m.Policy, path_params=p.PolicyPath)  # fmt: skip

INTERVENTIONS_REQUEST_APPROVAL = Op(
    "interventions.request_approval", "POST",
    "/v1/interventions/{intervention_id}/request-approval", InterventionsService.request_approval,
    m.InterventionApprovalResult, 201, m.InterventionApprovalRequest, p.InterventionPath,
)  # fmt: skip
INTERVENTIONS_APPROVAL = Op(
    "interventions.approval", "GET", "/v1/interventions/{intervention_id}/approval",
    InterventionsService.approval, m.Approval, path_params=p.InterventionPath,
)  # fmt: skip
INTERVENTIONS_DIAGNOSTIC = Op(
    "interventions.diagnostic", "POST", "/v1/interventions/{intervention_id}/diagnostic",
    InterventionsService.diagnostic, m.Diagnostic, 201, m.DiagnosticUpload, p.InterventionPath,
)  # fmt: skip
INTERVENTIONS_SHOW_DIAGNOSTIC = Op(
    "interventions.show_diagnostic", "GET", "/v1/interventions/{intervention_id}/diagnostic",
    InterventionsService.show_diagnostic, m.Diagnostic, path_params=p.InterventionPath,
)  # fmt: skip
INTERVENTIONS_LIST = Op(
    "interventions.list", "GET", "/v1/interventions", InterventionsService.list,
    m.InterventionsResponse, query=p.InterventionsQuery,
)  # fmt: skip
INTERVENTIONS_ACTION = Op(
    "interventions.action", "POST", "/v1/interventions/{intervention_id}/action",
    InterventionsService.action, m.InterventionAction, 201, m.InterventionActionCreate,
    p.InterventionPath,
)  # fmt: skip

INTERVENTIONS_ADD_PARTICIPANT = Op(
    "interventions.add_participant", "POST", "/v1/interventions/{intervention_id}/participants",
    InterventionsService.add_participant, m.Intervention, 200, m.InterventionParticipant,
    p.InterventionPath, errors=(errors.Conflict,),
)  # fmt: skip

EVENTS_LIST = Op("events.list", "GET", "/v1/events", EventsService.list, m.EventsResponse,
                query=p.EventsQuery)  # fmt: skip
EVENTS_TICKET = Op("events.ticket", "POST", "/v1/events/ticket", EventsService.ticket,
                  m.StreamTicket)  # fmt: skip
EVENTS_STREAM = Op("events.stream", "GET", "/v1/events/stream", EventsService.stream, m.Event,
                  query=p.EventStreamQuery, stream=True)  # fmt: skip

OPERATIONS: tuple[Operation[Any], ...] = tuple(
    value for value in list(globals().values()) if isinstance(value, Operation)
)
