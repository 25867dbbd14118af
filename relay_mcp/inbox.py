"""``relay://inbox``: the agent's unacknowledged messages, as a resource a client can subscribe
to. An update is published when a message for the agent commits: the watcher follows the
agent's event feed (a long-poll, woken by the commit) and tells the subscribers to re-read.

Clients of the 2026 protocol listen (``subscriptions/listen``, served by the SDK from the bus).
Clients of the 2025 protocol subscribe (``resources/subscribe``) and are told on their session,
which only a connection that lasts has: stdio, not stateless HTTP."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.session import ServerSession
from mcp.server.subscriptions import ResourceUpdated, SubscriptionBus
from mcp.types import EmptyResult, Resource, SubscribeRequestParams, UnsubscribeRequestParams

from relay_client import AsyncRelayClient, errors
from relay_mcp.results import Clients, RelayMCPServer

INBOX = "relay://inbox"
FEED_WAIT = 50.0
RETRY_SECONDS = 2.0

log = logging.getLogger("relay.mcp")


DESCRIPTION = (
    "Your unacknowledged messages, oldest first (at most 100; relay://inbox?limit=N for up to "
    "1000). Reading it delivers nothing: read_inbox does, and ack_messages acknowledges."
)


def add_inbox(server: RelayMCPServer, clients: Clients) -> None:
    """Register ``relay://inbox`` on ``server``, read with the caller's client, and list it. (It
    is served by a template, with an optional ``limit``: only a template resource is handed the
    caller's context; the plain URI is listed beside it.)"""

    @server.resource(
        INBOX + "{?limit}", name="inbox", description=DESCRIPTION, mime_type="application/json"
    )
    async def inbox(ctx: Context, limit: str = "100") -> str:
        count = int(limit) if limit.isdigit() and 0 < int(limit) <= 1000 else 100
        box = await clients(ctx).agents.inbox(limit=count, peek=True)
        return box.model_dump_json()

    server.listed.append(
        Resource(uri=INBOX, name="inbox", description=DESCRIPTION, mime_type="application/json")
    )


class SessionSubscribers:
    """A 2025-protocol client's subscription to ``relay://inbox`` over stdio, which serves one
    client: the session it subscribed on, or none."""

    def __init__(self) -> None:
        self._session: ServerSession | None = None

    def install(self, server: MCPServer) -> None:
        """Serve ``resources/subscribe`` and ``resources/unsubscribe`` on ``server`` (which then
        advertises ``resources.subscribe`` to 2025-protocol clients)."""
        # MCPServer has no public seat for a spec method the 2026 revision removed; the SDK's
        # own advice for serving one to older clients is the lowlevel server's handler table.
        lowlevel = server._lowlevel_server
        lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, self._subscribe)
        lowlevel.add_request_handler(
            "resources/unsubscribe", UnsubscribeRequestParams, self._unsubscribe
        )

    async def _subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: SubscribeRequestParams
    ) -> EmptyResult:
        if _is_inbox(params.uri):
            self._session = ctx.session
        return EmptyResult()

    async def _unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: UnsubscribeRequestParams
    ) -> EmptyResult:
        if _is_inbox(params.uri):
            self._session = None
        return EmptyResult()

    async def notify(self) -> None:
        if self._session is None:
            return
        try:
            await self._session.send_resource_updated(INBOX)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._session = None  # its client went away


def _is_inbox(uri: str) -> bool:
    return uri == INBOX or uri.startswith(INBOX + "?")


async def watch_inbox(
    relay: AsyncRelayClient, bus: SubscriptionBus, subscribers: SessionSubscribers
) -> None:
    """Publish an update of ``relay://inbox`` whenever a message for the agent commits, to
    listeners and subscribers; runs until cancelled, riding out the server's absences, or
    until the server refuses the token."""
    cursor: int | None = None
    while True:
        try:
            page = await relay.events.list(after=cursor, wait=FEED_WAIT)
        except errors.AuthenticationError as exc:  # rotated or revoked: no retry will pass
            log.error("inbox watch stopped: %s", exc)
            return
        except errors.RelayError as exc:
            log.warning("inbox watch: %s; trying again", exc)
            await asyncio.sleep(RETRY_SECONDS)
            continue
        cursor = page.cursor
        if any(event.kind == "message.created" for event in page.events):
            await bus.publish(ResourceUpdated(uri=INBOX))
            await subscribers.notify()
