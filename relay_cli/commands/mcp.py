"""``relay mcp``: Relay's tools for an LLM agent, served over stdio (``relay-agents[mcp]``)."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from relay_api.models import OPERATOR
from relay_cli._common import Connection, call


def mcp(
    ctx: typer.Context,
    operator_without_confirmation: Annotated[
        bool,
        typer.Option(
            "--operator-without-confirmation",
            help="With the operator's token: approve, reject and policy changes run without "
            "asking the human through the client (risky: the LLM decides alone). Without it "
            "they ask, and a client that cannot ask is refused.",
        ),
    ] = False,
) -> None:
    """Serve Relay's agent tools over stdio to an MCP client (an LLM agent).

    It acts as whoever --token/RELAY_TOKEN belongs to (an agent, or the operator), against
    --url/RELAY_URL; a refused token stops it at once. Needs the mcp extra: pip install
    'relay-agents[mcp]'.

    Example: claude mcp add relay -- relay mcp
    """
    try:
        from mcp.server.subscriptions import InMemorySubscriptionBus

        from relay_mcp.inbox import SessionSubscribers, watch_inbox
        from relay_mcp.results import watch_from_now
        from relay_mcp.server import build_server
    except ImportError as exc:
        typer.echo(
            f"Error: relay mcp needs the mcp extra (pip install 'relay-agents[mcp]'): {exc}",
            err=True,
        )
        raise typer.Exit(2) from None
    from relay_client import AsyncRelayClient

    connection: Connection = ctx.obj
    agent = _acting_agent(ctx, connection)

    async def serve() -> None:
        async with AsyncRelayClient(
            connection.url, token=connection.token, agent_id=agent
        ) as relay:
            bus, subscribers = InMemorySubscriptionBus(), SessionSubscribers()
            server = build_server(
                relay, bus, subscribers, confirm_decisions=not operator_without_confirmation
            )
            if relay.config.agent_id is None:
                await server.run_stdio_async()
                return
            await watch_from_now(relay)
            watcher = asyncio.create_task(watch_inbox(relay, bus, subscribers))
            try:
                await server.run_stdio_async()
            finally:
                watcher.cancel()
                await asyncio.gather(watcher, return_exceptions=True)

    asyncio.run(serve())


def _acting_agent(ctx: typer.Context, connection: Connection) -> str | None:
    """The agent the tools act as: the one the server takes the token for (``--agent`` may
    name it too, and the server refuses another's); None for the operator's token. A refused
    token, or a server that cannot be reached, ends ``relay mcp`` here (``call``'s one line
    and exit code) rather than after a host has listed its tools."""
    caller = call(ctx, lambda client: client.status()).caller
    return connection.agent if caller == OPERATOR else caller
