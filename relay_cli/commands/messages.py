"""``relay messages send|show|ack|thread``."""

from __future__ import annotations

from typing import Annotated

import typer

from relay_api import models as m
from relay_api import operations as ops
from relay_cli._common import JsonOutput, ago, call, parse_json, render
from relay_cli.listing import list_command

app = typer.Typer(help="Messages: send, acknowledge, read a conversation.", no_args_is_help=True)


@app.command()
def send(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="The message.")],
    to: Annotated[str | None, typer.Option(help="Recipient agent.")] = None,
    room: Annotated[str | None, typer.Option(help="Room to post to instead.")] = None,
    subject: Annotated[str | None, typer.Option(help="Subject line.")] = None,
    payload: Annotated[str | None, typer.Option(help="Payload as a JSON object.")] = None,
    reply_to: Annotated[int | None, typer.Option(help="Id of the message answered.")] = None,
    as_json: JsonOutput = False,
) -> None:
    """Send a direct message (--to) or post to a room (--room).

    Example: relay --agent builder messages send "build 7 is green" --to deployer
    """
    data = parse_json(payload, "--payload")
    message = call(
        ctx,
        lambda c: c.messages.send(
            text, to=to, room_id=room, subject=subject, payload=data, reply_to=reply_to
        ),
    )
    where = f"to {message.to}" if message.to else f"in room {message.room_id}"
    render(message, as_json, headline=f"Sent message {message.message_id} {where}")


@app.command()
def show(
    ctx: typer.Context,
    message_id: Annotated[int, typer.Argument(help="The message.")],
    as_json: JsonOutput = False,
) -> None:
    """Show a message with its receipts: when it reached a live session (delivered_at) and
    when it was acknowledged (acked_at). Its sender, its recipient and the operator may.

    Example: relay messages show 42
    """
    message = call(ctx, lambda c: c.messages.show(message_id))
    render(message, as_json, lead={"receipt": receipt(message)})


def receipt(message: m.Message) -> str:
    """Where a message stands, in words: sent, delivered (when), acknowledged (when)."""
    if message.room_id is not None:
        return f"posted in room {message.room_id}"
    if message.acked_at is not None:
        return f"acknowledged {ago(message.acked_at)}"
    if message.delivered_at is not None:
        return f"delivered {ago(message.delivered_at)}, not acknowledged yet"
    return "sent, not delivered yet"


@app.command()
def ack(
    ctx: typer.Context,
    message_id: Annotated[int, typer.Argument(help="The message to acknowledge.")],
    agent_id: Annotated[
        str | None, typer.Option("--as", help="Recipient; default --agent.")
    ] = None,
    as_json: JsonOutput = False,
) -> None:
    """Acknowledge a message you received.

    Example: relay --agent deployer messages ack 42
    """
    message = call(ctx, lambda c: c.messages.ack(message_id, agent_id=agent_id))
    render(message, as_json, headline=f"Acknowledged message {message.message_id}")


app.command("thread")(
    list_command(
        ops.MESSAGES_THREAD,
        columns=("message_id", "from_agent", "to", "room_id", "reply_to", "text", "created_at"),
        doc="""Show the conversation a message belongs to, oldest first (what you may read of it).

Example: relay messages thread 42""",
        # A thread is never empty (it is a 404 then): its id is its messages'.
        whole=lambda every: m.ThreadResponse(thread_id=every[0].thread_id, messages=every),
    )
)
