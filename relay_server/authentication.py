"""Who is calling: the caller named by ``Authorization: Bearer`` and ``X-Agent-ID``."""

from __future__ import annotations

import re

from aiohttp import web

from relay_api.errors import AuthenticationError
from relay_api.models import ID_PATTERN
from relay_core.auth import Caller
from relay_core.services import Services
from relay_server.app_keys import CALLER, REFUSALS
from relay_server.validation import header_error

_AGENT_HEADER = re.compile(ID_PATTERN)
_BEARER = re.compile(r"^Bearer ([!-~]+)$", re.IGNORECASE)


async def authenticate(request: web.Request, services: Services, *, stream: bool = False) -> Caller:
    """The caller named by ``Authorization: Bearer`` and ``X-Agent-ID``; for the event
    ``stream``, by a ``?ticket=`` where no Authorization is sent, and looked up in a stream's
    turn (``Storage.unit_of_work``'s ``following``). The request keeps it, for the access log's
    line."""
    caller = await _identify(request, services, stream)
    request[CALLER] = caller
    return caller


async def _identify(request: web.Request, services: Services, stream: bool) -> Caller:
    if stream and "Authorization" not in request.headers:
        ticket = request.query.get("ticket")  # parsed only here: most requests have no query
        if ticket is not None:
            return await services.access.redeem(ticket)
    agent_header = request.headers.get("X-Agent-ID")
    if agent_header is not None and not _AGENT_HEADER.match(agent_header):
        raise header_error("x-agent-id", f"X-Agent-ID must match {ID_PATTERN}")
    authorization = request.headers.get("Authorization")
    token = None
    if authorization is not None:
        match = _BEARER.match(authorization.strip())
        if match is not None:
            token = match.group(1)
        elif services.ctx.config.auth_enabled:
            raise AuthenticationError("the Authorization header must be 'Bearer <token>'")
    # An address that spent its budget of refusals gets 429 rather than another lookup.
    return await services.access.authenticate(
        token,
        agent_header,
        before_lookup=lambda: request.app[REFUSALS].check(request),
        following=stream,
    )


def bears_operator_token(request: web.Request, services: Services) -> bool:
    """Whether the request's ``Authorization`` is the operator's bearer token (no lookup)."""
    match = _BEARER.match(request.headers.get("Authorization", "").strip())
    return match is not None and services.access.is_operator_token(match.group(1))
