"""``relay agents register|list|heartbeat|a2a`` and ``relay inbox``."""

from __future__ import annotations

from typing import Annotated

import typer

from relay_api import operations as ops
from relay_cli._common import (
    JsonOutput,
    Limit,
    acting,
    call,
    parse_json,
    render,
)
from relay_cli.listing import list_command

AgentArgument = Annotated[
    str | None, typer.Argument(help="Default: --agent, else the token's agent.")
]

app = typer.Typer(help="Agents: register, list, heartbeat.", no_args_is_help=True)

AGENT_COLUMNS = ("agent_id", "name", "presence", "status", "last_seen_at")
MESSAGE_COLUMNS = ("message_id", "from_agent", "subject", "text", "status", "created_at")


@app.command()
def register(
    ctx: typer.Context,
    agent_id: Annotated[str, typer.Argument(help="The new agent's id.")],
    name: Annotated[str | None, typer.Option(help="Display name.")] = None,
    kind: Annotated[str | None, typer.Option(help="What sort of agent it is.")] = None,
    capability: Annotated[
        list[str] | None, typer.Option("--capability", "-c", help="A capability (repeatable).")
    ] = None,
    metadata: Annotated[str | None, typer.Option(help="Metadata as a JSON object.")] = None,
    rotate_token: Annotated[
        bool,
        typer.Option(
            help="Issue a new token, revoking the old at once (a running agent stops, saying "
            "so). It is printed here, once: give it to the agent, which starts again with it "
            "in RELAY_TOKEN (an SDK agent then keeps it in its identity file)."
        ),
    ] = False,
    as_json: JsonOutput = False,
) -> None:
    """Register an agent (or update it) and show its token, once. Operator only.

    Example: relay agents register builder --name "Build bot" -c ci
    """
    meta = parse_json(metadata, "--metadata")
    agent = call(
        ctx,
        lambda c: c.agents.register(
            agent_id,
            name=name,
            kind=kind,
            capabilities=capability,
            metadata=meta,
            rotate_token=rotate_token,
        ),
    )
    shown = f"token: {agent.token} (shown once)" if agent.token else "no new token issued"
    render(agent, as_json, headline=f"Registered agent {agent.agent_id}; {shown}")


app.command("list")(
    list_command(
        ops.AGENTS_LIST,
        columns=AGENT_COLUMNS,
        doc="""List agents with their presence, by id.

Example: relay agents list --all""",
    )
)


@app.command()
def heartbeat(
    ctx: typer.Context,
    agent_id: Annotated[
        str | None, typer.Argument(help="Default: --agent, else the token's agent.")
    ] = None,
    status: Annotated[str | None, typer.Option(help="Self-reported status.")] = None,
    note: Annotated[str | None, typer.Option(help="A note to go with it.")] = None,
    as_json: JsonOutput = False,
) -> None:
    """Send a heartbeat for an agent.

    Example: relay --agent builder agents heartbeat --status idle
    """
    beat = call(ctx, lambda c: c.agents.heartbeat(acting(c, agent_id), status=status, note=note))
    render(
        beat,
        as_json,
        headline=f"{beat.agent_id} is {beat.presence}; {beat.pending_messages} message(s) waiting",
    )


@app.command()
def a2a(
    ctx: typer.Context,
    agent_id: AgentArgument = None,
    off: Annotated[bool, typer.Option("--off", help="No longer reachable over A2A.")] = False,
    description: Annotated[
        str | None, typer.Option(help="What the agent does, for its card.")
    ] = None,
    skill: Annotated[
        list[str] | None,
        typer.Option(help="A skill its card lists, as ID:NAME:DESCRIPTION (repeatable)."),
    ] = None,
    as_json: JsonOutput = False,
) -> None:
    """Make an agent reachable over A2A (its card and endpoint under /a2a/agents/), or not.

    Example: relay agents a2a summarizer --skill 'summarize:Summarize:Summarize a text.'
    """
    skills = [_skill(given) for given in skill or []]
    agent = call(
        ctx,
        lambda c: c.agents.a2a(
            acting(c, agent_id), enabled=not off, description=description, skills=skills
        ),
    )
    reached = "reachable over A2A" if agent.a2a and agent.a2a.enabled else "not reachable over A2A"
    render(agent, as_json, headline=f"{agent.agent_id} is {reached}")


def _skill(given: str) -> dict[str, str]:
    """A skill of ``--skill ID:NAME:DESCRIPTION``."""
    parts = given.split(":", 2)
    if len(parts) != 3 or not all(part.strip() for part in parts):
        raise typer.BadParameter(f"{given!r} is not ID:NAME:DESCRIPTION", param_hint="--skill")
    skill_id, name, description = (part.strip() for part in parts)
    return {"id": skill_id, "name": name, "description": description}


def inbox(
    ctx: typer.Context,
    agent_id: Annotated[
        str | None, typer.Argument(help="Default: --agent, else the token's agent.")
    ] = None,
    limit: Limit = None,
    wait: Annotated[float | None, typer.Option(help="Seconds to wait for one (≤ 60).")] = None,
    peek: Annotated[
        bool, typer.Option(help="Look without delivering: statuses and counts stay as they are.")
    ] = False,
    as_json: JsonOutput = False,
) -> None:
    """Show an agent's unacknowledged messages, oldest first (they become delivered, unless
    --peek).

    Example: relay inbox builder --wait 30
    """
    box = call(
        ctx, lambda c: c.agents.inbox(acting(c, agent_id), limit=limit, wait=wait, peek=peek)
    )
    render(box, as_json, rows=box.messages, columns=MESSAGE_COLUMNS)
