"""The router, built from the operation table (``relay_api.operations``).

The handler every operation gets is the same few steps: authenticate, take a rate-limit token,
parse the path, query and body into their models, hold one of an agent's waits for a stream or
a long-poll, call the service method with them as keyword arguments (and ``once`` for a create
that carried ``Idempotency-Key``), dump the result.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from pydantic import BaseModel

from relay_api.operations import OPERATIONS, Operation
from relay_core import idempotency
from relay_core.auth import Caller
from relay_core.json_answers import answer_json
from relay_server.addresses import remote
from relay_server.app_keys import (
    CALLER_LIMIT,
    CALLER_WAITS,
    ENROLL_LIMIT,
    KEEPALIVES,
    SERVES,
    SERVICES,
)
from relay_server.authentication import authenticate
from relay_server.connections import while_connected
from relay_server.http_errors import RateLimited
from relay_server.sse import frame, parse_last_event_id, stream_events
from relay_server.validation import idempotency_key, parse_body, parse_params


def fingerprint(request: web.Request, kwargs: dict[str, Any]) -> str:
    """What makes two requests the same request: method, path and the parsed body."""
    body = kwargs.get("body")
    canonical = body.model_dump_json() if isinstance(body, BaseModel) else ""
    return hashlib.sha256(f"{request.method} {request.path} {canonical}".encode()).hexdigest()


def _fields(model: BaseModel) -> dict[str, Any]:
    # A model's field values are its instance dictionary (extras and private attributes are
    # kept apart, and the parameter models allow neither).
    return model.__dict__


def make_handler(op: Operation[Any]) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """The aiohttp handler of one operation."""

    async def handler(request: web.Request) -> web.StreamResponse:
        services = request.app[SERVICES]
        serve = request.app[SERVES][op.id]
        args: list[Any] = []
        caller = None
        if op.access == "token":
            caller = await authenticate(request, services, stream=op.stream)
            if op.operator_only:
                caller.require_operator()
            args.append(caller)
        if op.rate_limit == "caller" and caller is not None:
            request.app[CALLER_LIMIT].take(f"{caller.kind}:{caller.name}", caller.name)
        elif op.rate_limit == "address":
            address = remote(request)
            request.app[ENROLL_LIMIT].take(f"ip:{address}", address)
        kwargs: dict[str, Any] = {}
        if op.path_params is not None:
            kwargs |= _fields(parse_params(op.path_params, request.match_info, "path"))
        if op.query is not None:
            kwargs |= _fields(parse_params(op.query, request.query, "query"))
        if op.stream and "Last-Event-ID" in request.headers:
            kwargs["after"] = parse_last_event_id(request.headers["Last-Event-ID"])
        if op.body is not None:
            kwargs["body"] = await parse_body(request, op.body)
        held = _hold_a_wait(request, caller) if op.stream or kwargs.get("wait") else None
        try:
            return await answer(request, caller, kwargs, serve, args)
        finally:
            if held is not None:
                request.app[CALLER_WAITS].give(held)

    async def answer(
        request: web.Request,
        caller: Caller | None,
        kwargs: dict[str, Any],
        serve: Callable[..., Any],
        args: list[Any],
    ) -> web.StreamResponse:
        services = request.app[SERVICES]
        if op.stream:
            assert caller is not None  # every stream needs a token
            events = await serve(*args, **kwargs)  # its start is fixed before the answer
            watch = functools.partial(services.access.until_revoked, caller)
            return await stream_events(request, events, watch, request.app[KEEPALIVES], frame)
        key = idempotency_key(request) if op.idempotent else None
        once = None
        if key is not None:
            scope = f"{caller.kind}:{caller.name}" if caller else "public"
            once = idempotency.RetryKey(scope, key, fingerprint(request, kwargs))
        try:
            call = serve(*args, **kwargs)
            if kwargs.get("wait"):
                if caller is not None:
                    # A long-poll outlives the authentication it began with: a rotation ends it.
                    call = services.access.until_revoked(caller, call)
                call = while_connected(request, call)  # and its client leaving ends it
            result: BaseModel
            if once is None:
                result = await call
            else:
                with idempotency.answering(once):
                    result = await call
        except idempotency.Replay as replay:
            return web.Response(
                body=replay.body.encode(),
                status=op.status,
                content_type="application/json",
                headers={"Idempotent-Replayed": "true"},
            )
        return web.Response(
            body=answer_json(result), status=op.status, content_type="application/json"
        )

    return handler


def _hold_a_wait(request: web.Request, caller: Caller | None) -> str | None:
    """One of an agent's streams and long-polls, held until its request ends (the operator's
    are not counted: agents never lock the operator out); 429 past its cap."""
    if caller is None or caller.is_operator:
        return None
    waits = request.app[CALLER_WAITS]
    if not waits.take(caller.name):
        raise RateLimited(
            f"agent {caller.name} holds {waits.cap} event streams and long-polls open, the most"
            " one agent may (RELAY_MAX_WAITS_PER_CALLER): close one, or wait without holding",
            retry_after=5,
        )
    return caller.name


def add_routes(app: web.Application) -> None:
    """Register every operation of the table on the application."""
    for op in OPERATIONS:
        app.router.add_route(op.method, op.path, make_handler(op), name=op.id)
