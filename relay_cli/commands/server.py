"""``relay status``, ``relay health`` and ``relay whoami``: the server and who it says you are."""

from __future__ import annotations

import json

import typer

from relay_api.models import OPERATOR, Agent
from relay_cli._common import JsonOutput, call, out, render
from relay_client import RelayClient


def status(ctx: typer.Context, as_json: JsonOutput = False) -> None:
    """Show the server's version, backends and counts.

    Example: relay status
    """
    current = call(ctx, lambda c: c.status())
    render(current, as_json)


def health(ctx: typer.Context, as_json: JsonOutput = False) -> None:
    """Check that the server is up.

    Example: relay health
    """
    render(call(ctx, lambda c: c.health()), as_json)


def whoami(ctx: typer.Context, as_json: JsonOutput = False) -> None:
    """Show who the server says the token is: the operator, or an agent with its presence and
    waiting messages. A token the server does not know fails like any other command.

    Example: relay whoami
    """

    def identify(client: RelayClient) -> Agent | None:
        # The server says who the token is: its prefix, or a URL nobody answers, proves nothing.
        if client.status().caller == OPERATOR:
            return None
        return client.agents.me()

    agent, url = call(ctx, lambda c: (identify(c), c.config.url))
    if agent is None:
        if as_json:
            out.print(json.dumps({"operator": True, "url": url}), markup=False)
        else:
            out.print(f"the operator, at {url}", markup=False)
        return
    headline = (
        f"agent {agent.agent_id} at {url}: {agent.presence}, "
        f"{agent.pending_messages} message(s) waiting"
    )
    render(agent, as_json, headline=headline)
