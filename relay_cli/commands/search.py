"""``relay search``: what agents and the operator wrote, found by its words."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import typer

from relay_api import models as m
from relay_cli._common import AllPages, Cursor, JsonOutput, Limit, pages, render


def search(
    ctx: typer.Context,
    query: Annotated[
        str, typer.Argument(help='Words (all must appear), "a phrase", -excluded, OR.')
    ],
    kinds: Annotated[
        str | None,
        typer.Option(help="Comma-separated: message, room_post, task, approval, action."),
    ] = None,
    by: Annotated[str | None, typer.Option("--by", help="Only what this agent wrote.")] = None,
    room: Annotated[str | None, typer.Option(help="Only what was said in this room.")] = None,
    since: Annotated[datetime | None, typer.Option(help="Written from then (ISO 8601).")] = None,
    until: Annotated[datetime | None, typer.Option(help="Written before then.")] = None,
    limit: Limit = None,
    all_pages: AllPages = False,
    cursor: Cursor = None,
    as_json: JsonOutput = False,
) -> None:
    """Find messages, room posts, tasks, approvals and actions by their words, best first (an
    agent finds what it may read; the operator everything).

    Example: relay search "tls certificate" --kinds message,task
    """
    where: dict[str, Any] = {"kinds": kinds, "agent_id": by, "room_id": room}
    where |= {"since": since, "until": until, "limit": limit}
    found = pages(
        ctx,
        all_pages,
        lambda c: c.search(query, **where, cursor=cursor),
        lambda c: c.iterate_search(query, **where),
        lambda every: m.SearchResponse(hits=every),
    )
    render(
        found,
        as_json,
        rows=found.hits,
        columns=("kind", "id", "from_agent", "room_id", "title", "snippet", "created_at"),
    )
