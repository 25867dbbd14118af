"""``client.interventions``: diagnostic → approval → remediation."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from relay_client._base import compact
from relay_client.resources._resource import AsyncResource, SyncResource, segment
from relay_core.models import (
    Approval,
    Diagnostic,
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
        path = f"/v1/interventions/{segment(intervention_id)}/request-approval"
        body = compact(
            title=title,
            reason=reason,
            proposed_action=proposed_action,
            risk=risk,
            agent_id=agent_id,
        )
        return self._client.request(
            "POST", path, InterventionApprovalResult, json=body, idempotent=True
        )

    def approval(self, intervention_id: str) -> Approval:
        """The intervention's current approval request."""
        path = f"/v1/interventions/{segment(intervention_id)}/approval"
        return self._client.request("GET", path, Approval)

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
        path = f"/v1/interventions/{segment(intervention_id)}/diagnostic"
        body = compact(
            summary=summary,
            content=content,
            content_type=content_type,
            severity=severity,
            agent_id=agent_id,
        )
        return self._client.request("POST", path, Diagnostic, json=body, idempotent=True)

    def show_diagnostic(self, intervention_id: str) -> Diagnostic:
        """The latest diagnostic."""
        path = f"/v1/interventions/{segment(intervention_id)}/diagnostic"
        return self._client.request("GET", path, Diagnostic)

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
        path = f"/v1/interventions/{segment(intervention_id)}/action"
        body = compact(
            action=action,
            status=status,
            evidence_before=evidence_before,
            evidence_after=evidence_after,
            link=link,
            agent_id=agent_id,
        )
        return self._client.request("POST", path, InterventionAction, json=body, idempotent=True)

    def list(self, *, limit: int | None = None, cursor: str | None = None) -> InterventionsResponse:
        """One page of interventions, newest first, each with its latest diagnostic and last
        action."""
        params = compact(limit=limit, cursor=cursor)
        return self._client.request(
            "GET", "/v1/interventions", InterventionsResponse, params=params
        )

    def iterate(self, *, limit: int | None = None) -> Iterator[InterventionSummary]:
        """Every intervention, newest first, page after page."""
        for page in self._pages("/v1/interventions", InterventionsResponse, compact(limit=limit)):
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
        path = f"/v1/interventions/{segment(intervention_id)}/request-approval"
        body = compact(
            title=title,
            reason=reason,
            proposed_action=proposed_action,
            risk=risk,
            agent_id=agent_id,
        )
        return await self._client.request(
            "POST", path, InterventionApprovalResult, json=body, idempotent=True
        )

    async def approval(self, intervention_id: str) -> Approval:
        """The intervention's current approval request."""
        path = f"/v1/interventions/{segment(intervention_id)}/approval"
        return await self._client.request("GET", path, Approval)

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
        path = f"/v1/interventions/{segment(intervention_id)}/diagnostic"
        body = compact(
            summary=summary,
            content=content,
            content_type=content_type,
            severity=severity,
            agent_id=agent_id,
        )
        return await self._client.request("POST", path, Diagnostic, json=body, idempotent=True)

    async def show_diagnostic(self, intervention_id: str) -> Diagnostic:
        """The latest diagnostic."""
        path = f"/v1/interventions/{segment(intervention_id)}/diagnostic"
        return await self._client.request("GET", path, Diagnostic)

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
        path = f"/v1/interventions/{segment(intervention_id)}/action"
        body = compact(
            action=action,
            status=status,
            evidence_before=evidence_before,
            evidence_after=evidence_after,
            link=link,
            agent_id=agent_id,
        )
        return await self._client.request(
            "POST", path, InterventionAction, json=body, idempotent=True
        )

    async def list(
        self, *, limit: int | None = None, cursor: str | None = None
    ) -> InterventionsResponse:
        """One page of interventions, newest first, each with its latest diagnostic and last
        action."""
        params = compact(limit=limit, cursor=cursor)
        return await self._client.request(
            "GET", "/v1/interventions", InterventionsResponse, params=params
        )

    async def iterate(self, *, limit: int | None = None) -> AsyncIterator[InterventionSummary]:
        """Every intervention, newest first, page after page."""
        async for page in self._pages(
            "/v1/interventions", InterventionsResponse, compact(limit=limit)
        ):
            for item in page.interventions:
                yield item
