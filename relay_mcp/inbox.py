"""``relay://inbox``: the agent's unacknowledged messages, as a resource a client can subscribe
to. An update is published when a message for the agent commits: the watcher follows the
agent's event feed (a long-poll, woken by the commit) and tells the subscribers to re-read."""

from __future__ import annotations

import asyncio
import logging

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.subscriptions import ResourceUpdated, SubscriptionBus

from relay_client import AsyncRelayClient, errors
from relay_mcp.agent_tools import Clients

INBOX = "relay://inbox"
FEED_WAIT = 50.0
RETRY_SECONDS = 2.0

log = logging.getLogger("relay.mcp")


def add_inbox(server: MCPServer, clients: Clients) -> None:
    """Register ``relay://inbox`` on ``server``, read with the caller's client. (A template, with
    an optional ``limit``: only a template resource is handed the caller's context.)"""

    @server.resource(INBOX + "{?limit}", name="inbox", mime_type="application/json")
    async def inbox(ctx: Context, limit: str = "100") -> str:
        """The agent's unacknowledged messages, oldest first (at most ``limit``, 100)."""
        count = int(limit) if limit.isdigit() and 0 < int(limit) <= 1000 else 100
        return (await clients(ctx).agents.inbox(limit=count)).model_dump_json()


async def watch_inbox(relay: AsyncRelayClient, bus: SubscriptionBus) -> None:
    """Publish an update of ``relay://inbox`` whenever a message for the agent commits; runs
    until cancelled, riding out the server's absences."""
    cursor: int | None = None
    while True:
        try:
            page = await relay.events.list(after=cursor, wait=FEED_WAIT)
        except errors.RelayError as exc:
            log.warning("inbox watch: %s; trying again", exc)
            await asyncio.sleep(RETRY_SECONDS)
            continue
        cursor = page.cursor
        if any(event.kind == "message.created" for event in page.events):
            await bus.publish(ResourceUpdated(uri=INBOX))
