"""The A2A doors: Relay's card at ``/.well-known/agent-card.json``, each reachable agent's card
at ``/a2a/agents/{agent_id}/.well-known/agent-card.json``, and its JSON-RPC endpoint at
``/a2a/agents/{agent_id}``. Callers authenticate as the API's do (a Relay agent's token, or
the operator's; 401 without one). The protocol's types load with the first A2A request.
"""

from __future__ import annotations

import json
import re
from typing import Any

from aiohttp import web

from relay_api.errors import NotFound
from relay_api.models import ID_PATTERN
from relay_server.app_keys import SERVICES, SETTINGS
from relay_server.authentication import authenticate
from relay_server.validation import read_body

_AGENT_ID = re.compile(ID_PATTERN)


def origin(request: web.Request) -> str:
    """Where Relay is reached: its configured public URL, else as this request reached it."""
    public = request.app[SETTINGS].public_url
    return public.rstrip("/") if public else f"{request.scheme}://{request.host}"


def _agent_id(request: web.Request) -> str:
    agent_id = request.match_info["agent_id"]
    if not _AGENT_ID.match(agent_id):
        raise NotFound(f"agent '{agent_id}' is not reachable over A2A")
    return agent_id


async def relay_card(request: web.Request) -> web.Response:
    """Relay's own card: where each reachable agent's card is."""
    from relay_server.a2a import protocol

    agents = await request.app[SERVICES].a2a.directory()
    return web.json_response(protocol.as_json(protocol.relay_card(agents, origin(request))))


async def agent_card(request: web.Request) -> web.Response:
    """A reachable agent's card; 404 for any other."""
    from relay_server.a2a import protocol

    agent = await request.app[SERVICES].a2a.reachable(_agent_id(request))
    return web.json_response(protocol.as_json(protocol.agent_card(agent, origin(request))))


async def no_router(request: web.Request) -> web.StreamResponse:
    """Relay's card's own endpoint: Relay answers for no agent itself."""
    from relay_server.a2a import protocol

    await authenticate(request, request.app[SERVICES])
    error = protocol.unsupported("send to one of the agents Relay's card lists, at its card")
    return web.json_response(protocol.error_body(error, await _request_id(request)))


async def _request_id(request: web.Request) -> Any:
    try:
        found = json.loads(await read_body(request))
    except ValueError:
        return None
    return found.get("id") if isinstance(found, dict) else None


async def rpc(request: web.Request) -> web.StreamResponse:
    """One JSON-RPC request to a reachable agent."""
    from relay_server.a2a import protocol
    from relay_server.a2a.errors import A2AError
    from relay_server.a2a.methods import Call

    services = request.app[SERVICES]
    caller = await authenticate(request, services)
    agent_id = _agent_id(request)
    await services.a2a.reachable(agent_id)
    request_id: Any = None
    try:
        raw = await read_body(request)
        try:
            envelope = json.loads(raw)
        except ValueError as exc:
            raise protocol.parse_error(str(exc)) from None
        if not isinstance(envelope, dict):
            raise protocol.invalid_request("a request is a JSON object")
        request_id = envelope.get("id")
        method = envelope.get("method")
        if envelope.get("jsonrpc") != protocol.JSONRPC_VERSION or not isinstance(method, str):
            raise protocol.invalid_request('"jsonrpc": "2.0" and a "method" are required')
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            raise protocol.invalid_request('"id" must be a string or a number')
        _require_version(request)
        call = Call(request, services, caller, agent_id, request_id)
        return await call.run(method, envelope.get("params", {}))
    except A2AError as error:
        return web.json_response(protocol.error_body(error, request_id))


def _require_version(request: web.Request) -> None:
    from relay_server.a2a import protocol

    asked = request.headers.get("A2A-Version") or request.query.get("A2A-Version") or ""
    major_minor = ".".join(asked.strip().split(".")[:2])
    if major_minor != protocol.VERSION:
        raise protocol.version_not_supported(asked.strip())


def add_a2a(app: web.Application) -> None:
    """Route Relay's card, each agent's card and each agent's JSON-RPC endpoint."""
    app.router.add_get("/.well-known/agent-card.json", relay_card, name="a2a-relay-card")
    app.router.add_post("/a2a/agents", no_router, name="a2a-relay")
    app.router.add_get(
        "/a2a/agents/{agent_id}/.well-known/agent-card.json", agent_card, name="a2a-agent-card"
    )
    app.router.add_post("/a2a/agents/{agent_id}", rpc, name="a2a-agent")
