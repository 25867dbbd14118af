"""Interventions: diagnostic → approval → remediation, each step kept with its evidence.

The caller picks the id; the first operation that names one creates it. States:
``open`` → ``awaiting_approval`` → ``approved`` | ``rejected`` → ``remediated`` |
``remediation_failed``. A remediation may only be recorded while the approval stands approved.

An intervention belongs to the agent that created it and to the participants the operator
adds: only they (and the operator) may add diagnostics, ask for its approval or record its
remediation. Anyone may read it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from relay_api import models as m
from relay_api.errors import Conflict, NotFound, PermissionDenied
from relay_core import paging
from relay_core.auth import Caller
from relay_core.policy_rules import Facts
from relay_core.ports import StaleWrite, UnitOfWork
from relay_core.services.base import Service
from relay_core.services.events import emit, event_data
from relay_core.services.policies import open_approval, screen

OUTCOME: dict[m.RemediationStatus, m.InterventionStatus] = {
    "succeeded": "remediated",
    "failed": "remediation_failed",
    "partial": "remediation_failed",
}


async def apply_decision(
    uow: UnitOfWork, approval: m.Approval, now: datetime
) -> m.Intervention | None:
    """Carry an intervention approval's decision to the intervention; the intervention so
    updated (None when the approval was superseded, or the intervention changed)."""
    intervention = await uow.interventions.get(approval.subject_id)
    if intervention is None or intervention.approval_id != approval.approval_id:
        return None  # a superseded request: the decision stays on the approval alone
    # Only an approve or a reject is carried here: the two words are the same in both.
    status: Literal["approved", "rejected"] = (
        "approved" if approval.status == "approved" else "rejected"
    )
    updated = await uow.interventions.set_status(
        intervention.intervention_id, status, now, approval_status=status
    )
    if updated is not None:
        await emit(uow, "intervention.updated", updated.intervention_id, event_data(updated), now)
    return updated


MAX_PARTICIPANTS = 100


def require_member(caller: Caller, intervention: m.Intervention) -> None:
    """Refuse an agent that neither created the intervention nor was added to it."""
    if caller.is_operator or caller.agent_id == intervention.created_by:
        return
    if caller.agent_id not in intervention.participants:
        raise PermissionDenied(
            f"intervention '{intervention.intervention_id}' belongs to "
            f"'{intervention.created_by}'; the operator may add you as a participant"
        )


async def require_intervention(uow: UnitOfWork, intervention_id: str) -> m.Intervention:
    """The intervention, or NotFound."""
    intervention = await uow.interventions.get(intervention_id)
    if intervention is None:
        raise NotFound(f"intervention '{intervention_id}' does not exist")
    return intervention


async def latest(
    uow: UnitOfWork, intervention_id: str
) -> tuple[m.Diagnostic | None, m.InterventionAction | None]:
    """The newest diagnostic and the newest remediation action of an intervention."""
    diagnostics = await uow.interventions.newest_diagnostics([intervention_id])
    actions = await uow.interventions.newest_actions([intervention_id])
    return diagnostics.get(intervention_id), actions.get(intervention_id)


class InterventionsService(Service):
    """Interventions and their evidence."""

    async def _open(self, uow: UnitOfWork, intervention_id: str, caller: Caller) -> m.Intervention:
        """The intervention to change, made on first use; one of another agent's is refused."""
        intervention = await uow.interventions.get(intervention_id)
        if intervention is not None:
            require_member(caller, intervention)
            return intervention
        now = self.now()
        created = m.Intervention(
            intervention_id=intervention_id, created_by=caller.name, created_at=now, updated_at=now
        )
        return await uow.interventions.insert(created)

    async def request_approval(
        self,
        caller: Caller,
        intervention_id: str,
        body: m.InterventionApprovalRequest,
    ) -> m.InterventionApprovalResult:
        """Ask the operator to approve a proposed remediation (one pending request at a time)."""
        agent_id = caller.acting_as(body.agent_id)
        screened = await screen(self, Facts("intervention", agent_id, body.title, None))

        async def work(uow: UnitOfWork) -> m.InterventionApprovalResult:
            now = self.now()
            intervention = await self._open(uow, intervention_id, caller)
            if intervention.approval_status == "pending":
                raise Conflict(
                    f"intervention '{intervention_id}' already awaits approval "
                    f"{intervention.approval_id}"
                )
            approval = await open_approval(
                self,
                uow,
                m.Approval(
                    kind="intervention",
                    title=body.title,
                    detail=(
                        f"{body.reason}\n\nProposed action: {body.proposed_action}\n"
                        f"Risk: {body.risk}"
                    ),
                    requested_by=agent_id,
                    subject_id=intervention_id,
                    created_at=now,
                ),
                screened,
            )
            updated = await uow.interventions.await_approval(
                intervention, body, approval.approval_id, now
            )
            if updated is None:
                raise StaleWrite("intervention changed")
            if approval.status != "pending":  # a policy decided it (the decision says so)
                updated = await apply_decision(uow, approval, now) or updated
            else:
                await emit(uow, "intervention.updated", intervention_id, event_data(updated), now)
            return m.InterventionApprovalResult(
                approval_id=approval.approval_id, approval=approval, intervention=updated
            )

        return await self.write_answer(work)

    async def approval(self, caller: Caller, intervention_id: str) -> m.Approval:
        """The intervention's current approval request."""

        async def work(uow: UnitOfWork) -> m.Approval:
            intervention = await require_intervention(uow, intervention_id)
            approval = (
                await uow.approvals.get(intervention.approval_id)
                if intervention.approval_id is not None
                else None
            )
            if approval is None:
                raise NotFound(f"intervention '{intervention_id}' has no approval request")
            return approval

        return await self.read(work)

    async def diagnostic(
        self,
        caller: Caller,
        intervention_id: str,
        body: m.DiagnosticUpload,
    ) -> m.Diagnostic:
        """Keep a diagnostic; every upload is stored."""
        agent_id = caller.acting_as(body.agent_id)

        async def work(uow: UnitOfWork) -> m.Diagnostic:
            now = self.now()
            await self._open(uow, intervention_id, caller)
            await uow.interventions.touch(intervention_id, now)
            diagnostic = m.Diagnostic(
                **body.model_dump(exclude={"agent_id"}),
                intervention_id=intervention_id,
                agent_id=agent_id,
                created_at=now,
            )
            diagnostic = await uow.interventions.add_diagnostic(diagnostic)
            data = {"intervention_id": intervention_id, "diagnostic_id": diagnostic.diagnostic_id}
            await emit(uow, "intervention.diagnostic", intervention_id, data, now)
            return diagnostic

        return await self.write_answer(work)

    async def show_diagnostic(self, caller: Caller, intervention_id: str) -> m.Diagnostic:
        """The latest diagnostic."""

        async def work(uow: UnitOfWork) -> m.Diagnostic:
            await require_intervention(uow, intervention_id)
            diagnostic, _ = await latest(uow, intervention_id)
            if diagnostic is None:
                raise NotFound(f"intervention '{intervention_id}' has no diagnostic yet")
            return diagnostic

        return await self.read(work)

    async def list(
        self, caller: Caller, limit: int = 50, cursor: str | None = None
    ) -> m.InterventionsResponse:
        """Interventions, newest first, each with its latest diagnostic and last action; a page
        at a time."""

        before = None if cursor is None else paging.decode(cursor, (datetime, str))

        async def work(uow: UnitOfWork) -> m.InterventionsResponse:
            newest, next_cursor = paging.cut(
                await uow.interventions.page(before, limit + 1),
                limit,
                lambda intervention: [intervention.created_at, intervention.intervention_id],
            )
            ids = [intervention.intervention_id for intervention in newest]
            diagnostics = await uow.interventions.newest_diagnostics(ids)
            actions = await uow.interventions.newest_actions(ids)
            summaries = [
                m.InterventionSummary(
                    **intervention.model_dump(),
                    latest_diagnostic=diagnostics.get(intervention.intervention_id),
                    last_action=actions.get(intervention.intervention_id),
                )
                for intervention in newest
            ]
            return m.InterventionsResponse(interventions=summaries, next_cursor=next_cursor)

        return await self.read(work)

    async def action(
        self,
        caller: Caller,
        intervention_id: str,
        body: m.InterventionActionCreate,
    ) -> m.InterventionAction:
        """Record the real trace of a remediation; it needs an approved approval."""
        agent_id = caller.acting_as(body.agent_id)

        async def work(uow: UnitOfWork) -> m.InterventionAction:
            now = self.now()
            intervention = await require_intervention(uow, intervention_id)
            require_member(caller, intervention)
            if intervention.approval_status != "approved":
                raise Conflict(
                    f"intervention '{intervention_id}' is not approved "
                    f"(approval: {intervention.approval_status})"
                )
            recorded = await uow.interventions.add_action(
                m.InterventionAction(
                    **body.model_dump(exclude={"agent_id"}),
                    intervention_id=intervention_id,
                    agent_id=agent_id,
                    created_at=now,
                )
            )
            updated = await uow.interventions.set_status(intervention_id, OUTCOME[body.status], now)
            if updated is not None:
                data = event_data(updated)
                await emit(uow, "intervention.updated", intervention_id, data, now)
            return recorded

        return await self.write_answer(work)

    async def add_participant(
        self, caller: Caller, intervention_id: str, body: m.InterventionParticipant
    ) -> m.Intervention:
        """Let another agent change the intervention beside its creator (operator only)."""

        async def work(uow: UnitOfWork) -> m.Intervention:
            intervention = await require_intervention(uow, intervention_id)
            if await uow.agents.get(body.agent_id) is None:
                raise NotFound(f"agent '{body.agent_id}' does not exist")
            if body.agent_id in intervention.participants:
                return intervention
            if len(intervention.participants) >= MAX_PARTICIPANTS:
                raise Conflict(f"an intervention has at most {MAX_PARTICIPANTS} participants")
            now = self.now()
            updated = await uow.interventions.set_participants(
                intervention, [*intervention.participants, body.agent_id], now
            )
            if updated is None:
                raise StaleWrite("intervention changed")
            await emit(uow, "intervention.updated", intervention_id, event_data(updated), now)
            return updated

        return await self.write(work)
