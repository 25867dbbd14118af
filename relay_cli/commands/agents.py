"""``relay agents register|list|heartbeat`` and ``relay inbox``."""

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
