"""``relay mcp``: Relay's tools for an LLM agent, served over stdio (``relay-agents[mcp]``)."""

from __future__ import annotations

import asyncio

import typer

from relay_cli._common import Connection


def mcp(ctx: typer.Context) -> None:
    """Serve Relay's agent tools over stdio to an MCP client (an LLM agent).

    It acts as the agent of --agent/RELAY_AGENT_ID with --token/RELAY_TOKEN, against
    --url/RELAY_URL. Needs the mcp extra: pip install 'relay-agents[mcp]'.

    Example: claude mcp add relay -- relay mcp
    """
    try:
        from mcp.server.subscriptions import InMemorySubscriptionBus

        from relay_mcp.inbox import SessionSubscribers, watch_inbox
        from relay_mcp.server import build_server
    except ImportError as exc:
        typer.echo(
            f"Error: relay mcp needs the mcp extra (pip install 'relay-agents[mcp]'): {exc}",
            err=True,
        )
        raise typer.Exit(2) from None
    from relay_client import AsyncRelayClient

    connection: Connection = ctx.obj

    async def serve() -> None:
        async with AsyncRelayClient(
            connection.url, token=connection.token, agent_id=connection.agent
        ) as relay:
            bus, subscribers = InMemorySubscriptionBus(), SessionSubscribers()
            try:
                server = build_server(relay, bus, subscribers)
            except ValueError as exc:
                typer.echo(f"Error: {exc}", err=True)
                raise typer.Exit(2) from None
            if relay.config.agent_id is None:
                await server.run_stdio_async()
                return
            watcher = asyncio.create_task(watch_inbox(relay, bus, subscribers))
            try:
                await server.run_stdio_async()
            finally:
                watcher.cancel()
                await asyncio.gather(watcher, return_exceptions=True)

    asyncio.run(serve())
