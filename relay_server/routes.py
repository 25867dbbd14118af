"""The one route table. It drives the router and the OpenAPI document alike.

A row's ``operation`` (``approvals.approve``) is the attribute path of the service method that
serves it. The handler every row gets is the same few steps: authenticate, parse the path, query
and body into their models, call the service with them as keyword arguments, dump the result.
"""

from __future__ import annotations

import functools
import hashlib
import operator
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from aiohttp import web
from pydantic import BaseModel

from relay_core import idempotency
from relay_core import models as m
from relay_server import params as p
from relay_server.clients import remote
from relay_server.keys import CALLER, CALLER_LIMIT, ENROLL_LIMIT, SERVICES
from relay_server.sse import parse_last_event_id, stream_events
from relay_server.validation import authenticate, idempotency_key, parse_body, parse_params

Access = Literal["public", "token"]


@dataclass(frozen=True)
class Route:
    """One operation: how it is reached, what it takes, what it answers."""

    method: str
    path: str
    operation: str
    status: int
    response: type[BaseModel]
    body: type[BaseModel] | None = None
    path_params: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    access: Access = "token"
    stream: bool = False  # Server-Sent Events of ``response`` instead of one JSON body
    # Statuses this operation answers beyond those its shape implies (see ``statuses``).
    errors: tuple[int, ...] = ()

    @property
    def idempotent(self) -> bool:
        """Creating operations honour ``Idempotency-Key``."""
        return self.method == "POST" and self.status == 201

    @property
    def rate_limited(self) -> bool:
        """Whether a limit can answer 429: per caller, or per address on enrollment."""
        return self.access == "token" or self.tag == "enroll"

    @property
    def statuses(self) -> tuple[int, ...]:
        """Every error status the operation can answer, in order."""
        found = set(self.errors) | {503}  # the store, or the connection ceiling
        if self.access == "token":
            found |= {401, 403}
        if self.rate_limited:
            found.add(429)
        if self.path_params is not None:
            found.add(404)
        if self.method == "POST" and self.access == "token":
            found.add(409)
        if self.body is not None:
            found |= {408, 413, 422}
        if self.path_params is not None or self.query is not None or self.access == "token":
            found.add(422)  # a malformed parameter or header
        return tuple(sorted(found))

    @property
    def tag(self) -> str:
        """The resource the operation belongs to."""
        return self.operation.split(".")[0]


R = Route
ROUTES: tuple[Route, ...] = (
    R("GET", "/health", "health", 200, m.Health, access="public"),
    R("GET", "/v1/status", "status", 200, m.Status),
    R("POST", "/v1/agents/register", "agents.register", 201, m.AgentRegistered, m.AgentRegister),
    R(
        "POST",
        "/v1/agents/{agent_id}/heartbeat",
        "agents.heartbeat",
        200,
        m.AgentHeartbeatResult,
        m.AgentHeartbeat,
        p.AgentPath,
    ),
    R("GET", "/v1/agents", "agents.list", 200, m.AgentsResponse, query=p.PageQuery),
    R(
        "GET",
        "/v1/agents/{agent_id}/inbox",
        "agents.inbox",
        200,
        m.InboxResponse,
        path_params=p.AgentPath,
        query=p.InboxQuery,
    ),
    R("POST", "/v1/messages", "messages.send", 201, m.Message, m.MessageCreate, errors=(404,)),
    R(
        "POST",
        "/v1/messages/{message_id}/ack",
        "messages.ack",
        200,
        m.Message,
        m.MessageAck,
        p.MessagePath,
    ),
    R("POST", "/v1/notify", "notify.send", 201, m.Notification, m.NotifyText, errors=(502,)),
    R("POST", "/v1/notify/replies", "notify.reply", 201, m.Message, m.NotifyReply, errors=(404,)),
    R(
        "GET",
        "/v1/notifications",
        "notify.list",
        200,
        m.NotificationsResponse,
        query=p.PageQuery,
    ),
    R(
        "POST",
        "/v1/notifications/{notification_id}/retry",
        "notify.retry",
        200,
        m.Notification,
        path_params=p.NotificationPath,
        errors=(502,),
    ),
    R("GET", "/v1/rooms", "rooms.list", 200, m.RoomsResponse, query=p.PageQuery),
    R(
        "POST",
        "/v1/rooms/{room_id}/join",
        "rooms.join",
        201,
        m.RoomMember,
        m.MessageAck,
        p.RoomPath,
    ),
    R(
        "GET",
        "/v1/rooms/{room_id}/messages",
        "rooms.messages",
        200,
        m.RoomMessagesResponse,
        path_params=p.RoomPath,
        query=p.RoomMessagesQuery,
    ),
    R("GET", "/v1/spaces", "spaces.list", 200, m.SpacesResponse, query=p.SpacesQuery),
    R("POST", "/v1/spaces", "spaces.create", 201, m.Space, m.SpaceCreate),
    R(
        "POST",
        "/v1/spaces/{space_id}/rooms",
        "spaces.add_room",
        201,
        m.Room,
        m.RoomInSpaceCreate,
        p.SpacePath,
    ),
    R("POST", "/v1/spaces/sync", "spaces.sync", 200, m.SpaceSyncReport),
    R(
        "POST",
        "/v1/spaces/{space_id}/archive",
        "spaces.archive",
        200,
        m.Space,
        path_params=p.SpacePath,
    ),
    R("POST", "/v1/tasks", "tasks.create", 201, m.Task, m.TaskCreate, errors=(404,)),
    R("GET", "/v1/tasks", "tasks.list", 200, m.TasksResponse, query=p.TasksQuery),
    R("GET", "/v1/tasks/{task_id}", "tasks.get", 200, m.Task, path_params=p.TaskPath),
    R(
        "GET",
        "/v1/tasks/{task_id}/events",
        "tasks.events",
        200,
        m.TaskEventsResponse,
        path_params=p.TaskPath,
        query=p.PageQuery,
    ),
    R("POST", "/v1/tasks/{task_id}/claim", "tasks.claim", 200, m.Task, m.TaskClaim, p.TaskPath),
    R(
        "POST",
        "/v1/tasks/{task_id}/events",
        "tasks.event",
        201,
        m.TaskEvent,
        m.TaskEventCreate,
        p.TaskPath,
    ),
    R(
        "POST",
        "/v1/tasks/{task_id}/complete",
        "tasks.complete",
        200,
        m.Task,
        m.TaskFinish,
        p.TaskPath,
    ),
    R("POST", "/v1/tasks/{task_id}/fail", "tasks.fail", 200, m.Task, m.TaskFinish, p.TaskPath),
    R("POST", "/v1/actions", "actions.record", 201, m.Action, m.ActionCreate, errors=(404,)),
    R("GET", "/v1/actions", "actions.list", 200, m.ActionsResponse, query=p.ActionsQuery),
    R(
        "POST",
        "/v1/enroll",
        "enroll.request",
        201,
        m.EnrollmentCreated,
        m.EnrollRequest,
        access="public",
        errors=(409,),
    ),
    R(
        "GET",
        "/v1/enroll/{enroll_id}",
        "enroll.status",
        200,
        m.EnrollmentState,
        path_params=p.EnrollPath,
        query=p.EnrollQuery,
        access="public",
    ),
    R("GET", "/v1/approvals", "approvals.list", 200, m.ApprovalsResponse, query=p.ApprovalsQuery),
    R(
        "GET",
        "/v1/approvals/{approval_id}",
        "approvals.show",
        200,
        m.Approval,
        path_params=p.ApprovalPath,
    ),
    R(
        "POST",
        "/v1/approvals/{approval_id}/approve",
        "approvals.approve",
        200,
        m.Approval,
        m.ApprovalDecision,
        p.ApprovalPath,
    ),
    R(
        "POST",
        "/v1/approvals/{approval_id}/reject",
        "approvals.reject",
        200,
        m.Approval,
        m.ApprovalDecision,
        p.ApprovalPath,
    ),
    R(
        "POST",
        "/v1/interventions/{intervention_id}/request-approval",
        "interventions.request_approval",
        201,
        m.InterventionApprovalResult,
        m.InterventionApprovalRequest,
        p.InterventionPath,
    ),
    R(
        "GET",
        "/v1/interventions/{intervention_id}/approval",
        "interventions.approval",
        200,
        m.Approval,
        path_params=p.InterventionPath,
    ),
    R(
        "POST",
        "/v1/interventions/{intervention_id}/diagnostic",
        "interventions.diagnostic",
        201,
        m.Diagnostic,
        m.DiagnosticUpload,
        p.InterventionPath,
    ),
    R(
        "GET",
        "/v1/interventions/{intervention_id}/diagnostic",
        "interventions.show_diagnostic",
        200,
        m.Diagnostic,
        path_params=p.InterventionPath,
    ),
    R(
        "GET",
        "/v1/interventions",
        "interventions.list",
        200,
        m.InterventionsResponse,
        query=p.InterventionsQuery,
    ),
    R("GET", "/v1/events", "events.list", 200, m.EventsResponse, query=p.EventsQuery),
    R(
        "GET",
        "/v1/events/stream",
        "events.stream",
        200,
        m.Event,
        query=p.EventStreamQuery,
        stream=True,
    ),
    R(
        "POST",
        "/v1/interventions/{intervention_id}/action",
        "interventions.action",
        201,
        m.InterventionAction,
        m.InterventionActionCreate,
        p.InterventionPath,
    ),
)


def fingerprint(request: web.Request, kwargs: dict[str, Any]) -> str:
    """What makes two requests the same request: method, path and the parsed body."""
    body = kwargs.get("body")
    canonical = body.model_dump_json() if isinstance(body, BaseModel) else ""
    return hashlib.sha256(f"{request.method} {request.path} {canonical}".encode()).hexdigest()


def _fields(model: BaseModel) -> dict[str, Any]:
    return {name: getattr(model, name) for name in type(model).model_fields}


def make_handler(route: Route) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """The aiohttp handler of one route."""
    service_method = operator.attrgetter(route.operation)

    async def handler(request: web.Request) -> web.StreamResponse:
        services = request.app[SERVICES]
        args: list[Any] = []
        caller = None
        if route.access == "token":
            caller = await authenticate(request, services)
            request[CALLER] = caller
            request.app[CALLER_LIMIT].take(f"{caller.kind}:{caller.name}", caller.name)
            args.append(caller)
        elif route.tag == "enroll":
            address = remote(request)
            request.app[ENROLL_LIMIT].take(f"ip:{address}", address)
        kwargs: dict[str, Any] = {}
        if route.path_params is not None:
            kwargs |= _fields(parse_params(route.path_params, request.match_info, "path"))
        if route.query is not None:
            kwargs |= _fields(parse_params(route.query, request.query, "query"))
        if route.stream and "Last-Event-ID" in request.headers:
            kwargs["after"] = parse_last_event_id(request.headers["Last-Event-ID"])
        if route.body is not None:
            kwargs["body"] = await parse_body(request, route.body)
        if route.stream:
            assert caller is not None  # every stream needs a token
            events = service_method(services)(*args, **kwargs)
            watch = functools.partial(services.access.until_revoked, caller)
            return await stream_events(request, events, watch)
        key = idempotency_key(request) if route.idempotent else None
        token = None
        if key is not None:
            token = idempotency.current.set(
                idempotency.IdempotentRequest(
                    scope=f"{caller.kind}:{caller.name}" if caller else "public",
                    key=key,
                    fingerprint=fingerprint(request, kwargs),
                    status=route.status,
                )
            )
        try:
            call = service_method(services)(*args, **kwargs)
            if caller is not None and kwargs.get("wait"):
                # A long-poll outlives the authentication it began with: a rotation ends it.
                call = services.access.until_revoked(caller, call)
            result: BaseModel = await call
        except idempotency.Replay as replay:
            return web.Response(
                body=replay.body.encode(),
                status=replay.status,
                content_type="application/json",
                headers={"Idempotent-Replayed": "true"},
            )
        finally:
            if token is not None:
                idempotency.current.reset(token)
        return web.Response(
            body=result.model_dump_json().encode(),
            status=route.status,
            content_type="application/json",
        )

    return handler


def add_routes(app: web.Application) -> None:
    """Register every route of the table on the application."""
    for route in ROUTES:
        app.router.add_route(route.method, route.path, make_handler(route), name=route.operation)
