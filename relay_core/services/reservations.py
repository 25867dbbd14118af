"""Reservations: who is editing what in a repository the agents share.

An agent reserves paths of a workspace (git wildmatch patterns), exclusive or shared, for a
time to live. A request is granted whole or not at all: it is refused (``Contested``, naming
each reservation in the way) when a pattern overlaps (``path_patterns.overlap``) another
agent's exclusive reservation, or, for an exclusive request, anyone else's; each holder in
the way hears of it (``reservation.contested``). A workspace's grants run one at a time on
every instance (``hold_workspace``), so of 20 agents asking at once for the same paths, one
holds them. A reservation ends when released, at its deadline (``expired``, exactly once: a
guarded update, by the sweep or by the grant that finds it), or, bound to a task, once its
holder no longer holds the task (released by the sweep).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from relay_api import models as m
from relay_api.errors import Conflict, Contested, InvalidInput, NotFound, PermissionDenied
from relay_api.params import DEFAULT_LIMIT
from relay_core import paging
from relay_core.auth import Caller
from relay_core.path_patterns import covers, invalid, overlapping
from relay_core.ports import UnitOfWork
from relay_core.services.base import SWEEP_BATCH, Service
from relay_core.services.events import emit
from relay_core.services.tasks import require_holder, require_task

MAX_ACTIVE = 10_000  # active reservations of one workspace a grant weighs against


def as_of(reservation: m.Reservation, now: datetime) -> m.Reservation:
    """The reservation as it stands at ``now``: past its deadline, expired (which the sweep
    stores within a second)."""
    if reservation.status == "active" and reservation.expires_at <= now:
        return reservation.model_copy(
            update={"status": "expired", "ended_at": reservation.expires_at}
        )
    return reservation


def _data(reservation: m.Reservation, **more: Any) -> dict[str, Any]:
    """What a reservation's event says of it."""
    return {
        "reservation_id": reservation.reservation_id,
        "workspace": reservation.workspace,
        "holder": reservation.holder,
        "paths": reservation.paths,
        "exclusive": reservation.exclusive,
        "expires_at": reservation.expires_at.isoformat(),
        **more,
    }


async def _end(
    uow: UnitOfWork,
    reservation: m.Reservation,
    status: m.ReservationStatus,
    now: datetime,
    **more: Any,
) -> bool:
    """End an active reservation once (a guarded update) and announce it; whether this did."""
    if not await uow.reservations.end(reservation.reservation_id, status, now):
        return False
    kind = "reservation.expired" if status == "expired" else "reservation.released"
    await emit(uow, kind, reservation.reservation_id, _data(reservation, **more), now)
    return True


def _contested(reservation: m.Reservation) -> dict[str, Any]:
    return m.Contested.model_validate(reservation, from_attributes=True).model_dump(mode="json")


class ReservationsService(Service):
    """Reserve, list, renew and release paths."""

    async def create(self, caller: Caller, body: m.ReservationCreate) -> m.Reservation:
        """Reserve paths of a workspace for the calling agent (the operator acts as one with
        X-Agent-ID): all of them, or none, and ``Contested`` naming what stands in the way."""
        if caller.agent_id is None:
            raise PermissionDenied(
                "a reservation is an agent's: the operator reserves as one with X-Agent-ID"
            )
        holder = caller.agent_id
        for pattern in body.paths:
            why = invalid(pattern)
            if why is not None:
                raise InvalidInput("paths", why, "body")

        async def work(uow: UnitOfWork) -> m.Reservation | list[m.Reservation]:
            now = self.now()
            if body.task_id is not None:  # one its holder holds now
                require_holder(await require_task(uow, body.task_id), holder)
            await uow.reservations.hold_workspace(body.workspace)
            live = []
            for other in await uow.reservations.active(body.workspace, MAX_ACTIVE):
                if other.expires_at <= now:
                    await _end(uow, other, "expired", now)
                else:
                    live.append(other)
            contested = [
                other
                for other in live
                if other.holder != holder
                and (other.exclusive or body.exclusive)
                and overlapping(body.paths, other.paths)
            ]
            if contested:
                for other in contested:
                    wanted = _data(other, wanted_by=holder, wanted=body.paths, why=body.reason)
                    await emit(
                        uow,
                        "reservation.contested",
                        other.reservation_id,
                        wanted,
                        now,
                        other.holder,
                    )
                return contested
            granted = m.Reservation(
                workspace=body.workspace,
                paths=body.paths,
                exclusive=body.exclusive,
                holder=holder,
                reason=body.reason,
                task_id=body.task_id,
                created_at=now,
                expires_at=now + timedelta(seconds=body.ttl_seconds),
            )
            granted.reservation_id = await uow.reservations.insert(granted)
            await emit(uow, "reservation.granted", granted.reservation_id, _data(granted), now)
            return granted

        answer = await self.write_answer(work)
        if isinstance(answer, list):
            names = ", ".join(f"{r.holder} (#{r.reservation_id})" for r in answer)
            raise Contested(
                f"nothing reserved: {names} already hold overlapping paths",
                [_contested(r) for r in answer],
            )
        return answer

    async def list(
        self,
        caller: Caller,
        workspace: str | None = None,
        holder: str | None = None,
        path: str | None = None,
        include_ended: bool = False,
        limit: int = DEFAULT_LIMIT,
        cursor: str | None = None,
    ) -> m.ReservationsResponse:
        """Reservations, newest first: the active ones unless ``include_ended``, of a
        workspace and a holder where given, and of those the ones that cover ``path`` (a page
        may then hold fewer than ``limit``)."""
        before = paging.key_after(cursor, int)

        async def work(uow: UnitOfWork) -> m.ReservationsResponse:
            now = self.now()
            rows = await uow.reservations.page(workspace, holder, include_ended, before, limit + 1)
            page, next_cursor = paging.cut(rows, limit, lambda r: [r.reservation_id])
            shown = [as_of(r, now) for r in page]
            shown = [r for r in shown if include_ended or r.status == "active"]
            if path is not None:
                shown = [r for r in shown if any(covers(p, path) for p in r.paths)]
            return m.ReservationsResponse(reservations=shown, next_cursor=next_cursor)

        return await self.read(work)

    async def show(self, caller: Caller, reservation_id: int) -> m.Reservation:
        """One reservation, as it stands."""

        async def work(uow: UnitOfWork) -> m.Reservation:
            return as_of(await _require(uow, reservation_id), self.now())

        return await self.read(work)

    async def renew(
        self, caller: Caller, reservation_id: int, body: m.ReservationRenew
    ) -> m.Reservation:
        """Hold an active reservation ``ttl_seconds`` more from now, as its holder (or the
        operator); an ended one is a conflict."""

        async def work(uow: UnitOfWork) -> m.Reservation:
            now = self.now()
            found = await _require(uow, reservation_id)
            caller.require_self(found.holder)
            expires_at = now + timedelta(seconds=body.ttl_seconds)
            if not await uow.reservations.renew(reservation_id, expires_at, now):
                ended = as_of(found, now)
                raise Conflict(f"reservation {reservation_id} is {ended.status}: reserve again")
            return await _require(uow, reservation_id)

        return await self.write(work)

    async def release(self, caller: Caller, reservation_id: int) -> m.Reservation:
        """Release a reservation, as its holder or the operator; one already ended is answered
        as it is."""

        async def work(uow: UnitOfWork) -> m.Reservation:
            now = self.now()
            found = await _require(uow, reservation_id)
            caller.require_self(found.holder)
            if found.status == "active":
                status: m.ReservationStatus = "expired" if found.expires_at <= now else "released"
                await _end(uow, found, status, now, by=caller.name)
            return await _require(uow, reservation_id)

        return await self.write(work)

    async def sweep(self, limit: int = SWEEP_BATCH) -> int:
        """End up to ``limit`` reservations past their deadline, and up to ``limit`` bound to
        a task their holder no longer holds; how many."""

        async def work(uow: UnitOfWork) -> int:
            now = self.now()
            ended = 0
            for due in await uow.reservations.past_deadline(now, limit):
                ended += await _end(uow, due, "expired", now)
            for bound in await uow.reservations.of_ended_tasks(limit):
                ended += await _end(uow, bound, "released", now, by=f"task {bound.task_id}")
            return ended

        found = await self.read(lambda uow: _any_due(uow, self.now()))
        return await self.write(work) if found else 0


async def _any_due(uow: UnitOfWork, now: datetime) -> bool:
    """Whether the sweep has anything to end (read first: most sweeps find nothing)."""
    return bool(await uow.reservations.past_deadline(now, 1)) or bool(
        await uow.reservations.of_ended_tasks(1)
    )


async def _require(uow: UnitOfWork, reservation_id: int) -> m.Reservation:
    found = await uow.reservations.get(reservation_id)
    if found is None:
        raise NotFound(f"reservation {reservation_id} does not exist")
    return found
