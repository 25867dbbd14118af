"""Who is editing what, for an agent in a repository: reserve paths, release them, see who holds
them. Listed by ``relay mcp --reservations`` only (docs/mcp.md says why: the tool listing's
budget); they speak of the workspace of the repository ``relay mcp`` runs in, the one the commit
guard and the edit hooks read, so that what the model reserves is what they enforce."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.resolve import Resolve
from mcp.types import CallToolResult
from pydantic import Field

from relay_api import models as m
from relay_cli.workspace import repository_root, within
from relay_client import AsyncRelayClient, ConflictError
from relay_mcp import answers as a
from relay_mcp.agent_tools import PAGE, READ, REPEATABLE, WRITE, Cursor
from relay_mcp.arguments import integer_id, like
from relay_mcp.results import Tool, answer, listed_in, refusal

RESERVATION_TOOLS: list[Tool] = []
reservation_tool = listed_in(RESERVATION_TOOLS)
# A path or pattern as the API bounds it (its pattern, no control characters, is the API's to
# say: a model never writes one).
PathText = Annotated[str, Field(min_length=1, max_length=500)]


def _workspace(ctx: Context) -> str:
    """The workspace of the repository this server runs in (``build_server``'s)."""
    return str(ctx.mcp_server.workspace)  # type: ignore[attr-defined]


Here = Annotated[str, Resolve(_workspace)]


@reservation_tool(WRITE, "Reserve paths")
async def reserve_paths(
    relay: AsyncRelayClient,
    paths: Annotated[
        list[PathText],
        Field(min_length=1, max_length=100, description="from the root, e.g. 'src/api/**'"),
    ],
    reason: Annotated[str | None, like(m.ReservationCreate, "reason", "why, for others")] = None,
    ttl_seconds: Annotated[
        int | None, like(m.ReservationCreate, "ttl_seconds", "default 3600")
    ] = None,
    exclusive: Annotated[bool, Field(description="false: others may share them")] = True,
    task_id: Annotated[int | None, integer_id("released when this task ends")] = None,
    *,
    here: Here,
) -> Annotated[CallToolResult, a.Reserved]:
    """Say you are editing these paths: all granted, or none (the holders named)."""
    try:
        held = await relay.reservations.create(
            here,
            [_from_root(path) for path in paths],
            exclusive=exclusive,
            ttl_seconds=ttl_seconds,
            reason=reason,
            task_id=task_id,
        )
    except ConflictError as exc:
        return refusal(exc.code, _in_the_way(exc))
    next_ = f"release_paths({held.reservation_id}) when done"
    reserved = a.Reserved(
        reservation_id=held.reservation_id, expires_at=held.expires_at, next=next_
    )
    return await answer(relay, reserved)


def _from_root(path: str) -> str:
    """A path as the tools take it, from the repository's root: an absolute path inside the
    repository (what a model often passes) is made so; any other is the API's to judge."""
    root = repository_root()
    inside = within(path, root, root) if root is not None and path.startswith("/") else None
    return path if inside is None else inside


def _in_the_way(exc: ConflictError) -> str:
    """A refused reservation's detail: who holds what, why and until when."""
    held = exc.conflicts
    if not held:
        return exc.message  # another conflict: a task not held, a retry key reused
    said = "; ".join(
        f"{c.holder} holds {', '.join(c.paths)}{f' for {c.reason}' if c.reason else ''}"
        f" until {c.expires_at:%H:%M} UTC (#{c.reservation_id})"
        for c in held
    )
    return f"nothing reserved: {said}; message them or pick other work"


@reservation_tool(REPEATABLE, "Release paths")
async def release_paths(
    relay: AsyncRelayClient,
    reservation_id: Annotated[int, integer_id("as reserve_paths said")],
) -> Annotated[CallToolResult, a.Released]:
    """Release your reservation (twice is fine)."""
    ended = await relay.reservations.release(reservation_id)
    return await answer(relay, a.Released(status=ended.status))


@reservation_tool(READ, "Who holds paths")
async def who_holds(
    relay: AsyncRelayClient,
    path: Annotated[str | None, Field(max_length=500, description="a file; none: all")] = None,
    cursor: Cursor = None,
    *,
    here: Here,
) -> Annotated[CallToolResult, a.Holders]:
    """This repository's reservations (those covering a file, if given)."""
    path = _from_root(path) if path is not None else None
    page = await relay.reservations.list(workspace=here, path=path, limit=PAGE, cursor=cursor)
    held = a.lines(a.Held, page.reservations)
    return await answer(relay, a.Holders(reservations=held, next_cursor=page.next_cursor))
