"""Policies: the operator's rules for the routine, and the approvals they decide as they are
created (``open_approval``, used by every kind of approval).

The first enabled policy that matches decides, in ``Rule.order``. The decision is made in the
transaction that creates the approval, against the policy as it stands in that transaction: the
deciding policy's row is updated on its version and ``enabled`` (a policy changed meanwhile, on
any instance, makes the unit start again with the new book). That update also holds the policy
until the transaction ends, so a ``limit`` counts the decisions of every other transaction
before it: 50 concurrent approvals against ``count: 5`` are 5 decided by it, on any number of
instances.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from relay_api import models as m
from relay_api.errors import NotFound
from relay_api.params import DEFAULT_LIMIT
from relay_core import paging, records
from relay_core.auth import Caller
from relay_core.policy_rules import POLICIES, UNSCREENED, Facts, Rule, Rulebook, Screen
from relay_core.ports import StaleWrite, UnitOfWork
from relay_core.services import outbox
from relay_core.services.base import Service
from relay_core.services.events import announce_approval
from relay_core.services.follow_ups import timed


def facts_of(approval: m.Approval) -> Facts:
    """What the policies look at in an approval."""
    return Facts(
        approval.kind,
        approval.requested_by,
        approval.title,
        approval.payload,
        frozenset(option.label for option in approval.options or []),
        approval.multiple,
    )


async def screen(service: Service, facts: Facts) -> Screen:
    """The enabled policies' text conditions tested against ``facts`` off the event loop,
    before the transaction that opens the approval (``open_approval``)."""
    return await service.ctx.rulebook.screen(service.read, facts)


async def _within_limit(uow: UnitOfWork, rule: Rule, facts: Facts, at: datetime) -> bool:
    """Whether the rule's limit lets it decide for the requester at ``at``: counted per agent,
    or across all requesters for an enrollment, whose requester names itself."""
    limit = rule.policy.limit
    if limit is None:
        return True
    since = at - timedelta(seconds=limit["per_seconds"])
    requester = None if facts.kind == "enrollment" else facts.agent_id
    used = await uow.policies.count_uses(rule.policy.policy_id, requester, since)
    return used < int(limit["count"])


async def _forget_old_uses(uow: UnitOfWork, rule: Rule, now: datetime) -> None:
    """Drop the decisions no window counts any more (the table stays the size of one)."""
    limit = rule.policy.limit
    if limit is not None:
        since = now - timedelta(seconds=limit["per_seconds"])
        await uow.policies.forget_uses_before(rule.policy.policy_id, since)


async def deciding_rule(
    uow: UnitOfWork, rulebook: Rulebook, facts: Facts, screened: Screen, now: datetime
) -> Rule | None:
    """The first rule that matches and is within its limit, held for this transaction."""
    for rule in await rulebook.rules(uow):
        if rule.broken is not None or not screened.saw(rule):
            # It cannot be evaluated, or changed since the approval's text was screened: it
            # might have decided otherwise, so no policy below it decides. The operator does.
            return None
        if rule.mismatch(facts, now, screened) is not None:
            continue
        policy = rule.policy
        if not await uow.policies.hold(policy.policy_id, policy.version):
            # replaced or disabled since this process read it
            rulebook.forget()  # the unit starts again with the policies as they are
            raise StaleWrite(f"policy {policy.policy_id} changed")
        await _forget_old_uses(uow, rule, now)
        if await _within_limit(uow, rule, facts, now):
            return rule
    return None


async def speaks_to(
    uow: UnitOfWork, rulebook: Rulebook, facts: Facts, screened: Screen, now: datetime
) -> bool:
    """Whether any enabled policy has a say in ``facts``: one matches them, or one cannot be
    evaluated or changed since they were screened (it might match). What no policy speaks to
    needs no approval (an A2A call); what one does is opened as an approval for it to decide."""
    for rule in await rulebook.rules(uow):
        if rule.broken is not None or not screened.saw(rule):
            return True
        if rule.mismatch(facts, now, screened) is None:
            return True
    return False


async def open_approval(
    service: Service,
    uow: UnitOfWork,
    approval: m.Approval,
    screened: Screen,
    remind_after: int | None = None,
    escalate_after: int | None = None,
) -> m.Approval:
    """Store a new approval, decided at once by the first policy that matches (its text as
    ``screened`` found it), else pending for the operator (asked on the platforms through the
    outbox), to be reminded and escalated after
    the seconds an ``ask`` policy that matched gives, else those given, else the settings'. A
    decided one's subject (an enrollment, an intervention) is the caller's to carry the
    decision to, once it is bound to the approval."""
    now = approval.created_at
    rule = await deciding_rule(uow, service.ctx.rulebook, facts_of(approval), screened, now)
    if rule is not None and rule.policy.decision == "ask":
        remind_after = rule.policy.remind_after or remind_after
        escalate_after = rule.policy.escalate_after or escalate_after
        rule = None  # the operator decides
    if rule is not None:
        approval = approval.model_copy(update=_decision_of(rule.policy, now))
    else:
        approval = timed(service.ctx.config, approval, remind_after, escalate_after)
    stored = await uow.approvals.insert(approval)
    await announce_approval(uow, stored, "approval.requested", now)
    if rule is None:  # for the operator: shown on the platforms once this commits
        await outbox.ask(uow, service.ctx, stored, now)
        return stored
    policy = rule.policy
    if policy.limit is not None:
        await uow.policies.add_use(
            records.PolicyUse(
                policy_id=policy.policy_id,
                agent_id=stored.requested_by,
                approval_id=stored.approval_id,
                decided_at=now,
            )
        )
    await uow.actions.insert(
        m.Action(
            agent_id=stored.requested_by,
            action="approval.auto_decided",
            target=f"approval {stored.approval_id}",
            params={
                "approval_id": stored.approval_id,
                "policy_id": policy.policy_id,
                "version": policy.version,
                "policy": policy.name,
            },
            outcome=stored.status,
            created_at=now,
        )
    )
    await announce_approval(uow, stored, "approval.decided", now)
    return stored


def _decision_of(policy: m.Policy, now: datetime) -> dict[str, object]:
    """What the policy's decision sets on an approval."""
    status = {"approve": "approved", "reject": "rejected", "answer": "answered"}
    return {
        "status": status[policy.decision],
        "decided_at": now,
        "decided_by": f"policy:{policy.policy_id}@{policy.version}",
        "note": policy.note,
        "answer": policy.answer,
    }


def _stored(body: m.PolicyCreate) -> dict[str, object]:
    """A policy body as its row keeps it (its match as given, in JSON's names)."""
    return {
        "name": body.name,
        "decision": body.decision,
        "note": body.note,
        "priority": body.priority,
        "enabled": body.enabled,
        "match": body.match.model_dump(by_alias=True, exclude_unset=True),
        "limit": body.limit.model_dump() if body.limit is not None else None,
        "answer": body.answer,
        "remind_after": body.remind_after,
        "escalate_after": body.escalate_after,
    }


async def insert_policy(uow: UnitOfWork, body: m.PolicyCreate, now: datetime) -> m.Policy:
    """A new policy, version 1, kept as its first version; every process reads its book again."""
    policy = await uow.policies.insert(
        m.Policy(**_stored(body), version=1, created_at=now, updated_at=now)
    )
    await _keep_version(uow, policy)
    return policy


async def _keep_version(uow: UnitOfWork, policy: m.Policy) -> None:
    await uow.policies.keep_version(
        records.PolicyVersion(
            policy_id=policy.policy_id,
            version=policy.version,
            policy=policy.model_dump(mode="json"),
            created_at=policy.updated_at,
        )
    )
    uow.publish(POLICIES)


class PoliciesService(Service):
    """The operator's policies: create, replace, read (any version), enable, disable,
    simulate."""

    async def create(self, caller: Caller, body: m.PolicyCreate) -> m.Policy:
        """A new policy, version 1; it decides approvals created from now on."""

        async def work(uow: UnitOfWork) -> m.Policy:
            return await insert_policy(uow, body, self.now())

        return await self.write_answer(work)

    async def replace(self, caller: Caller, policy_id: int, body: m.PolicyCreate) -> m.Policy:
        """Replace a policy whole: its next version (earlier ones stay readable)."""

        async def work(uow: UnitOfWork) -> m.Policy:
            return await self._next_version(uow, await self._require(uow, policy_id), _stored(body))

        return await self.write(work)

    async def enable(self, caller: Caller, policy_id: int) -> m.Policy:
        """Let the policy decide again (a new version)."""
        return await self._switch(caller, policy_id, enabled=True)

    async def disable(self, caller: Caller, policy_id: int) -> m.Policy:
        """Stop the policy deciding (a new version); it stays readable."""
        return await self._switch(caller, policy_id, enabled=False)

    async def _switch(self, caller: Caller, policy_id: int, *, enabled: bool) -> m.Policy:
        async def work(uow: UnitOfWork) -> m.Policy:
            current = await self._require(uow, policy_id)
            if current.enabled == enabled:
                return current
            return await self._next_version(uow, current, {"enabled": enabled})

        return await self.write(work)

    async def _next_version(
        self, uow: UnitOfWork, current: m.Policy, values: dict[str, object]
    ) -> m.Policy:
        """The policy with ``values``, as its next version (the one before stays readable)."""
        updated = await uow.policies.next_version(
            current.model_copy(
                update={**values, "version": current.version + 1, "updated_at": self.now()}
            )
        )
        if updated is None:
            raise StaleWrite("policy changed")
        await _keep_version(uow, updated)
        return updated

    async def show(self, caller: Caller, policy_id: int, version: int | None = None) -> m.Policy:
        """The policy now, or as it was at ``version``."""

        async def work(uow: UnitOfWork) -> m.Policy:
            current = await self._require(uow, policy_id)
            if version is None or version == current.version:
                return current
            kept = await uow.policies.version_of(policy_id, version)
            if kept is None:
                raise NotFound(f"policy {policy_id} has no version {version}")
            return m.Policy.model_validate(kept.policy)

        return await self.read(work)

    async def list(
        self, caller: Caller, limit: int = DEFAULT_LIMIT, cursor: str | None = None
    ) -> m.PoliciesResponse:
        """Policies, oldest first; a page at a time."""

        async def work(uow: UnitOfWork) -> m.PoliciesResponse:
            found, next_cursor = paging.cut(
                await uow.policies.page(paging.key_after(cursor, int), limit + 1),
                limit,
                lambda policy: [policy.policy_id],
            )
            return m.PoliciesResponse(policies=found, next_cursor=next_cursor)

        return await self.read(work)

    async def simulate(self, caller: Caller, body: m.PolicySimulation) -> m.PolicyVerdict:
        """What the enabled policies would do with such an approval; creates nothing (a limit
        is counted as it stands)."""
        labels = frozenset(option.label for option in body.options or [])
        facts = Facts(body.kind, body.agent_id, body.title, body.payload, labels, body.multiple)
        at = body.at or self.now()
        screened = await screen(self, facts)

        async def work(uow: UnitOfWork) -> m.PolicyVerdict:
            skipped: list[str] = []
            for rule in await self.ctx.rulebook.rules(uow):
                policy = rule.policy
                if rule.broken is not None or not screened.saw(rule):
                    skipped.append(rule.broken or f"policy {policy.policy_id} {UNSCREENED}")
                    break
                why = rule.mismatch(facts, at, screened)
                if why is None and not await _within_limit(uow, rule, facts, at):
                    why = "its limit is reached"
                if why is None:
                    return m.PolicyVerdict(
                        decision=policy.decision,
                        policy_id=policy.policy_id,
                        version=policy.version,
                        reason=f"policy {policy.policy_id} ({policy.name}) matches",
                        answer=policy.answer,
                    )
                skipped.append(f"policy {policy.policy_id}: {why}")
            reason = "; ".join(skipped) if skipped else "no policy is enabled"
            return m.PolicyVerdict(decision="ask", reason=f"the operator decides ({reason})")

        return await self.read(work)

    @staticmethod
    async def _require(uow: UnitOfWork, policy_id: int) -> m.Policy:
        policy = await uow.policies.get(policy_id)
        if policy is None:
            raise NotFound(f"policy {policy_id} does not exist")
        return policy
