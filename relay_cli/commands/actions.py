"""``relay actions record|list``."""

from __future__ import annotations

from typing import Annotated

import typer

from relay_api import operations as ops
from relay_cli._common import JsonOutput, call, parse_json, render
from relay_cli.listing import list_command

app = typer.Typer(help="Actions: the audit log of what agents did.", no_args_is_help=True)


@app.command()
def record(
    ctx: typer.Context,
    action: Annotated[str, typer.Argument(help="What was done.")],
    agent_id: Annotated[str | None, typer.Option("--as", help="Default: the caller.")] = None,
    target: Annotated[str | None, typer.Option(help="What it was done to.")] = None,
    params: Annotated[str | None, typer.Option(help="Parameters as a JSON object.")] = None,
    outcome: Annotated[str | None, typer.Option(help="How it went.")] = None,
    task: Annotated[int | None, typer.Option(help="The task it was for.")] = None,
    as_json: JsonOutput = False,
) -> None:
    """Record an action in the audit log.

    Example: relay --agent builder actions record deploy --target web-1 --outcome ok
    """
    data = parse_json(params, "--params")
    recorded = call(
        ctx,
        lambda c: c.actions.record(
            action, agent_id=agent_id, target=target, params=data, outcome=outcome, task_id=task
        ),
    )
    render(recorded, as_json, headline=f"Recorded action {recorded.action_id}")


app.command("list")(
    list_command(
        ops.ACTIONS_LIST,
        columns=("action_id", "agent_id", "action", "target", "outcome", "created_at"),
        doc="""List actions, newest first.

Example: relay actions list --of builder""",
        flags={"agent_id": "--of"},
    )
)
