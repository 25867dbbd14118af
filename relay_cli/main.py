"""``relay``: the root Typer app; one sub-app per resource.

Importing this module never loads aiohttp or SQLAlchemy: ``relay serve`` imports the server only
when it runs.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from relay_api import __version__
from relay_api.models import OPERATOR, Agent
from relay_cli._common import Connection, JsonOutput, call, out, render
from relay_cli.commands import (
    actions,
    agents,
    approvals,
    backup,
    enroll,
    events,
    guard,
    hook,
    interventions,
    mcp,
    messages,
    notify,
    policies,
    reservations,
    rooms,
    search,
    serve,
    spaces,
    tasks,
    webhooks,
)
from relay_client import RelayClient

app = typer.Typer(
    name="relay",
    help="Relay: coordination for software agents and their human operator.\n\n"
    "On the server's machine no flags are needed: the operator token is found in the server's "
    "data directory. Example: relay approvals list --status pending",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(agents.app, name="agents")
app.add_typer(messages.app, name="messages")
app.add_typer(rooms.app, name="rooms")
app.add_typer(spaces.app, name="spaces")
app.add_typer(tasks.app, name="tasks")
app.add_typer(actions.app, name="actions")
app.add_typer(notify.app, name="notifications")
app.add_typer(enroll.app, name="enroll")
app.add_typer(approvals.app, name="approvals")
app.add_typer(policies.app, name="policies")
app.add_typer(webhooks.app, name="webhooks")
app.add_typer(reservations.app, name="reservations")
app.add_typer(hook.app, name="hook")
app.add_typer(guard.app, name="guard")
app.add_typer(interventions.app, name="interventions")
app.add_typer(events.app, name="events")
app.command("inbox")(agents.inbox)
app.command("notify")(notify.notify)
app.command("search")(search.search)
app.command("reserve")(reservations.reserve)
app.command("release")(reservations.release)


def _show_version(asked: bool) -> None:
    if asked:
        typer.echo(f"relay {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    url: Annotated[
        str | None, typer.Option(help="Server URL [RELAY_URL; default http://127.0.0.1:8765].")
    ] = None,
    token: Annotated[
        str | None, typer.Option(help="Bearer token [RELAY_TOKEN; default: the local operator's].")
    ] = None,
    agent: Annotated[
        str | None, typer.Option(help="Act as this agent (X-Agent-ID) [RELAY_AGENT_ID].")
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Show Relay's version."
        ),
    ] = False,
) -> None:
    """Relay: coordination for software agents and their human operator."""
    ctx.obj = Connection(url=url, token=token, agent=agent)


@app.command()
def status(ctx: typer.Context, as_json: JsonOutput = False) -> None:
    """Show the server's version, backends and counts.

    Example: relay status
    """
    current = call(ctx, lambda c: c.status())
    render(current, as_json)


@app.command()
def health(ctx: typer.Context, as_json: JsonOutput = False) -> None:
    """Check that the server is up.

    Example: relay health
    """
    render(call(ctx, lambda c: c.health()), as_json)


@app.command()
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


app.command("serve")(serve.serve)
app.command("backup")(backup.backup)
app.command("mcp")(mcp.mcp)
