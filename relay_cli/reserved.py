"""Which paths other agents hold in a workspace: what the commit guard and the edit hooks ask
Relay before a change is made. Both run on every commit or edit, so they ask with the hook's
own requests (``relay_cli.hook_http``) and read the reservations as the API answers them."""

from __future__ import annotations

from relay_api import OPERATOR
from relay_cli.hook_http import JsonObject, Wire

Blocked = list[tuple[str, JsonObject]]  # a path, and the reservation in its way


def acting_agent(wire: Wire) -> str | None:
    """The agent the wire acts as: the one named, else its token's, as the server says (a
    prefix proves nothing); None for the operator."""
    if wire.config.agent_id is not None:
        return wire.config.agent_id
    caller = str(wire.call("GET", "/v1/status")["caller"])
    return None if caller == OPERATOR else caller


def covering(wire: Wire, workspace: str, path: str, holder: str | None = None) -> list[JsonObject]:
    """The active reservations of ``workspace`` that cover ``path`` (``holder``'s alone)."""
    asked = {"workspace": workspace, "path": path, "holder": holder, "limit": 1000}
    found: list[JsonObject] = wire.call("GET", "/v1/reservations", query=asked)["reservations"]
    return found


def held_by_others(wire: Wire, workspace: str, paths: list[str], acting: str | None) -> Blocked:
    """Each path another agent than ``acting`` holds exclusively, with its reservation."""
    found = []
    for path in paths:
        for reservation in covering(wire, workspace, path):
            if reservation["exclusive"] and reservation["holder"] != acting:
                found.append((path, reservation))
                break
    return found


def until(held: JsonObject, shape: str) -> str:
    """When ``held`` lapses, in UTC, as ``shape`` (``strftime``) says."""
    from datetime import datetime  # loaded only for a path held: not on every edit

    return datetime.fromisoformat(str(held["expires_at"])).strftime(shape)


def in_the_way(path: str, held: JsonObject) -> str:
    """``path``, its holder, why and until when, as a person reads it."""
    why = f" for {held['reason']}" if held.get("reason") else ""
    task = f" (task {held['task_id']})" if held.get("task_id") is not None else ""
    return (
        f"{path}: reserved by {held['holder']}{why}{task} until"
        f" {until(held, '%Y-%m-%d %H:%M')} UTC (#{held['reservation_id']})"
    )
