"""Reservations: who is editing what in a repository the agents share.

An agent reserves paths of a workspace (git wildmatch patterns), exclusive or shared, for a
time to live. A request is granted whole or not at all: it is refused (``Contested``, naming
each reservation in the way) when a pattern overlaps (``path_patterns.overlap``) another
agent's exclusive reservation, or, for an exclusive request, anyone else's; each holder in
the way hears of it (``reservation.contested``). A workspace's grants run one at a time on
every instance (``hold_workspace``), so of 20 agents asking at once for the same paths, one
holds them. An agent holds at most so many reservations and patterns in a workspace, and a
workspace at most so many in all (``DomainSettings``); a request past them is a conflict.

A request is weighed against every active reservation of its workspace before the write, by
lookup (``HeldPatterns``), and confirmed in the write against what changed since: the ones
granted since (their ids are higher) and the ones in the way (still active?). So a workspace's
thousands of patterns cost the writer, which every other write waits for, a query or two.

A reservation ends when released, at its deadline (``expired``, exactly once: a guarded
update, by the sweep or by the grant that finds it), or, bound to a task, once its holder no
longer holds the task (released by the sweep).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from relay_api import models as m
from relay_api.errors import Conflict, Contested, InvalidInput, NotFound, PermissionDenied
from relay_api.params import DEFAULT_LIMIT
from relay_core import paging
from relay_core.auth import Caller
from relay_core.path_patterns import HeldPatterns, covers, invalid
from relay_core.ports import UnitOfWork
from relay_core.services.base import SWEEP_BATCH, Service
from relay_core.services.events import emit
from relay_core.services.tasks import require_holder, require_task


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


@dataclass
class Weighed:
    """What a reservation request was weighed against: the active reservations up to an id,
    what of them is in its way, how many its holder and its workspace hold (and the patterns
    they hold), and why it would be too many (None: it would not)."""

    up_to: int = 0
    in_the_way: dict[int, m.Reservation] = field(default_factory=dict)
    holder: int = 0
    holder_patterns: int = 0
    workspace: int = 0
    workspace_patterns: int = 0
    too_many: str | None = None


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

        seen = await self.read(lambda uow: uow.reservations.active(body.workspace))
        weighed = self.weigh(holder, body, seen, self.now())
        if weighed.too_many is not None:
            raise Conflict(weighed.too_many)

        async def work(uow: UnitOfWork) -> m.Reservation | list[m.Reservation]:
            now = self.now()
            if body.task_id is not None:  # one its holder holds now
                require_holder(await require_task(uow, body.task_id), holder)
            await uow.reservations.hold_workspace(body.workspace)
            since = await uow.reservations.active_after(body.workspace, weighed.up_to)
            more = self.weigh(holder, body, since, now, weighed)
            if more.too_many is not None:
                raise Conflict(more.too_many)
            contested = []
            for other in more.in_the_way.values():
                found = await uow.reservations.get(other.reservation_id)
                if found is None or found.status != "active":
                    continue  # ended since it was weighed
                if found.expires_at <= now:
                    await _end(uow, found, "expired", now)
                else:
                    contested.append(found)
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

    def weigh(
        self,
        holder: str,
        body: m.ReservationCreate,
        active: list[m.Reservation],
        now: datetime,
        before: Weighed | None = None,
    ) -> Weighed:
        """What ``active`` (the workspace's, or those granted since ``before`` weighed the
        rest) says of the request: the reservations in its way, and whether it would take the
        holder or the workspace past their caps."""
        live = [r for r in active if r.expires_at > now]
        weighed = before or Weighed()
        weighed.up_to = max((r.reservation_id for r in active), default=weighed.up_to)
        for other in live:
            weighed.workspace += 1
            weighed.workspace_patterns += len(other.paths)
            if other.holder == holder:
                weighed.holder += 1
                weighed.holder_patterns += len(other.paths)
        config = self.ctx.config
        caps = (
            (weighed.holder, 1, config.reservations_per_agent, f"{holder} holds", "reservations"),
            (
                weighed.holder_patterns,
                len(body.paths),
                config.reservation_patterns_per_agent,
                f"{holder}'s reservations hold",
                "patterns",
            ),
            (weighed.workspace, 1, config.reservations_per_workspace, "it has", "reservations"),
            (
                weighed.workspace_patterns,
                len(body.paths),
                config.reservation_patterns_per_workspace,
                "its reservations hold",
                "patterns",
            ),
        )
        for held, adding, cap, whose, what in caps:
            if held + adding > cap and weighed.too_many is None:
                weighed.too_many = (
                    f"nothing reserved: in workspace {body.workspace}, {whose} {held} active"
                    f" {what}, and at most {cap} may be (the server's settings): release some"
                    " first"
                )
        in_the_way = HeldPatterns(
            (pattern, other)
            for other in live
            if other.holder != holder and (other.exclusive or body.exclusive)
            for pattern in other.paths
        )
        for wanted in body.paths:
            for other in in_the_way.overlapping(wanted):
                weighed.in_the_way.setdefault(other.reservation_id, other)
        return weighed

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
