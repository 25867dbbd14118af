"""Approvals: the operator's queue. Deciding one drives its subject in the same transaction.

Any agent may ask (an approval of kind ``request``): what it asks can name what it is about to
do, so only that agent and the operator see it; to any other agent it does not exist. A request
may carry a deadline: once ``expires_at`` passes unanswered it is ``expired``, decided by
``deadline``, exactly once (a guarded update), by the sweep or by whichever read or decision
finds it first.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import NamedTuple

from relay_api import models as m
from relay_api.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from relay_api.params import DEFAULT_LIMIT
from relay_api.prompts import unchangeable, with_command
from relay_core import paging, trace_context
from relay_core.auth import Caller
from relay_core.policy_rules import Facts
from relay_core.ports import StaleWrite, UnitOfWork
from relay_core.remembered_policies import remembered_policy
from relay_core.services import enroll, interventions, outbox
from relay_core.services.base import SWEEP_BATCH, Service
from relay_core.services.deliveries import subject_of
from relay_core.services.events import announce_approval
from relay_core.services.follow_ups import escalate_due, remind_due
from relay_core.services.policies import insert_policy, open_approval, screen
from relay_core.topics import feed_topic

DEADLINE = "deadline"  # decided_by of an approval nobody answered in time

Approvals = list[m.Approval]  # (inside the service, ``list`` names its method)
Due = Callable[[UnitOfWork], Awaitable[Approvals]]


def may_see(caller: Caller, approval: m.Approval) -> bool:
    """Whether the caller may know of the approval at all."""
    return caller.is_operator or approval.audience in (m.EVERYONE, caller.name)


async def require_approval(
    uow: UnitOfWork, approval_id: int, caller: Caller | None = None
) -> m.Approval:
    """The approval, or NotFound (also for a caller who may not see it)."""
    approval = await uow.approvals.get(approval_id)
    if approval is None or (caller is not None and not may_see(caller, approval)):
        raise NotFound(f"approval {approval_id} does not exist")
    return approval


async def expire_if_due(uow: UnitOfWork, approval: m.Approval, now: datetime) -> m.Approval:
    """A pending approval whose deadline has passed, stored as expired (announced once: only
    the update that finds it pending wins); any other approval as it is."""
    if approval.status != "pending" or approval.expires_at is None or approval.expires_at > now:
        return approval
    expired = await uow.approvals.decide(approval.approval_id, "expired", now, DEADLINE)
    if expired is None:
        raise StaleWrite("approval decided concurrently")
    await announce_approval(uow, expired, "approval.decided", now)
    await outbox.settle(uow, expired, now)
    return expired


async def with_applicants(uow: UnitOfWork, approvals: list[m.Approval]) -> list[m.Approval]:
    """The approvals, each enrollment's with the agent asking to join (one query)."""
    ids = [int(a.subject_id) for a in approvals if a.kind == "enrollment"]
    if not ids:
        return approvals
    found = {e.enroll_id: e for e in await uow.enrollments.by_id(ids)}

    def applicant(approval: m.Approval) -> m.Approval:
        enrollment = found.get(int(approval.subject_id)) if approval.kind == "enrollment" else None
        if enrollment is None:
            return approval
        who = m.Applicant.model_validate(enrollment, from_attributes=True)
        return approval.model_copy(update={"applicant": who})

    return [applicant(a) for a in approvals]


def changed_payload(approval: m.Approval, given: m.JsonObject | None) -> m.JsonObject | None:
    """The payload the operator approves ``approval`` with, when it is not as asked (None when
    unchanged); a conflict where nothing could run a changed one."""
    if given is None or given == approval.payload:
        return None
    if approval.kind == "a2a":
        try:  # Relay sends it: what it would send must be a message
            m.A2ASend.model_validate({**(approval.payload or {}), **given})
        except ValueError as invalid:
            message = f"not an A2A message to send: {invalid}"
            raise InvalidInput("payload", message, "body") from None
        return given
    if approval.kind != "request":
        raise Conflict(
            f"approval {approval.approval_id} is an {approval.kind}'s: only an agent's request"
            " or an A2A call is approved with a changed payload"
        )
    why = unchangeable(approval.payload)
    if why is not None:
        raise Conflict(f"approval {approval.approval_id} is approved or rejected as asked: {why}")
    return given


def answer_of(question: m.Approval, given: list[str]) -> list[str]:
    """``given`` as the answer to ``question``: labels among its options (one, unless it takes
    several), or the operator's own words where it allows them; invalid input otherwise."""
    labels = [option.label for option in question.options or []]
    chosen = list(dict.fromkeys(given))  # a label given twice is chosen once
    if all(label in labels for label in chosen):
        if len(chosen) > 1 and not question.multiple:
            raise InvalidInput("answer", "this question takes one answer", "body")
        return chosen
    if question.allow_other and len(chosen) == 1:
        return chosen  # the operator's own words
    offered = ", ".join(repr(label) for label in labels)
    raise InvalidInput(
        "answer", f"the answer is not among the question's options: {offered}", "body"
    )


def _require_fits(body: m.ApprovalDecision, outcome: m.ApprovalStatus) -> None:
    """Refuse what only the other decision takes: a changed payload or command, or
    ``remember``, on a rejection; ``interrupt`` on an approval."""
    approving = outcome == "approved"
    for name, given in (("payload", body.payload), ("command", body.command)):
        if given is not None and not approving:
            message = f"only an approval takes a changed {name}; a rejection's note says why"
            raise InvalidInput(name, message, "body")
    if body.remember and not approving:
        raise InvalidInput("remember", "only an approval is remembered as a policy", "body")
    if body.interrupt and outcome != "rejected":
        raise InvalidInput("interrupt", "only a rejection asks the agent to stop", "body")


def given_payload(approval: m.Approval, body: m.ApprovalDecision) -> m.JsonObject | None:
    """The payload the decision gives: its own, or the request's with the command it gives."""
    if body.command is None:
        return body.payload
    try:
        return with_command(approval.payload, body.command)
    except ValueError as exc:
        raise Conflict(f"approval {approval.approval_id}: {exc}") from None


class Settled(NamedTuple):
    """What a decision's (or a withdrawal's) unit left: the approval as it stands, and whether
    this unit decided it."""

    approval: m.Approval
    decided: bool


async def settle_pending(
    uow: UnitOfWork,
    found: m.Approval,
    now: datetime,
    decide: Callable[[m.Approval], Awaitable[m.Approval | None]],
) -> Settled:
    """``found`` decided by ``decide`` (given it as still pending; None: it was not),
    announced, and shown so on the platforms once committed, if it is pending and its deadline
    has not passed; else as it stands (expired by this unit, if its deadline passed)."""
    approval = await expire_if_due(uow, found, now)
    if approval.status != "pending":
        return Settled(approval, decided=False)
    decided = await decide(approval)
    if decided is None:
        raise StaleWrite("approval decided concurrently")
    await announce_approval(uow, decided, "approval.decided", now)
    await outbox.settle(uow, decided, now)
    return Settled(decided, decided=True)


class ApprovalsService(Service):
    """List, show and decide approvals."""

    async def list(
        self,
        caller: Caller,
        status: m.ApprovalStatus | None = None,
        limit: int = DEFAULT_LIMIT,
        cursor: str | None = None,
    ) -> m.ApprovalsResponse:
        """Approvals, newest first, optionally of one status; a page at a time. An agent's
        page leaves out other agents' requests."""
        seen_by = None if caller.is_operator else caller.name
        before = paging.key_after(cursor, int)

        async def work(uow: UnitOfWork) -> m.ApprovalsResponse:
            newest, next_cursor = paging.cut(
                await uow.approvals.page(status, seen_by, before, limit + 1),
                limit,
                lambda approval: [approval.approval_id],
            )
            shown = await with_applicants(uow, newest)
            return m.ApprovalsResponse(approvals=shown, next_cursor=next_cursor)

        return await self.read(work)

    async def request(self, caller: Caller, body: m.ApprovalRequest) -> m.Approval:
        """An agent asks the operator to approve something; every platform shows it."""
        if caller.agent_id is None:
            raise PermissionDenied(
                "an approval request is an agent's: the operator asks as one with X-Agent-ID"
            )
        agent_id = caller.agent_id
        screened = await screen(self, Facts(body.kind, agent_id, body.title, body.payload))

        async def work(uow: UnitOfWork) -> m.Approval:
            now = self.now()
            deadline = body.expires_in
            if body.task_id is not None and await uow.tasks.get(body.task_id) is None:
                raise NotFound(f"task {body.task_id} (task_id) does not exist")
            return await open_approval(
                self,
                uow,
                m.Approval(
                    kind=body.kind,
                    title=body.title,
                    detail=body.detail,
                    payload=body.payload,
                    options=body.options,
                    multiple=body.multiple,
                    allow_other=body.allow_other,
                    requested_by=agent_id,
                    subject_id=agent_id,
                    audience=agent_id,
                    task_id=body.task_id,
                    traceparent=trace_context.current(),
                    created_at=now,
                    expires_at=now + timedelta(seconds=deadline) if deadline else None,
                ),
                screened,
                body.remind_after,
                body.escalate_after,
            )

        return await self.write_answer(work)

    async def show(self, caller: Caller, approval_id: int, wait: float = 0) -> m.Approval:
        """One approval; with ``wait``, once it is decided (or expires), or after ``wait``
        seconds still pending."""

        async def fetch() -> m.Approval:
            approval = await self.read(look)
            if approval.status == "pending" and approval.expires_at is not None:
                if approval.expires_at <= self.now():
                    expired = await self._expire(lambda uow: this(uow))
                    approval = expired[-1] if expired else await self.read(look)
            return approval

        async def this(uow: UnitOfWork) -> Approvals:
            return [await require_approval(uow, approval_id)]

        async def look(uow: UnitOfWork) -> m.Approval:
            [shown] = await with_applicants(uow, [await require_approval(uow, approval_id, caller)])
            return shown

        first = await fetch()
        if not wait or first.status != "pending":
            return first
        # Its events go to the agent that asked: only those wake the wait.
        topics = (feed_topic(first.requested_by),)
        return await self.long_poll(topics, wait, fetch, lambda a: a.status != "pending")

    async def _expire(self, due: Due) -> Approvals:
        """Store the expiry of the approvals ``due`` finds that are past their deadline (shown
        on the platforms through the outbox); those it expired (none decided meanwhile)."""

        async def work(uow: UnitOfWork) -> Approvals:
            newly: Approvals = []
            for approval in await due(uow):
                expired = await expire_if_due(uow, approval, self.now())
                if expired is not approval:  # this unit expired it
                    newly.append(expired)
            return newly

        return await self.write(work)

    async def sweep(self, limit: int = SWEEP_BATCH) -> int:
        """Expire up to ``limit`` pending approvals whose deadline has passed, and show it on
        the platforms; then remind and escalate up to ``limit`` each that are due
        (``follow_ups``); how many of all three."""

        async def due(uow: UnitOfWork) -> Approvals:
            return await uow.approvals.past_deadline(self.now(), limit)

        expired = len(await self._expire(due)) if await self.read(due) else 0
        return expired + await remind_due(self, limit) + await escalate_due(self, limit)

    async def approve(
        self, caller: Caller, approval_id: int, body: m.ApprovalDecision
    ) -> m.Approval:
        """Approve; approving twice answers the same with ``changed`` false, approving a decided
        one is a conflict."""
        return await self._decide(caller, approval_id, body, "approved")

    async def reject(
        self, caller: Caller, approval_id: int, body: m.ApprovalDecision
    ) -> m.Approval:
        """Reject; rejecting twice answers the same with ``changed`` false, rejecting a decided
        one is a conflict."""
        return await self._decide(caller, approval_id, body, "rejected")

    async def _decide(
        self, caller: Caller, approval_id: int, body: m.ApprovalDecision, outcome: m.ApprovalStatus
    ) -> m.Approval:
        _require_fits(body, outcome)
        decided_by = body.decided_by or caller.name
        # The policy is made from the request as asked, which never changes: off the unit, so
        # that the shell parser does not run inside the transaction.
        remembered = (
            await self._remembered(approval_id, body, decided_by) if body.remember else None
        )

        async def work(uow: UnitOfWork) -> Settled:
            now = self.now()
            found = await require_approval(uow, approval_id)
            if found.kind == "question" and outcome == "approved":
                raise Conflict(
                    f"approval {approval_id} is a question: answer it"
                    f" (POST /v1/approvals/{approval_id}/answer), or reject it"
                )
            if found.kind == "enrollment" and found.status == "pending":
                found = await enroll.expire_approval_if_due(uow, found, now, self.ctx.config)

            async def decide(approval: m.Approval) -> m.Approval | None:
                policy = await insert_policy(uow, remembered, now) if remembered else None
                decided = await uow.approvals.decide(
                    approval_id,
                    outcome,
                    now,
                    decided_by,
                    body.note,
                    approved_payload=changed_payload(approval, given_payload(approval, body)),
                    remembered_policy_id=policy.policy_id if policy else None,
                    interrupt=body.interrupt,
                )
                if decided is not None and decided.kind == "enrollment":
                    await enroll.apply_decision(uow, decided, now)
                elif decided is not None and decided.kind == "intervention":
                    await interventions.apply_decision(uow, decided, now)
                return decided

            return await settle_pending(uow, found, now, decide)

        # An expiry found here is committed, not rolled back with the conflict it causes.
        return await self._settled(await self.write(work), outcome)

    async def answer(self, caller: Caller, approval_id: int, body: m.ApprovalAnswer) -> m.Approval:
        """Answer a question; the first answer stands (the same answer again answers it with
        ``changed`` false), another answer, or answering a decided one, is a conflict."""

        async def work(uow: UnitOfWork) -> Settled:
            now = self.now()
            found = await require_approval(uow, approval_id)
            if found.kind != "question":
                raise Conflict(
                    f"approval {approval_id} is no question (its kind: {found.kind}): approve"
                    " or reject it"
                )

            async def answered(question: m.Approval) -> m.Approval | None:
                return await uow.approvals.decide(
                    approval_id,
                    "answered",
                    now,
                    body.decided_by or caller.name,
                    body.note,
                    answer=answer_of(question, body.answer),
                )

            return await settle_pending(uow, found, now, answered)

        settled = await self._settled(await self.write(work), "answered")
        if settled.changed is False and settled.answer != answer_of(settled, body.answer):
            given = ", ".join(settled.answer or [])
            raise Conflict(f"approval {approval_id} is already answered ({given})")
        return settled

    async def _remembered(
        self, approval_id: int, body: m.ApprovalDecision, decided_by: str
    ) -> m.PolicyCreate | None:
        """The policy an approval with ``remember`` creates, if the approval is still pending."""
        asked = await self.read(lambda uow: require_approval(uow, approval_id))
        if asked.status != "pending":
            return None  # answered as it stands by the unit: already decided, or expired
        scope = body.remember_scope or m.RememberScope()
        approved = changed_payload(asked, given_payload(asked, body))
        return remembered_policy(asked, approved, scope, decided_by)

    async def _settled(self, settled: Settled, outcome: m.ApprovalStatus) -> m.Approval:
        """The answer to a decision (or a withdrawal) whose unit committed: ``changed`` said;
        a conflict when the approval was already otherwise (or expired on the way)."""
        approval = settled.approval
        if settled.decided:
            return approval.model_copy(update={"changed": True})
        approval_id = approval.approval_id
        if approval.status == "expired":
            raise Conflict(
                f"approval {approval_id} expired: nobody answered it before its deadline"
                if approval.decided_by == DEADLINE
                else f"approval {approval_id} is already expired"
            )
        if approval.status != outcome:
            raise Conflict(f"approval {approval_id} is already {approval.status}")
        return approval.model_copy(update={"changed": False})

    async def withdraw(
        self, caller: Caller, approval_id: int, body: m.ApprovalWithdrawal
    ) -> m.Approval:
        """Withdraw a pending request, as the agent that asked it: ``withdrawn``, decided by
        nobody, shown so on every platform. Twice answers the same with ``changed`` false; a
        decided one, or anything but a request, is a conflict."""

        async def work(uow: UnitOfWork) -> Settled:
            now = self.now()
            found = await require_approval(uow, approval_id, caller)
            if found.requested_by != caller.name:
                raise PermissionDenied(
                    f"only the agent that asked may withdraw approval {approval_id}"
                )
            if found.kind not in ("request", "question"):
                raise Conflict(
                    f"approval {approval_id} is no request: only a request or a question is"
                    " withdrawn"
                )

            async def withdrawn(_: m.Approval) -> m.Approval | None:
                return await uow.approvals.decide(approval_id, "withdrawn", now, None, body.reason)

            return await settle_pending(uow, found, now, withdrawn)

        return await self._settled(await self.write(work), "withdrawn")

    async def by_platform_message(self, bridge: str, platform_message_id: str) -> m.Approval | None:
        """The approval shown as this message on that platform, if any."""

        async def work(uow: UnitOfWork) -> m.Approval | None:
            approval_id = await subject_of(uow, "approval", bridge, platform_message_id)
            if approval_id is not None:
                return await uow.approvals.get(approval_id)
            # Shown before posts were kept: the approval names its message itself.
            return await uow.approvals.on_platform(platform_message_id)

        return await self.read(work)
