"""``relay notify TEXT`` and ``relay notifications list|reply``."""

from __future__ import annotations

from typing import Annotated

import typer

from relay_api.models import NotificationsResponse
from relay_cli._common import AllPages, Cursor, JsonOutput, Limit, call, pages, render

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


@app.command("list")
def list_(
    ctx: typer.Context,
    limit: Limit = None,
    all_pages: AllPages = False,
    cursor: Cursor = None,
    as_json: JsonOutput = False,
) -> None:
    """List notifications, newest first.

    Example: relay notifications list
    """
    found = pages(
        ctx,
        all_pages,
        lambda c: c.notify.list(limit=limit, cursor=cursor),
        lambda c: c.notify.iterate(limit=limit),
        lambda items: NotificationsResponse(notifications=items),
    )
    columns = ("notification_id", "agent_id", "status", "platform_message_id", "text", "created_at")
    render(found, as_json, rows=found.notifications, columns=columns)


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
