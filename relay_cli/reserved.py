"""Which paths other agents hold in a workspace: what the commit guard and the edit hooks ask
Relay before a change is made."""

from __future__ import annotations

from relay_api.models import OPERATOR, Reservation
from relay_client import RelayClient

Blocked = list[tuple[str, Reservation]]  # a path, and the reservation in its way


def acting_agent(client: RelayClient) -> str | None:
    """The agent the client acts as: the one named, else its token's, as the server says (a
    prefix proves nothing); None for the operator."""
    if client.config.agent_id is not None:
        return client.config.agent_id
    caller = client.status().caller
    return None if caller == OPERATOR else caller


def held_by_others(
    client: RelayClient, workspace: str, paths: list[str], acting: str | None
) -> Blocked:
    """Each path another agent than ``acting`` holds exclusively, with its reservation."""
    found = []
    for path in paths:
        held = client.reservations.list(workspace=workspace, path=path, limit=1000)
        for reservation in held.reservations:
            if reservation.exclusive and reservation.holder != acting:
                found.append((path, reservation))
                break
    return found


def in_the_way(path: str, held: Reservation) -> str:
    """``path``, its holder, why and until when, as a person reads it."""
    why = f" for {held.reason}" if held.reason else ""
    task = f" (task {held.task_id})" if held.task_id is not None else ""
    return (
        f"{path}: reserved by {held.holder}{why}{task} until"
        f" {held.expires_at:%Y-%m-%d %H:%M} UTC (#{held.reservation_id})"
    )
