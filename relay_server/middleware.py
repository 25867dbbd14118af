"""Request ids, and the one place where errors become HTTP answers."""

from __future__ import annotations

import itertools
import logging
import re
import uuid
from collections.abc import Awaitable, Callable

from aiohttp import web

from relay_core import errors
from relay_server.clients import client_address
from relay_server.http_errors import status_of
from relay_server.keys import CLIENT_ADDRESS, REFUSALS, REQUEST_ID, SETTINGS
from relay_server.logs import log_outage
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

_INCOMING_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")

# Unique without asking the OS for randomness on every request: random per process, then counted.
_PROCESS_ID = uuid.uuid4().hex[:12]
_REQUEST_NUMBERS = itertools.count(1)


def new_request_id() -> str:
    """An id for a request that brought none: unique across processes and restarts."""
    return f"{_PROCESS_ID}{next(_REQUEST_NUMBERS):012x}"


def error_response(status: int, code: str, detail: str) -> web.Response:
    """The SPEC's error body: ``{"detail": ..., "code": ...}``."""
    return web.json_response({"detail": detail, "code": code}, status=status)


@web.middleware
async def request_id_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Adopt a sane incoming ``X-Request-ID`` or make one; note the client's address."""
    incoming = request.headers.get("X-Request-ID", "")
    request[REQUEST_ID] = incoming if _INCOMING_ID.match(incoming) else new_request_id()
    request[CLIENT_ADDRESS] = client_address(request, request.app[SETTINGS].http.trusted_proxies)
    return await handler(request)


async def echo_request_id(request: web.Request, response: web.StreamResponse) -> None:
    """Every answer carries its request id, streams included (sent before their handler ends)."""
    response.headers["X-Request-ID"] = request.get(REQUEST_ID) or new_request_id()


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Map every failure to its status and body; a bug is logged, never shown."""
    try:
        return await handler(request)
    except RequestInvalid as exc:
        return web.json_response({"detail": exc.errors}, status=422)
    except errors.InvalidInput as exc:  # the domain's verdict on a query value
        error = {"type": "value_error", "loc": ["query", exc.field], "msg": exc.detail}
        return web.json_response({"detail": [error]}, status=422)
    except errors.RelayError as exc:
        if isinstance(exc, errors.AuthenticationError | errors.PermissionDenied):
            exc = await request.app[REFUSALS].refused(request, exc, status_of(type(exc))) or exc
        response = error_response(status_of(type(exc)), exc.code, exc.detail)
        if isinstance(exc, errors.AuthenticationError):
            response.headers["WWW-Authenticate"] = "Bearer"
        if exc.retry_after is not None:
            response.headers["Retry-After"] = str(max(1, round(exc.retry_after)))
        if isinstance(exc, errors.StorageUnavailable):
            log_outage(exc.detail)
        return response
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        code = HTTP_CODES.get(exc.status, "http_error")
        response = error_response(exc.status, code, exc.reason)
        if "Allow" in exc.headers:
            response.headers["Allow"] = exc.headers["Allow"]
        if exc.status == 408:  # the client stalled mid-request: do not wait on it again
            response.force_close()
        return response
    except Exception:
        request_id = request.get(REQUEST_ID, "-")
        log.exception(
            "internal error in %s %s (request %s)", request.method, request.path, request_id
        )
        return error_response(
            500, "internal", f"internal error; quote request id {request_id} when reporting it"
        )
