"""Every ``web.AppKey`` of the application, in one place."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web

from relay_core.auth import Caller
from relay_core.services import Services
from relay_server.ratelimit import TokenBucket
from relay_server.settings import Settings

if TYPE_CHECKING:  # each of these imports this module (sse.py through connections.py)
    from relay_server.addresses import AddressSlots
    from relay_server.mcp.route import LazyDoor
    from relay_server.refusals import Refusals
    from relay_server.sse import KeepAlives
    from relay_server.tracing import Tracing

SETTINGS = web.AppKey("settings", Settings)
SERVICES = web.AppKey("services", Services)
# Each operation's id, with the service method that serves it (relay_server.bindings).
SERVES: web.AppKey[dict[str, Callable[..., Any]]] = web.AppKey("serves")
REQUEST_ID = web.RequestKey("request_id", str)
CALLER = web.RequestKey("caller", Caller)
CLIENT_ADDRESS = web.RequestKey("client_address", str)
OPERATION = web.RequestKey("operation", str)  # the route's name, for the access line
STARTED = web.RequestKey("started", float)  # time.perf_counter() as the request was met
UNREADABLE = web.RequestKey("unreadable", str)  # why aiohttp could not read the request
# Requests in flight per client address, for those a trusted proxy forwards.
FORWARDED_SLOTS: web.AppKey[AddressSlots] = web.AppKey("forwarded_slots")
# The streams and long-polls each agent holds open (the operator's are not counted).
CALLER_WAITS: web.AppKey[AddressSlots] = web.AppKey("caller_waits")
CALLER_LIMIT = web.AppKey("caller_limit", TokenBucket)
ENROLL_LIMIT = web.AppKey("enroll_limit", TokenBucket)
REFUSALS: web.AppKey[Refusals] = web.AppKey("refusals")
KEEPALIVES: web.AppKey[KeepAlives] = web.AppKey("keepalives")  # the streams' one timer
MCP_DOOR: web.AppKey[LazyDoor] = web.AppKey("mcp_door")  # only with the mcp extra
# The request spans' tracer: None unless the OTEL_* variables ask for traces.
TRACING: web.AppKey[Tracing | None] = web.AppKey("tracing")
