"""``relay events list|stream|ticket``: the feed of what happened."""

from __future__ import annotations

from itertools import islice
from typing import Annotated

import typer

from relay_cli._common import JsonOutput, Limit, call, out, render
from relay_client import RelayClient

app = typer.Typer(help="Events: what happened, in order, by cursor.", no_args_is_help=True)

After = Annotated[int | None, typer.Option(help="Cursor to start after (default: from now).")]
COLUMNS = ("event_id", "kind", "subject_id", "audience", "created_at")


@app.command("list")
def list_(
    ctx: typer.Context,
    after: After = None,
    wait: Annotated[float | None, typer.Option(help="Seconds to wait for one (≤ 60).")] = None,
    limit: Limit = None,
    as_json: JsonOutput = False,
) -> None:
    """List events after a cursor; the JSON output carries the next cursor.

    Example: relay events list --after 0
    """
    page = call(ctx, lambda c: c.events.list(after=after, wait=wait, limit=limit))
    render(page, as_json, rows=page.events, columns=COLUMNS)


@app.command()
def ticket(ctx: typer.Context, as_json: JsonOutput = False) -> None:
    """Get a ticket that opens the event stream for a minute, for a browser page's EventSource
    (which cannot send Authorization): /v1/events/stream?ticket=...

    Example: relay events ticket
    """
    issued = call(ctx, lambda c: c.events.ticket())
    render(issued, as_json, headline=f"{issued.ticket} (until {issued.expires_at:%H:%M:%S} UTC)")


@app.command()
def stream(
    ctx: typer.Context,
    after: After = None,
    count: Annotated[int | None, typer.Option(help="Stop after this many.", min=1)] = None,
) -> None:
    """Print events as they happen, one JSON object per line (Ctrl-C to stop).

    Example: relay events stream --after 120
    """

    def follow(client: RelayClient) -> None:
        for event in islice(client.events.stream(after=after), count):
            out.print(event.model_dump_json(), markup=False)

    call(ctx, follow)
