"""``relay mcp``: Relay's tools for an LLM agent, served over stdio."""

from __future__ import annotations

import asyncio
from enum import StrEnum
from typing import Annotated

import typer

from relay_api.models import OPERATOR
from relay_cli._common import call
from relay_cli.connection import NO_AGENT_TOKEN, Connection, given_token
from relay_cli.workspace import current_workspace


class ChannelMode(StrEnum):
    """Whether ``relay mcp`` is a Claude Code channel."""

    auto = "auto"
    on = "on"
    off = "off"


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
    channel: Annotated[
        ChannelMode,
        typer.Option(
            help="Push what Relay has for the agent into its running session and relay its "
            "permission prompts, as a Claude Code channel: auto (when the host is Claude "
            "Code), on, or off.",
        ),
    ] = ChannelMode.auto,
    rooms: Annotated[
        bool,
        typer.Option(help="Push the posts of the rooms the agent joined (with the channel)."),
    ] = True,
    permission_timeout: Annotated[
        int,
        typer.Option(
            min=5,
            max=3600,
            help="Seconds an approval for a permission prompt stays open (the host may "
            "answer it at its terminal and say nothing); then it expires.",
        ),
    ] = 120,
    reservations: Annotated[
        bool,
        typer.Option(
            "--reservations",
            help="Also list reserve_paths, release_paths and who_holds for the repository it "
            "runs in (its workspace: git config relay.workspace, else its origin's URL).",
        ),
    ] = False,
) -> None:
    """Serve Relay's agent tools over stdio to an MCP client (an LLM agent).

    It acts as whoever --token/RELAY_TOKEN belongs to (an agent, or the operator when its
    token is given so), against --url/RELAY_URL; it never takes the operator token of a
    server on this machine by itself. No token, or a refused one, stops it at once.

    For an agent's token it is also a Claude Code channel (with a host that loads it as
    one: claude --channels plugin:relay@relay, or --dangerously-load-development-channels
    server:relay): messages, room posts, assigned tasks and decisions arrive in the running
    session, and its permission prompts go to the operator as approvals.

    Example: claude mcp add relay -- relay mcp
    """
    try:
        from mcp.server.subscriptions import InMemorySubscriptionBus

        from relay_mcp import channel as channels
        from relay_mcp import presence
        from relay_mcp.inbox import SessionSubscribers, watch_inbox
        from relay_mcp.results import watch_from_now
        from relay_mcp.server import build_server, run_stdio
    except ImportError as exc:
        from relay_cli.install import reinstall_command

        typer.echo(
            f"Error: relay mcp cannot load the MCP SDK ({exc}): install Relay again with"
            f" {reinstall_command()}",
            err=True,
        )
        raise typer.Exit(2) from None
    from relay_client import AsyncRelayClient
    from relay_client.kept_files import Cursor

    connection: Connection = ctx.obj
    connection.token = given_token(connection)
    if connection.token is None:
        typer.echo(f"Error: relay mcp: {NO_AGENT_TOKEN}", err=True)
        raise typer.Exit(2)
    agent = _acting_agent(ctx, connection)
    workspace = _workspace(agent) if reservations else None

    async def serve() -> None:
        async with AsyncRelayClient(
            connection.url, token=connection.token, agent_id=agent
        ) as relay:
            bus, subscribers = InMemorySubscriptionBus(), SessionSubscribers()
            pushing = None
            if agent is not None and channel != ChannelMode.off:
                cursor = Cursor(channels.cursor_path(relay.config.url, agent))
                pushing = channels.Channel(
                    relay,
                    cursor,
                    rooms=rooms,
                    forced=channel == ChannelMode.on,
                    permission_seconds=permission_timeout,
                )
            server = build_server(
                relay,
                bus,
                subscribers,
                confirm_decisions=not operator_without_confirmation,
                channel=pushing,
                workspace=workspace,
            )
            if relay.config.agent_id is None:
                await run_stdio(server, channel=False)
                return
            await watch_from_now(relay)
            watchers = [
                asyncio.create_task(watch_inbox(relay, bus, subscribers)),
                asyncio.create_task(presence.beat(relay)),
            ]
            if pushing is not None:
                watchers.append(asyncio.create_task(pushing.run()))
            try:
                await run_stdio(server, channel=pushing is not None)
            finally:
                for watcher in watchers:
                    watcher.cancel()
                if pushing is not None:
                    await pushing.close()
                await asyncio.gather(*watchers, return_exceptions=True)

    asyncio.run(serve())


def _acting_agent(ctx: typer.Context, connection: Connection) -> str | None:
    """The agent the tools act as: the one the server takes the token for (``--agent`` may
    name it too, and the server refuses another's); None for the operator's token. A refused
    token, or a server that cannot be reached, ends ``relay mcp`` here (``call``'s one line
    and exit code) rather than after a host has listed its tools."""
    caller = call(ctx, lambda client: client.status()).caller
    return connection.agent if caller == OPERATOR else caller


def _workspace(agent: str | None) -> str:
    """The workspace ``--reservations`` speaks of, this repository's; for the operator (who
    holds no paths) or outside a repository that names one, ``relay mcp`` stops here."""
    if agent is None:
        problem = "it needs an agent's token"
    elif (workspace := current_workspace()) is None:
        problem = "not in a git repository with an origin remote: set git config relay.workspace"
    else:
        return workspace
    typer.echo(f"Error: --reservations: {problem}", err=True)
    raise typer.Exit(2)
