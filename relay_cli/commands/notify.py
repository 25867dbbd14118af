"""``relay notify TEXT`` and ``relay notifications list|reply``."""

from __future__ import annotations

from typing import Annotated

import typer

from relay_api import operations as ops
from relay_cli._common import JsonOutput, call, render
from relay_cli.listing import list_command

app = typer.Typer(help="Notifications to the operator, and replies.", no_args_is_help=True)


def notify(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="What to tell the operator.")],
    agent_id: Annotated[str | None, typer.Option("--as", help="Default: the caller.")] = None,
    as_json: JsonOutput = False,
) -> None:
    """Send a notification to the operator's platform.

    Example: relay --agent builder notify "deploy needs a hand"
    """
    sent = call(ctx, lambda c: c.notify.send(text, agent_id=agent_id))
    render(
        sent,
        as_json,
        headline=f"Notification {sent.notification_id} {sent.status} via {sent.bridge} "
        f"(platform id {sent.platform_message_id})",
    )


app.command("list")(
    list_command(
        ops.NOTIFY_LIST,
        columns=(
            "notification_id",
            "agent_id",
            "status",
            "platform_message_id",
            "text",
            "created_at",
        ),
        doc="""List notifications, newest first.

Example: relay notifications list""",
    )
)


@app.command()
def retry(
    ctx: typer.Context,
    notification_id: Annotated[int, typer.Argument(help="The failed notification.")],
    as_json: JsonOutput = False,
) -> None:
    """Send a failed notification again.

    Example: relay notifications retry 7
    """
    again = call(ctx, lambda c: c.notify.retry(notification_id))
    render(again, as_json, headline=f"Notification {again.notification_id} {again.status}")


@app.command()
def reply(
    ctx: typer.Context,
    platform_message_id: Annotated[str, typer.Argument(help="The notification's platform id.")],
    text: Annotated[str, typer.Argument(help="Your answer.")],
    as_json: JsonOutput = False,
) -> None:
    """Answer a notification; the agent finds the reply in its inbox.

    Example: relay notifications reply local-3 "on my way"
    """
    message = call(ctx, lambda c: c.notify.reply(platform_message_id, text))
    render(message, as_json, headline=f"Replied to {message.to} (message {message.message_id})")
