"""The reservations store: the paths of a workspace the agents hold. Each method runs one
named statement of ``sqlite/queries/reservations.sql`` or ``postgres/queries/reservations.sql``."""

from __future__ import annotations

from datetime import datetime

from relay_api import models as m
from relay_core.storage.queries import Statements


class ReservationsStore:
    """Reservations in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def get(self, reservation_id: int) -> m.Reservation | None:
        return await self._sql.record(
            m.Reservation, "get_reservation", reservation_id=reservation_id
        )

    async def insert(self, reservation: m.Reservation) -> int:
        """Store a new active reservation; its id."""
        reservation_id: int = await self._sql.value("insert_reservation", **vars(reservation))
        return reservation_id

    async def hold_workspace(self, workspace: str) -> None:
        """Take the workspace's grants one at a time until this unit ends (every instance)."""
        await self._sql.value("hold_workspace", workspace=workspace)

    async def active(self, workspace: str) -> list[m.Reservation]:
        """Every active reservation of ``workspace``, oldest first (as many as its caps let
        be, and those past their deadline that the sweep has not ended yet)."""
        return await self._sql.records(m.Reservation, "active_reservations", workspace=workspace)

    async def active_after(self, workspace: str, after: int) -> list[m.Reservation]:
        """The active reservations of ``workspace`` granted after the one ``after``."""
        return await self._sql.records(
            m.Reservation, "active_reservations_after", workspace=workspace, after=after
        )

    async def page(
        self,
        workspace: str | None,
        holder: str | None,
        include_ended: bool,
        before: int | None,
        limit: int,
    ) -> list[m.Reservation]:
        """Up to ``limit`` reservations, newest first, before ``before`` (None: from the
        newest), of ``workspace`` and ``holder`` (None: any), active ones unless
        ``include_ended``."""
        return await self._sql.records(
            m.Reservation,
            "page_reservations",
            workspace=workspace,
            holder=holder,
            include_ended=include_ended,
            before=before,
            limit=limit,
        )

    async def renew(self, reservation_id: int, expires_at: datetime, now: datetime) -> bool:
        """Hold an active reservation, not past its deadline at ``now``, until ``expires_at``;
        whether it was."""
        renewed = await self._sql.run(
            "renew_reservation", reservation_id=reservation_id, expires_at=expires_at, now=now
        )
        return renewed > 0

    async def end(
        self, reservation_id: int, status: m.ReservationStatus, ended_at: datetime
    ) -> bool:
        """End an active reservation (``released``, ``expired``); whether this did."""
        ended = await self._sql.run(
            "end_reservation", reservation_id=reservation_id, status=status, ended_at=ended_at
        )
        return ended > 0

    async def past_deadline(self, now: datetime, limit: int) -> list[m.Reservation]:
        """Up to ``limit`` active reservations whose deadline is at or before ``now``."""
        return await self._sql.records(
            m.Reservation, "reservations_past_deadline", now=now, limit=limit
        )

    async def of_ended_tasks(self, limit: int) -> list[m.Reservation]:
        """Up to ``limit`` active reservations bound to a task their holder no longer holds."""
        return await self._sql.records(m.Reservation, "reservations_of_ended_tasks", limit=limit)
