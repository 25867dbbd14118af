"""``relay rooms list|join|messages``."""

from __future__ import annotations

from typing import Annotated

import typer

from relay_api import operations as ops
from relay_cli._common import JsonOutput, Limit, call, render
from relay_cli.listing import list_command

app = typer.Typer(help="Rooms: list, join, read.", no_args_is_help=True)


app.command("list")(
    list_command(
        ops.ROOMS_LIST,
        columns=("room_id", "name", "space_id", "topic"),
        doc="""List rooms, by id.

Example: relay rooms list""",
    )
)


@app.command()
def join(
    ctx: typer.Context,
    room_id: Annotated[str, typer.Argument(help="The room (created if new).")],
    agent_id: Annotated[
        str | None, typer.Option("--as", help="Who joins; default --agent.")
    ] = None,
    as_json: JsonOutput = False,
) -> None:
    """Join a room.

    Example: relay --agent builder rooms join ops
    """
    member = call(ctx, lambda c: c.rooms.join(room_id, agent_id=agent_id))
    render(member, as_json, headline=f"{member.agent_id} is in room {member.room_id}")


@app.command()
def messages(
    ctx: typer.Context,
    room_id: Annotated[str, typer.Argument(help="The room.")],
    limit: Limit = None,
    thread: Annotated[
        int | None, typer.Option(help="Only this conversation (a thread's first message id).")
    ] = None,
    as_json: JsonOutput = False,
) -> None:
    """Show a room's newest messages.

    Example: relay rooms messages ops -n 20
    """
    page = call(ctx, lambda c: c.rooms.messages(room_id, limit=limit, thread_id=thread))
    render(
        page,
        as_json,
        rows=page.messages,
        columns=("message_id", "from_agent", "text", "created_at"),
    )
