"""``relay rooms list|join|messages``."""

from __future__ import annotations

from typing import Annotated

import typer

from relay_api.models import RoomsResponse
from relay_cli._common import AllPages, Cursor, JsonOutput, Limit, call, pages, render

app = typer.Typer(help="Rooms: list, join, read.", no_args_is_help=True)


@app.command("list")
def list_(
    ctx: typer.Context,
    limit: Limit = None,
    all_pages: AllPages = False,
    cursor: Cursor = None,
    as_json: JsonOutput = False,
) -> None:
    """List rooms, by id.

    Example: relay rooms list
    """
    rooms = pages(
        ctx,
        all_pages,
        lambda c: c.rooms.list(limit=limit, cursor=cursor),
        lambda c: c.rooms.iterate(limit=limit),
        lambda items: RoomsResponse(rooms=items),
    )
    render(rooms, as_json, rows=rooms.rooms, columns=("room_id", "name", "space_id", "topic"))


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
    as_json: JsonOutput = False,
) -> None:
    """Show a room's newest messages.

    Example: relay rooms messages ops -n 20
    """
    page = call(ctx, lambda c: c.rooms.messages(room_id, limit=limit))
    render(
        page,
        as_json,
        rows=page.messages,
        columns=("message_id", "from_agent", "text", "created_at"),
    )
