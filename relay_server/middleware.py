"""The one middleware every request passes: its id and client address, the connection
ceiling, its count in the metrics, and the one place where errors become HTTP answers.

One layer rather than one per concern: each layer is a coroutine and a call per request."""

from __future__ import annotations

import itertools
import logging
import re
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import http_exceptions, web

from relay_api import errors
from relay_core import trace_context
from relay_server import metrics
from relay_server.addresses import client_address, remote
from relay_server.app_keys import (
    CALLER,
    CLIENT_ADDRESS,
    FORWARDED_SLOTS,
    OPERATION,
    REFUSALS,
    REQUEST_ID,
    SERVICES,
    SETTINGS,
    STARTED,
    TRACING,
    UNREADABLE,
)
from relay_server.authentication import bears_operator_token
from relay_server.http_errors import invalid, status_of
from relay_server.logs import fault, log_outage, unreadable
from relay_server.validation import RequestInvalid

log = logging.getLogger("relay.server")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# aiohttp's own HTTP errors (unknown path, wrong method) get the same body shape.
HTTP_CODES = {
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    413: "payload_too_large",
}

PAST_CEILING = "the server is at its connection limit; retry shortly"
PAST_ADDRESS_CAP = "this address holds as many connections as one address may; retry shortly"
CLIENT_CLOSED = 499  # nginx's status for a client that left before it was answered

_INCOMING_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")

# Unique without asking the OS for randomness on every request: random per process, then counted.
_PROCESS_ID = uuid.uuid4().hex[:12]
_REQUEST_NUMBERS = itertools.count(1)


def new_request_id() -> str:
    """An id for a request that brought none: unique across processes and restarts."""
    return f"{_PROCESS_ID}{next(_REQUEST_NUMBERS):012x}"


def error_response(
    status: int, code: str, detail: str, more: dict[str, Any] | None = None
) -> web.Response:
    """The SPEC's error body: ``{"detail": ..., "code": ...}``, and ``more`` fields an error
    carries (a contested reservation's ``conflicts``)."""
    return web.json_response({"detail": detail, "code": code, **(more or {})}, status=status)


@web.middleware
async def front_door(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Adopt a sane incoming ``X-Request-ID`` or make one, note the client's address, refuse a
    connection past the ceiling or its address's cap, count the request, and answer every
    failure."""
    incoming = request.headers.get("X-Request-ID", "")
    request[REQUEST_ID] = incoming if _INCOMING_ID.match(incoming) else new_request_id()
    proxies = request.app[SETTINGS].http.trusted_proxies
    address = request[CLIENT_ADDRESS] = client_address(request, proxies)
    operation = request.match_info.route.name
    if operation is not None:
        request[OPERATION] = operation
    count = metrics.Count(request, operation)
    request[STARTED] = count.started
    full: str | None = getattr(request.protocol, "full", None)  # connections.GuardedHandler's
    slot = None
    if full is None and proxies and address != request.remote:
        # Forwarded by a trusted proxy: its connections are not capped, its clients' requests
        # in flight are.
        if request.app[FORWARDED_SLOTS].take(address):
            slot = address
        else:
            full = PAST_ADDRESS_CAP
    if full == PAST_ADDRESS_CAP and bears_operator_token(request, request.app[SERVICES]):
        full = None  # the operator is never locked out by the agents sharing its address
    tracing = request.app[TRACING]
    traced = tracing.start(request, operation) if tracing is not None else None
    # What this request creates is handed on in its span's trace, else in its caller's.
    handed_on = traced.traceparent if traced is not None else request.headers.get("traceparent")
    working = trace_context.begin(handed_on) if handed_on is not None else None
    error: str | None = None
    try:
        if full is not None:
            error = "unavailable"
            response: web.StreamResponse = _refused(full)
        else:
            try:
                response = await handler(request)
            except Exception as exc:
                error = error_type(exc)
                response = await error_answer(request, exc)
        count.status = response.status
        return response
    except web.HTTPException as exc:  # a redirect, which aiohttp answers
        count.status = exc.status
        raise
    finally:
        count.done()
        if slot is not None:
            request.app[FORWARDED_SLOTS].give(slot)
        if working is not None:
            trace_context.end(working)
        if traced is not None:
            caller = request.get(CALLER)
            traced.end(count.status, caller.name if caller is not None else None, error)


def error_type(exc: Exception) -> str:
    """What a failure is, as its answer's code says it (a trace's ``error.type``)."""
    match exc:
        case RequestInvalid() | errors.InvalidInput():
            return "validation_error"
        case errors.RelayError():
            return exc.code
        case web.HTTPException():
            return HTTP_CODES.get(exc.status, str(exc.status))
    return "internal"


async def echo_request_id(request: web.Request, response: web.StreamResponse) -> None:
    """Every answer carries its request id, streams included (sent before their handler ends)."""
    response.headers["X-Request-ID"] = request.get(REQUEST_ID) or new_request_id()


async def error_answer(request: web.Request, exc: Exception) -> web.Response:
    """The answer to a failure: its status and body; a bug is logged, never shown. A redirect
    is raised on, for aiohttp to answer."""
    if isinstance(exc, ConnectionResetError) and request.transport is None:
        return _client_left()
    match exc:
        case RequestInvalid():
            return invalid(exc.errors)
        case errors.InvalidInput():  # the domain's verdict on a value
            error = {"type": "value_error", "loc": [exc.where, exc.field], "msg": exc.detail}
            return invalid([error])
        case errors.RelayError():
            return await _domain_error(request, exc)
        case http_exceptions.HttpProcessingError():  # a malformed body (chunked framing…)
            return unreadable_answer(request, exc, remote(request))
        case web.HTTPException() if exc.status >= 400:
            return _http_error(exc)
        case web.HTTPException():
            raise exc
    request_id = request.get(REQUEST_ID, "-")
    log.error(
        "internal error in %s %s (request %s)",
        request.method,
        request.path,
        request_id,
        exc_info=exc,
    )
    return error_response(
        500, "internal", f"internal error; quote request id {request_id} when reporting it"
    )


async def _domain_error(request: web.Request, exc: errors.RelayError) -> web.Response:
    if isinstance(exc, errors.AuthenticationError | errors.PermissionDenied):
        exc = await request.app[REFUSALS].refused(request, exc, status_of(type(exc))) or exc
    response = error_response(status_of(type(exc)), exc.code, exc.detail, exc.more)
    if isinstance(exc, errors.AuthenticationError):
        # RFC 6750: a token that was sent and refused is "invalid_token"; a request without
        # one gets the bare challenge. MCP hosts read the former as "no OAuth here".
        sent = "Authorization" in request.headers
        response.headers["WWW-Authenticate"] = 'Bearer error="invalid_token"' if sent else "Bearer"
    if exc.retry_after is not None:
        response.headers["Retry-After"] = str(max(1, round(exc.retry_after)))
    if isinstance(exc, errors.StorageUnavailable):
        log_outage(exc.logged)
    return response


def _http_error(exc: web.HTTPException) -> web.Response:
    """aiohttp's own errors (unknown path, wrong method, a body too slow) in the SPEC's shape."""
    response = error_response(exc.status, HTTP_CODES.get(exc.status, "http_error"), exc.reason)
    if "Allow" in exc.headers:
        response.headers["Allow"] = exc.headers["Allow"]
    if exc.status == 408:  # the client stalled mid-request: do not wait on it again
        response.force_close()
    return response


def unreadable_answer(
    request: web.BaseRequest, exc: BaseException | None, address: str
) -> web.Response:
    """The answer to a request aiohttp could not read (its head, or a body's framing): 400 in
    Relay's error body naming the kind of fault, the connection closed, and one log line a
    minute per address; neither holds a byte of what was sent (it may hold a credential), and
    the access logger writes no line for it."""
    reason = fault(exc)
    request[UNREADABLE] = reason
    unreadable(address, reason)
    response = error_response(400, "bad_request", f"the request could not be read: {reason}")
    response.force_close()
    return response


def _client_left() -> web.Response:
    """The client went away before its request was read whole: nobody to answer, so no
    traceback and no 500; the access line and the metrics say 499, as nginx does."""
    return web.Response(status=CLIENT_CLOSED)


def _refused(why: str) -> web.Response:
    """The answer on a connection opened past the ceiling or its address's cap
    (``connections``): 503, and close."""
    response = error_response(503, "unavailable", why)
    response.headers["Retry-After"] = "1"
    response.force_close()
    return response
