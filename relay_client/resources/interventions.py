"""``client.interventions``: diagnostic → approval → remediation."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from relay_client._base import compact
from relay_client.resources._resource import AsyncResource, SyncResource
from relay_core import operations as ops
from relay_core.models import (
    Approval,
    Diagnostic,
    Intervention,
    InterventionAction,
    InterventionApprovalResult,
    InterventionsResponse,
    InterventionSummary,
)

Evidence = str | dict[str, Any]


class Interventions(SyncResource):
    """Interventions (sync)."""

    def request_approval(
        self,
        intervention_id: str,
        *,
        title: str,
        reason: str,
        proposed_action: str,
        risk: str | None = None,
        agent_id: str | None = None,
    ) -> InterventionApprovalResult:
        """Ask the operator to approve a proposed remediation."""
        body = compact(
            title=title,
            reason=reason,
            proposed_action=proposed_action,
            risk=risk,
            agent_id=agent_id,
        )
        return self._client.call(
            ops.INTERVENTIONS_REQUEST_APPROVAL, {"intervention_id": intervention_id}, json=body
        )

    def approval(self, intervention_id: str) -> Approval:
        """The intervention's current approval request."""
        return self._client.call(ops.INTERVENTIONS_APPROVAL, {"intervention_id": intervention_id})

    def add_participant(self, intervention_id: str, agent_id: str) -> Intervention:
        """Let ``agent_id`` change the intervention beside its creator (operator only)."""
        return self._client.call(
            ops.INTERVENTIONS_ADD_PARTICIPANT,
            {"intervention_id": intervention_id},
            json={"agent_id": agent_id},
        )

    def diagnostic(
        self,
        intervention_id: str,
        *,
        summary: str,
        content: Evidence,
        content_type: str | None = None,
        severity: str | None = None,
        agent_id: str | None = None,
    ) -> Diagnostic:
        """Upload a diagnostic (every upload is kept)."""
        body = compact(
            summary=summary,
            content=content,
            content_type=content_type,
            severity=severity,
            agent_id=agent_id,
        )
        return self._client.call(
            ops.INTERVENTIONS_DIAGNOSTIC, {"intervention_id": intervention_id}, json=body
        )

    def show_diagnostic(self, intervention_id: str) -> Diagnostic:
        """The latest diagnostic."""
        return self._client.call(
            ops.INTERVENTIONS_SHOW_DIAGNOSTIC, {"intervention_id": intervention_id}
        )

    def action(
        self,
        intervention_id: str,
        *,
        action: str,
        status: str,
        evidence_before: Evidence,
        evidence_after: Evidence,
        link: str | None = None,
        agent_id: str | None = None,
    ) -> InterventionAction:
        """Record the real trace of an approved remediation."""
        body = compact(
            action=action,
            status=status,
            evidence_before=evidence_before,
            evidence_after=evidence_after,
            link=link,
            agent_id=agent_id,
        )
        return self._client.call(
            ops.INTERVENTIONS_ACTION, {"intervention_id": intervention_id}, json=body
        )

    def list(self, *, limit: int | None = None, cursor: str | None = None) -> InterventionsResponse:
        """One page of interventions, newest first, each with its latest diagnostic and last
        action."""
        params = compact(limit=limit, cursor=cursor)
        return self._client.call(ops.INTERVENTIONS_LIST, params=params)

    def iterate(self, *, limit: int | None = None) -> Iterator[InterventionSummary]:
        """Every intervention, newest first, page after page."""
        for page in self._pages(ops.INTERVENTIONS_LIST, compact(limit=limit)):
            yield from page.interventions


class AsyncInterventions(AsyncResource):
    """Interventions (async)."""

    async def request_approval(
        self,
        intervention_id: str,
        *,
        title: str,
        reason: str,
        proposed_action: str,
        risk: str | None = None,
        agent_id: str | None = None,
    ) -> InterventionApprovalResult:
        """Ask the operator to approve a proposed remediation."""
        body = compact(
            title=title,
            reason=reason,
            proposed_action=proposed_action,
            risk=risk,
            agent_id=agent_id,
        )
        return await self._client.call(
            ops.INTERVENTIONS_REQUEST_APPROVAL, {"intervention_id": intervention_id}, json=body
        )

    async def approval(self, intervention_id: str) -> Approval:
        """The intervention's current approval request."""
        return await self._client.call(
            ops.INTERVENTIONS_APPROVAL, {"intervention_id": intervention_id}
        )

    async def add_participant(self, intervention_id: str, agent_id: str) -> Intervention:
        """Let ``agent_id`` change the intervention beside its creator (operator only)."""
        return await self._client.call(
            ops.INTERVENTIONS_ADD_PARTICIPANT,
            {"intervention_id": intervention_id},
            json={"agent_id": agent_id},
        )

    async def diagnostic(
        self,
        intervention_id: str,
        *,
        summary: str,
        content: Evidence,
        content_type: str | None = None,
        severity: str | None = None,
        agent_id: str | None = None,
    ) -> Diagnostic:
        """Upload a diagnostic (every upload is kept)."""
        body = compact(
            summary=summary,
            content=content,
            content_type=content_type,
            severity=severity,
            agent_id=agent_id,
        )
        return await self._client.call(
            ops.INTERVENTIONS_DIAGNOSTIC, {"intervention_id": intervention_id}, json=body
        )

    async def show_diagnostic(self, intervention_id: str) -> Diagnostic:
        """The latest diagnostic."""
        return await self._client.call(
            ops.INTERVENTIONS_SHOW_DIAGNOSTIC, {"intervention_id": intervention_id}
        )

    async def action(
        self,
        intervention_id: str,
        *,
        action: str,
        status: str,
        evidence_before: Evidence,
        evidence_after: Evidence,
        link: str | None = None,
        agent_id: str | None = None,
    ) -> InterventionAction:
        """Record the real trace of an approved remediation."""
        body = compact(
            action=action,
            status=status,
            evidence_before=evidence_before,
            evidence_after=evidence_after,
            link=link,
            agent_id=agent_id,
        )
        return await self._client.call(
            ops.INTERVENTIONS_ACTION, {"intervention_id": intervention_id}, json=body
        )

    async def list(
        self, *, limit: int | None = None, cursor: str | None = None
    ) -> InterventionsResponse:
        """One page of interventions, newest first, each with its latest diagnostic and last
        action."""
        params = compact(limit=limit, cursor=cursor)
        return await self._client.call(ops.INTERVENTIONS_LIST, params=params)

    async def iterate(self, *, limit: int | None = None) -> AsyncIterator[InterventionSummary]:
        """Every intervention, newest first, page after page."""
        async for page in self._pages(ops.INTERVENTIONS_LIST, compact(limit=limit)):
            for item in page.interventions:
                yield item
