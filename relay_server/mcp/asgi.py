"""The MCP door's machinery (loaded by ``mcp.route`` on the first authenticated request, since
the SDK takes seconds to import): the two tool sets as ASGI applications, and the bridge.

The MCP SDK serves the protocol as an ASGI application, bridged into aiohttp by aiohttp-asgi.
Stateless: every request stands alone (no session lives in one process), so any instance behind
a load balancer answers any request. A tool acts through ``relay_client`` with the caller's own
token against this server's own listening address, so it meets the same authorization, rate
limits and idempotency as the API.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable
from contextlib import AsyncExitStack
from contextvars import ContextVar
from typing import Any

from aiohttp import ClientConnectionResetError, web
from aiohttp_asgi.resource import ASGIContext, ScopeDict
from mcp.server.context import CallNext, ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.subscriptions import ResourceUpdated, ServerEvent
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp

from relay_client import AsyncRelayClient
from relay_core.auth import Caller
from relay_core.hub import Hub
from relay_core.services.events import inbox_topic
from relay_mcp.inbox import INBOX
from relay_mcp.server import agent_server, operator_server

# Headers the door sets for the tools; whatever a client sent under these names is dropped.
AGENT_HEADER = "x-relay-mcp-agent"
LOOPBACK_HEADER = "x-relay-mcp-loopback"
DOOR_HEADERS = frozenset({AGENT_HEADER, LOOPBACK_HEADER})  # a client's are always dropped
CLIENTS_KEPT = 256  # callers whose client (and its connection pool) stays open
RETIRE_SECONDS = 120.0
DISCONNECT_POLL_SECONDS = 0.5
WATCH_SECONDS = 60.0  # how often a quiet watcher looks whether the hub closed


# The agent whose listen stream is being opened (set by ``_note_listener`` around the SDK's
# handler, read by ``InboxBus.subscribe`` inside it).
_listening: ContextVar[str | None] = ContextVar("relay_mcp_listening", default=None)


async def _note_listener(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
    """A listen stream belongs to the agent the door authenticated for its request."""
    if ctx.method != "subscriptions/listen":
        return await call_next(ctx)
    headers = getattr(ctx.request, "headers", None) or {}
    token = _listening.set(headers.get(AGENT_HEADER))
    try:
        return await call_next(ctx)
    finally:
        _listening.reset(token)


class CallsInFlight:
    """The door's tool calls in flight, by caller and JSON-RPC id. The door is stateless: a
    2025 client cancels a call with a notification in a request of its own, which the SDK
    cannot match to the call (a 2026-07-28 client closes the call's stream, which ends it);
    this matches it and cancels the call's task, and the waits it holds end with it."""

    def __init__(self) -> None:
        self._tasks: dict[tuple[str, str], asyncio.Task[Any]] = {}

    async def track(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
        """A middleware: note each tool call's task while it runs; cancel the one a
        ``notifications/cancelled`` names."""
        if ctx.method == "tools/call" and ctx.request_id is not None:
            key = (_caller_of(ctx), json.dumps(ctx.request_id))
            task = asyncio.current_task()
            assert task is not None
            self._tasks[key] = task
            try:
                return await call_next(ctx)
            finally:
                if self._tasks.get(key) is task:
                    del self._tasks[key]
        if ctx.method == "notifications/cancelled" and isinstance(ctx.params, dict):
            key = (_caller_of(ctx), json.dumps(ctx.params.get("requestId")))
            if (running := self._tasks.get(key)) is not None:
                running.cancel()
        return await call_next(ctx)


def _caller_of(ctx: ServerRequestContext[Any, Any]) -> str:
    """Who sent a request, as the door authenticated it (a digest: no token kept)."""
    headers = getattr(ctx.request, "headers", None) or {}
    who = f"{headers.get('authorization', '')}\0{headers.get(AGENT_HEADER, '')}"
    return hashlib.sha256(who.encode()).hexdigest()


class InboxBus:
    """The door's subscription bus: one server serves every agent, so ``relay://inbox`` is a
    different resource for each, and its update reaches that agent's streams only. While an
    agent has a stream open, a watcher waits on its inbox's hub topic, which a commit on this
    instance publishes, and so does one on another (PostgreSQL's hints)."""

    def __init__(self, hub: Hub) -> None:
        self._hub = hub
        self._listeners: dict[object, tuple[str | None, Callable[[ServerEvent], None]]] = {}
        self._watchers: dict[str, asyncio.Task[None]] = {}

    async def publish(self, event: ServerEvent) -> None:
        """Events about the server itself (lists changed) reach everyone."""
        for _, listener in list(self._listeners.values()):
            listener(event)

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        agent = _listening.get()
        key = object()
        self._listeners[key] = (agent, listener)
        if agent is not None and agent not in self._watchers:
            self._watchers[agent] = asyncio.create_task(self._watch(agent))

        def unsubscribe() -> None:
            self._listeners.pop(key, None)
            if agent is not None and all(a != agent for a, _ in self._listeners.values()):
                watcher = self._watchers.pop(agent, None)
                if watcher is not None:
                    watcher.cancel()

        return unsubscribe

    async def _watch(self, agent: str) -> None:
        update = ResourceUpdated(uri=INBOX)
        with self._hub.subscribe(inbox_topic(agent)) as subscription:
            while not self._hub.closed:
                if await subscription.wait(WATCH_SECONDS):
                    for owner, listener in list(self._listeners.values()):
                        if owner == agent:
                            listener(update)

    def close(self) -> None:
        for watcher in self._watchers.values():
            watcher.cancel()


class McpDoor:
    """The two tool sets as ASGI applications, and the callers' clients."""

    def __init__(self, hub: Hub, confirm_decisions: bool = True) -> None:
        self._clients: OrderedDict[str, AsyncRelayClient] = OrderedDict()
        self._retiring: dict[asyncio.Task[None], AsyncRelayClient] = {}
        # The bearer token is checked before a request reaches the SDK, and it is not ambient
        # (no cookie): a rebound DNS name gains nothing, so the Host allowlist stays off.
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        self.bus = InboxBus(hub)
        self.calls = CallsInFlight()
        self._servers = (
            agent_server(self.client, self.bus, middleware=[self.calls.track, _note_listener]),
            operator_server(
                self.client, confirm_decisions=confirm_decisions, middleware=[self.calls.track]
            ),
        )
        self.agent_app, self.operator_app = (
            server.streamable_http_app(
                streamable_http_path="/mcp",
                stateless_http=True,
                json_response=False,
                transport_security=security,
            )
            for server in self._servers
        )

    def client(self, ctx: Context) -> AsyncRelayClient:
        """The caller's client, from what the door put in the request's headers."""
        headers = ctx.headers or {}
        token = headers.get("authorization", "").partition(" ")[2]
        agent = headers.get(AGENT_HEADER) or None
        url = headers[LOOPBACK_HEADER]
        key = hashlib.sha256(f"{token}\0{agent}\0{url}".encode()).hexdigest()
        found = self._clients.get(key)
        if found is None:
            found = self._clients[key] = AsyncRelayClient(url, token=token, agent_id=agent)
            while len(self._clients) > CLIENTS_KEPT:
                _, evicted = self._clients.popitem(last=False)
                self._retire(evicted)
        self._clients.move_to_end(key)
        return found

    def _retire(self, relay: AsyncRelayClient) -> None:
        """Close an evicted client once any call still using it is over (the longest wait a
        tool makes is under ``RETIRE_SECONDS``)."""

        async def close_later() -> None:
            await asyncio.sleep(RETIRE_SECONDS)
            await relay.close()

        task = asyncio.get_running_loop().create_task(close_later())
        self._retiring[task] = relay
        task.add_done_callback(lambda done: self._retiring.pop(done, None))

    async def run(self, started: asyncio.Event, stop: asyncio.Event) -> None:
        """Run the SDK's session managers from ``started`` until ``stop``, then close every
        caller's client."""
        try:
            async with AsyncExitStack() as stack:
                for server in self._servers:
                    await stack.enter_async_context(server.session_manager.run())
                started.set()
                await stop.wait()
        finally:
            self.bus.close()
            for task in self._retiring:
                task.cancel()
            for relay in [*self._retiring.values(), *self._clients.values()]:
                await relay.close()
            self._clients.clear()


class _Bridge(ASGIContext):
    """One request into the SDK, carrying who the door authenticated and where to reach Relay."""

    def __init__(self, app: ASGIApp, request: web.Request, extra: dict[str, str]) -> None:
        super().__init__(app, request, "")
        self._extra = extra
        self._body_read = False

    async def on_receive(self) -> dict[str, Any]:
        """The body, then, as ASGI wants, ``http.disconnect`` once the client has gone (the
        adapter would answer an empty body again at once, and a streaming answer that waits for
        the disconnect would spin on it)."""
        if not self._body_read:
            message = await super().on_receive()
            self._body_read = not message.get("more_body")
            return message
        transport = self.request.transport
        while transport is not None and not transport.is_closing():
            await asyncio.sleep(DISCONNECT_POLL_SECONDS)
        return {"type": "http.disconnect"}

    async def on_send(self, payload: dict[str, Any]) -> None:
        """Write what the SDK sends; once the client has left (a cancelled call), drop it: it
        has no reader, and the SDK would log the failed write as an error."""
        try:
            await super().on_send(payload)
        except ClientConnectionResetError:
            if not _gone(self.request):
                raise

    @property
    def scope(self) -> ScopeDict:
        scope = super().scope
        kept = [(k, v) for k, v in scope["headers"] if k.decode().lower() not in DOOR_HEADERS]
        added = [(k.encode(), v.encode()) for k, v in self._extra.items()]
        scope["headers"] = kept + added
        return scope


def _loopback(request: web.Request) -> str:
    """This server's own address, as the connection reached it."""
    host, port = request.transport.get_extra_info("sockname")[:2] if request.transport else ("", 0)
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


async def serve(door: McpDoor, caller: Caller, request: web.Request) -> web.StreamResponse:
    """Hand an authenticated request to the caller's tool set."""
    app = door.operator_app if caller.is_operator else door.agent_app
    extra = {LOOPBACK_HEADER: _loopback(request)}
    if caller.agent_id is not None:
        extra[AGENT_HEADER] = caller.agent_id
    bridge = _Bridge(app, request, extra)
    try:
        response: Any = await bridge.get_response()
    except RuntimeError:  # the adapter's word for "the application sent no answer"
        if bridge.response is None and _gone(request):
            raise ConnectionResetError("the client left before the MCP answer began") from None
        raise
    return response  # type: ignore[no-any-return]


def _gone(request: web.Request) -> bool:
    """Whether the client has closed its connection (a cancelled call, an aborted request)."""
    return request.transport is None or request.transport.is_closing()
