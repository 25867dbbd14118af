"""``relay tasks create|list|show|events|claim|event|complete|fail|cancel``."""

from __future__ import annotations

from typing import Annotated

import typer

from relay_api import operations as ops
from relay_cli._common import (
    JsonOutput,
    acting,
    call,
    parse_json,
    render,
)
from relay_cli.listing import list_command

app = typer.Typer(help="Tasks: create, claim, report progress, finish.", no_args_is_help=True)

TASK_COLUMNS = ("task_id", "title", "status", "assignee", "claimed_by", "progress", "priority")
TaskId = Annotated[int, typer.Argument(help="The task.")]
ActingAgent = Annotated[str | None, typer.Option("--as", help="The agent; default --agent.")]


@app.command()
def create(
    ctx: typer.Context,
    title: Annotated[str, typer.Argument(help="What needs doing.")],
    description: Annotated[str | None, typer.Option(help="More detail.")] = None,
    payload: Annotated[str | None, typer.Option(help="Payload as a JSON object.")] = None,
    priority: Annotated[int | None, typer.Option(help="Higher first.")] = None,
    assignee: Annotated[str | None, typer.Option(help="Only this agent may claim it.")] = None,
    room: Annotated[str | None, typer.Option(help="Room it belongs to.")] = None,
    max_attempts: Annotated[int | None, typer.Option(help="Attempts before it fails.")] = None,
    as_json: JsonOutput = False,
) -> None:
    """Create a task.

    Example: relay tasks create "reindex search" --priority 5
    """
    data = parse_json(payload, "--payload")
    task = call(
        ctx,
        lambda c: c.tasks.create(
            title,
            description=description,
            payload=data,
            priority=priority,
            assignee=assignee,
            room_id=room,
            max_attempts=max_attempts,
        ),
    )
    render(task, as_json, headline=f"Created task {task.task_id}")


app.command("list")(
    list_command(
        ops.TASKS_LIST,
        columns=TASK_COLUMNS,
        doc="""List tasks, by id.

Example: relay tasks list --status open --all""",
    )
)


@app.command()
def show(ctx: typer.Context, task_id: TaskId, as_json: JsonOutput = False) -> None:
    """Show one task.

    Example: relay tasks show 7
    """
    render(call(ctx, lambda c: c.tasks.get(task_id)), as_json)


app.command("events")(
    list_command(
        ops.TASKS_EVENTS,
        columns=("event_id", "kind", "agent_id", "progress", "message", "created_at"),
        doc="""Show a task's trail of events, oldest first.

Example: relay tasks events 7 --all""",
    )
)


@app.command()
def claim(
    ctx: typer.Context,
    task_id: TaskId,
    agent_id: ActingAgent = None,
    lease: Annotated[int | None, typer.Option(help="Lease in seconds.")] = None,
    as_json: JsonOutput = False,
) -> None:
    """Claim an open task.

    Example: relay --agent builder tasks claim 7
    """
    task = call(
        ctx, lambda c: c.tasks.claim(task_id, agent_id=acting(c, agent_id), lease_seconds=lease)
    )
    render(task, as_json, headline=f"Task {task.task_id} claimed by {task.claimed_by}")


@app.command()
def event(
    ctx: typer.Context,
    task_id: TaskId,
    agent_id: ActingAgent = None,
    progress: Annotated[int | None, typer.Option(help="0–100.")] = None,
    message: Annotated[str | None, typer.Option(help="What happened.")] = None,
    kind: Annotated[str | None, typer.Option(help="Event kind (default progress).")] = None,
    as_json: JsonOutput = False,
) -> None:
    """Report progress on a claimed task.

    Example: relay --agent builder tasks event 7 --progress 50 --message halfway
    """
    recorded = call(
        ctx,
        lambda c: c.tasks.event(
            task_id, agent_id=acting(c, agent_id), progress=progress, message=message, kind=kind
        ),
    )
    render(recorded, as_json, headline=f"Recorded event {recorded.event_id} on task {task_id}")


@app.command()
def complete(
    ctx: typer.Context,
    task_id: TaskId,
    agent_id: ActingAgent = None,
    result: Annotated[str | None, typer.Option(help="Result as a JSON object.")] = None,
    as_json: JsonOutput = False,
) -> None:
    """Complete a claimed task.

    Example: relay --agent builder tasks complete 7 --result '{"docs": 1200}'
    """
    data = parse_json(result, "--result")
    task = call(ctx, lambda c: c.tasks.complete(task_id, agent_id=acting(c, agent_id), result=data))
    render(task, as_json, headline=f"Task {task.task_id} completed")


@app.command()
def fail(
    ctx: typer.Context,
    task_id: TaskId,
    agent_id: ActingAgent = None,
    error: Annotated[str | None, typer.Option(help="What went wrong.")] = None,
    retry: Annotated[bool, typer.Option(help="Reopen it while attempts are left.")] = False,
    as_json: JsonOutput = False,
) -> None:
    """Fail a claimed task.

    Example: relay --agent builder tasks fail 7 --error "disk full" --retry
    """
    task = call(
        ctx, lambda c: c.tasks.fail(task_id, agent_id=acting(c, agent_id), error=error, retry=retry)
    )
    render(task, as_json, headline=f"Task {task.task_id} is {task.status}")


@app.command()
def cancel(
    ctx: typer.Context,
    task_id: TaskId,
    reason: Annotated[str | None, typer.Option(help="Why, for its trail.")] = None,
    as_json: JsonOutput = False,
) -> None:
    """Cancel a task that is not finished (its creator or the operator).

    Example: relay tasks cancel 7 --reason "no longer needed"
    """
    task = call(ctx, lambda c: c.tasks.cancel(task_id, reason=reason))
    render(task, as_json, headline=f"Task {task.task_id} is {task.status}")
