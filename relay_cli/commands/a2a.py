"""``relay a2a send|list|show``: messages to external A2A agents, sent through Relay."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from relay_api import operations as ops
from relay_api.models import A2ACall
from relay_cli._common import JsonOutput, call, err, parse_json, render
from relay_cli.listing import list_command

app = typer.Typer(
    help="A2A: reach external A2A agents through Relay; their tasks are followed in the feed.",
    no_args_is_help=True,
)

CallId = Annotated[int, typer.Argument(help="The call.")]


def _said(sent: A2ACall) -> str:
    """A call in one line: where it stands, and what the agent answered."""
    who = sent.remote_name or sent.url
    if sent.status == "awaiting_approval":
        return f"A2A call {sent.call_id} to {who} awaits approval {sent.approval_id}"
    if sent.status != "sent":
        return f"A2A call {sent.call_id} to {who} is {sent.status}: {sent.error}"
    reply = (sent.answer or {}).get("message")
    if reply is not None:
        texts = [part["text"] for part in reply.get("parts", []) if "text" in part]
        return f"{who} answered: {' '.join(texts)}"
    return f"A2A call {sent.call_id}: {who}'s task {sent.remote_task_id} is {sent.state}"


@app.command()
def send(
    ctx: typer.Context,
    url: Annotated[str, typer.Argument(help="The agent's card, or its base URL.")],
    text: Annotated[str | None, typer.Argument(help="The message.")] = None,
    data: Annotated[str | None, typer.Option(help="JSON sent as a data part.")] = None,
    task: Annotated[
        str | None, typer.Option(help="The agent's task this answers or continues.")
    ] = None,
    context: Annotated[str | None, typer.Option(help="The conversation (contextId).")] = None,
    bearer_env: Annotated[
        str | None,
        typer.Option(help="The environment variable holding a token the agent's card asks for."),
    ] = None,
    as_json: JsonOutput = False,
) -> None:
    """Send a message to an external A2A agent; its task is followed in the feed.

    Example: relay --agent planner a2a send https://builder.example.com "build main"
    """
    bearer = None
    if bearer_env is not None:
        bearer = os.environ.get(bearer_env)
        if not bearer:
            raise typer.BadParameter(f"{bearer_env} is not set", param_hint="--bearer-env")
    payload = parse_json(data, "--data")
    sent = call(
        ctx,
        lambda c: c.a2a.send(
            url, text=text, data=payload, task_id=task, context_id=context, bearer=bearer
        ),
    )
    if sent.status in ("failed", "rejected") and not as_json:
        err.print(_said(sent), markup=False)
        raise typer.Exit(1)
    render(sent, as_json, headline=_said(sent))


app.command("list")(
    list_command(
        ops.A2A_LIST,
        columns=("call_id", "agent_id", "url", "status", "state", "updated_at"),
        doc="""List A2A calls, newest first: yours; the operator's, every agent's.

Example: relay a2a list --status sent""",
    )
)


@app.command()
def show(ctx: typer.Context, call_id: CallId, as_json: JsonOutput = False) -> None:
    """Show one A2A call: what was sent, and what the agent last answered.

    Example: relay a2a show 3
    """
    render(call(ctx, lambda c: c.a2a.show(call_id)), as_json)
