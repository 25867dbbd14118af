"""The outbox: everything Relay tells the outside world after a commit, added in the same
transaction as the change and sent afterwards by one sender (``relay_server.sender``) with
one retry policy (``RELAY_WEBHOOK_RETRY_SCHEDULE``).

Two kinds of row share it. A webhook delivery (``services.webhooks`` adds and hands them out).
A platform's job: an approval shown with a way to decide it, its card edited once decided, a
reminder, a notification's first answer shown, a room post mirrored. The request that causes
one answers once it commits; the job runs within moments, and a restart in between only delays
it: it stays pending until an attempt's outcome is kept (sent again after a crash mid-attempt,
which a platform shows as the same card edited twice at worst).

A job reads what it shows when it runs, not when it was added: a card asked after its approval
was decided is not shown, and an edit shows the decision as it stands.
"""

from __future__ import annotations

import builtins
import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from relay_api import models as m
from relay_api.errors import BridgeError
from relay_core import records
from relay_core import webhooks as hooks
from relay_core.ports import Bridge, UnitOfWork
from relay_core.services.base import BridgeHealth, Context, Service
from relay_core.services.deliveries import Subject
from relay_core.topics import OUTBOX

log = logging.getLogger("relay.bridges")


@dataclass(frozen=True)
class Outcome:
    """How an attempt went: the receiver's status (None: no answer, or a platform's job),
    what went wrong (None: it was done), and when to try again at the soonest (the receiver's
    ``Retry-After``, in seconds)."""

    status_code: int | None
    error: str | None = None
    retry_after: float | None = None

    @property
    def succeeded(self) -> bool:
        if self.status_code is None:
            return self.error is None
        return 200 <= self.status_code < 300


DONE = Outcome(None)


def after_attempt(
    attempts: int, outcome: Outcome, schedule: Sequence[float], now: datetime
) -> dict[str, Any]:
    """A row's fields once its ``attempts``-th attempt had ``outcome`` (``record_attempt``'s
    keywords): done, failed for good (the schedule spent, or a webhook's endpoint gone), or due
    again after the schedule's next delay."""
    values: dict[str, Any] = {
        "status": "pending",
        "last_status_code": outcome.status_code,
        "last_error": outcome.error,
        "next_attempt_at": None,
    }
    if outcome.succeeded:
        values["status"] = "succeeded"
        return values
    delay = (
        None
        if outcome.status_code == 410
        else hooks.next_delay(schedule, attempts, outcome.retry_after)
    )
    if delay is None:
        values["status"] = "failed"
    else:
        values["next_attempt_at"] = now + timedelta(seconds=delay)
    return values


def showing(bridges: Sequence[Bridge]) -> tuple[Bridge, ...]:
    """The platforms that show the operator something of their own (all but the local one)."""
    return tuple(bridge for bridge in bridges if bridge.capabilities.cards)


async def add_jobs(uow: UnitOfWork, jobs: Sequence[records.PlatformJob], now: datetime) -> None:
    """Add platforms' jobs to the outbox in this unit, and wake the sender once it commits."""
    for job in jobs:
        await uow.outbox.add_platform_job(job, now)
    if jobs:
        uow.publish(OUTBOX)


def asking_first(ctx: Context) -> tuple[Bridge, ...]:
    """The platforms that ask as an approval is created: all but the later steps of the
    escalation (``follow_ups``), which ask when it reaches them."""
    later = set(ctx.config.escalation_steps[1:])
    return tuple(bridge for bridge in ctx.bridges if bridge.name not in later)


async def ask(
    uow: UnitOfWork,
    ctx: Context,
    approval: m.Approval,
    now: datetime,
    bridges: Sequence[Bridge] | None = None,
) -> None:
    """Have the platforms (by default, those that ask first) show ``approval`` with a way to
    decide it, once this unit commits."""
    asking = asking_first(ctx) if bridges is None else bridges
    jobs = [records.PlatformJob(b.name, "ask", approval.approval_id) for b in showing(asking)]
    await add_jobs(uow, jobs, now)


async def settle(uow: UnitOfWork, approval: m.Approval, now: datetime) -> None:
    """Have every platform that shows ``approval`` show how it was decided, once this unit
    commits. A card still being asked is settled by its ask (``_keep_asked``)."""
    await add_jobs(uow, await on_posts(uow, "settle", "approval", approval.approval_id), now)


async def remind(uow: UnitOfWork, approval: m.Approval, now: datetime) -> None:
    """Have every platform that shows ``approval`` remind the operator of it, once this unit
    commits."""
    await add_jobs(uow, await on_posts(uow, "remind", "approval", approval.approval_id), now)


async def on_posts(
    uow: UnitOfWork,
    kind: records.PlatformJobKind,
    subject: Subject,
    subject_id: int,
    text: str | None = None,
    among: Sequence[Bridge] | None = None,
) -> list[records.PlatformJob]:
    """A job of ``kind`` for each platform (of ``among``, where given) with a message that
    shows the subject."""
    names = None if among is None else {bridge.name for bridge in among}
    posts = await uow.posts.of_subjects(subject, [subject_id])
    shown = dict.fromkeys(
        p.bridge for p in posts if p.status == "sent" and (names is None or p.bridge in names)
    )
    return [records.PlatformJob(bridge, kind, subject_id, text=text) for bridge in shown]


class OutboxService(Service):
    """The platforms' side of the outbox: what is due, running a job, keeping how it went."""

    @functools.cached_property
    def _schedule(self) -> tuple[float, ...]:
        return hooks.retry_schedule(self.ctx.config.webhook_retry_schedule)

    async def due(
        self, limit: int, busy: frozenset[tuple[str, str, int]] = frozenset()
    ) -> builtins.list[records.PlatformJob]:
        """Up to ``limit`` jobs due now, oldest first, one a subject and platform: none whose
        subject is in ``busy`` (a job of it in flight) or has an older job due (it runs first:
        a card is asked before it is edited)."""
        found = await self.read(lambda uow: uow.outbox.due_platform_jobs(self.now(), limit * 2))
        taken: builtins.list[records.PlatformJob] = []
        seen = set(busy)
        for job in found:
            if job_key(job) not in seen and len(taken) < limit:
                taken.append(job)
            seen.add(job_key(job))
        return taken

    async def run(self, job: records.PlatformJob) -> Outcome:
        """Do ``job`` on its platform: done (also when there is nothing left to show), or the
        platform's error. A platform no longer configured here fails it."""
        bridge = self.ctx.bridge_named(job.bridge)
        if bridge is None:
            return Outcome(None, f"the platform {job.bridge} is not configured here")
        try:
            await self._do(bridge, job)
        except BridgeError as exc:
            self.ctx.health[bridge.name] = BridgeHealth(
                ok=False, last_error=exc.detail, failed_at=self.ctx.clock()
            )
            return Outcome(None, exc.detail)
        self.ctx.health[bridge.name] = BridgeHealth()
        return DONE

    async def _do(self, bridge: Bridge, job: records.PlatformJob) -> None:
        if job.kind == "mirror":
            await bridge.mirror(job.target or "", job.text or "")
        elif job.kind == "answered":
            notification = await self.read(lambda uow: uow.notifications.get(job.subject_id))
            if notification is not None:
                for platform_id in await self._shown(bridge, "notification", job.subject_id):
                    await bridge.answered(platform_id, notification.text, job.text or "")
        else:
            approval = await self.read(lambda uow: uow.approvals.get(job.subject_id))
            if approval is not None:
                await self._approval_job(bridge, job, approval)

    async def _approval_job(
        self, bridge: Bridge, job: records.PlatformJob, approval: m.Approval
    ) -> None:
        """Ask, settle or remind ``approval`` on ``bridge``, as it stands now."""
        if job.kind == "ask":
            if approval.status == "pending":
                await self._keep_asked(bridge, approval, await bridge.ask(approval))
            return
        for platform_id in await self._shown(bridge, "approval", approval.approval_id):
            if job.kind == "settle":
                await bridge.settle(platform_id, approval)
            elif approval.status == "pending":
                await bridge.remind(platform_id, approval)

    async def _shown(self, bridge: Bridge, subject: Subject, subject_id: int) -> list[str]:
        """The platform's messages that show the subject."""
        posts = await self.read(lambda uow: uow.posts.of_subjects(subject, [subject_id]))
        return [
            p.platform_message_id
            for p in posts
            if p.bridge == bridge.name and p.status == "sent" and p.platform_message_id
        ]

    async def _keep_asked(self, bridge: Bridge, approval: m.Approval, shown: str | None) -> None:
        """Keep the message that shows ``approval`` as a post (the approval keeps its first);
        decided meanwhile, it is settled next."""
        if shown is None:
            return
        now = self.now()
        post = records.Post(
            subject="approval",
            subject_id=approval.approval_id,
            bridge=bridge.name,
            platform_message_id=shown,
            status="sent",
            created_at=now,
        )

        async def work(uow: UnitOfWork) -> None:
            await uow.posts.insert(post)
            if approval.platform_message_id is None:
                await uow.approvals.set_platform_message(approval.approval_id, shown)
            current = await uow.approvals.get(approval.approval_id)
            if current is not None and current.status != "pending":
                settling = records.PlatformJob(bridge.name, "settle", approval.approval_id)
                await add_jobs(uow, [settling], now)

        await self.write(work)

    async def attempted(self, outcomes: Sequence[tuple[records.PlatformJob, Outcome]]) -> None:
        """Keep how jobs went, in one transaction; a job failed for good is logged."""
        schedule = self._schedule

        async def work(uow: UnitOfWork) -> None:
            now = self.now()
            for job, outcome in outcomes:
                values = after_attempt(job.attempts + 1, outcome, schedule, now)
                kept = await uow.outbox.record_attempt(job.delivery_id, job.attempts, **values)
                if kept and values["status"] == "failed":
                    log.warning(
                        "%s of %s %s on %s failed for good: %s",
                        job.kind,
                        "notification" if job.kind == "answered" else "approval",
                        job.subject_id,
                        job.bridge,
                        outcome.error,
                    )

        await self.write(work)


def job_key(job: records.PlatformJob) -> tuple[str, str, int]:
    """What a job is about on its platform: jobs of one key run one at a time, in order."""
    if job.kind == "mirror":  # a room's posts reach its thread in order
        return job.bridge, f"thread {job.target}", 0
    subject = "notification" if job.kind == "answered" else "approval"
    return job.bridge, subject, job.subject_id
