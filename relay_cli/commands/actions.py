"""``relay actions record|list``."""

from __future__ import annotations

from typing import Annotated

import typer

from relay_api.models import ActionsResponse
from relay_cli._common import AllPages, Cursor, JsonOutput, Limit, call, pages, parse_json, render

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


@app.command("list")
def list_(
    ctx: typer.Context,
    agent_id: Annotated[str | None, typer.Option("--of", help="Only this agent's.")] = None,
    limit: Limit = None,
    all_pages: AllPages = False,
    cursor: Cursor = None,
    as_json: JsonOutput = False,
) -> None:
    """List actions, newest first.

    Example: relay actions list --of builder
    """
    actions = pages(
        ctx,
        all_pages,
        lambda c: c.actions.list(agent_id=agent_id, limit=limit, cursor=cursor),
        lambda c: c.actions.iterate(agent_id=agent_id, limit=limit),
        lambda items: ActionsResponse(actions=items),
    )
    columns = ("action_id", "agent_id", "action", "target", "outcome", "created_at")
    render(actions, as_json, rows=actions.actions, columns=columns)
