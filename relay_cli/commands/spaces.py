"""``relay spaces list|create|add-room|sync|archive``."""

from __future__ import annotations

from typing import Annotated

import typer

from relay_api import operations as ops
from relay_cli._common import JsonOutput, call, render
from relay_cli.listing import list_command

app = typer.Typer(help="Spaces: groups of rooms (operator).", no_args_is_help=True)


app.command("list")(
    list_command(
        ops.SPACES_LIST,
        columns=("space_id", "name", "status", "description"),
        doc="""List spaces, by id.

Example: relay spaces list --archived""",
        flags={"include_archived": "--archived"},
    )
)


@app.command()
def create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The space's name.")],
    space_id: Annotated[str | None, typer.Option("--id", help="Default: from the name.")] = None,
    description: Annotated[str | None, typer.Option(help="What it is for.")] = None,
    as_json: JsonOutput = False,
) -> None:
    """Create a space.

    Example: relay spaces create "Ops Team"
    """
    space = call(ctx, lambda c: c.spaces.create(name, space_id=space_id, description=description))
    render(space, as_json, headline=f"Created space {space.space_id}")


@app.command("add-room")
def add_room(
    ctx: typer.Context,
    space_id: Annotated[str, typer.Argument(help="The space.")],
    name: Annotated[str, typer.Argument(help="The room's name.")],
    room_id: Annotated[str | None, typer.Option("--id", help="Default: from the name.")] = None,
    topic: Annotated[str | None, typer.Option(help="The room's topic.")] = None,
    as_json: JsonOutput = False,
) -> None:
    """Create a room in a space.

    Example: relay spaces add-room ops-team "Incidents"
    """
    room = call(ctx, lambda c: c.spaces.add_room(space_id, name, room_id=room_id, topic=topic))
    render(room, as_json, headline=f"Created room {room.room_id} in space {room.space_id}")


@app.command()
def sync(ctx: typer.Context, as_json: JsonOutput = False) -> None:
    """Reconcile spaces and rooms with the operator platform.

    Example: relay spaces sync
    """
    report = call(ctx, lambda c: c.spaces.sync())
    render(report, as_json, headline=f"Synced with the {report.bridge} bridge")


@app.command()
def archive(
    ctx: typer.Context,
    space_id: Annotated[str, typer.Argument(help="The space (archiving is one-way).")],
    as_json: JsonOutput = False,
) -> None:
    """Archive a space; its rooms become read-only.

    Example: relay spaces archive ops-team
    """
    space = call(ctx, lambda c: c.spaces.archive(space_id))
    render(space, as_json, headline=f"Archived space {space.space_id}")
