"""The interventions store: interventions with their diagnostics and remediation actions.
Each method runs one named statement of ``sqlite/queries/interventions.sql`` or
``postgres/queries/interventions.sql``."""

from __future__ import annotations

from datetime import datetime

from relay_api import models as m
from relay_core.storage.json_text import encode_json
from relay_core.storage.queries import Statements


class InterventionsStore:
    """Interventions and their evidence in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def get(self, intervention_id: str) -> m.Intervention | None:
        return await self._sql.record(
            m.Intervention, "get_intervention", intervention_id=intervention_id
        )

    async def insert(self, intervention: m.Intervention) -> m.Intervention:
        await self._sql.run("insert_intervention", **vars(intervention))
        return intervention

    async def await_approval(
        self,
        read: m.Intervention,
        request: m.InterventionApprovalRequest,
        approval_id: int,
        now: datetime,
    ) -> m.Intervention | None:
        """The intervention ``read`` awaiting approval ``approval_id`` of ``request``'s action,
        if its approval's state is still as read; else None, and nothing changed."""
        return await self._sql.record(
            m.Intervention,
            "intervention_awaits_approval",
            intervention_id=read.intervention_id,
            approval_status_read=read.approval_status,
            title=request.title,
            risk=request.risk,
            proposed_action=request.proposed_action,
            approval_id=approval_id,
            now=now,
        )

    async def set_status(
        self,
        intervention_id: str,
        status: m.InterventionStatus,
        now: datetime,
        approval_status: m.InterventionApprovalStatus | None = None,
    ) -> m.Intervention | None:
        """The intervention in ``status`` (and its approval in ``approval_status``, if
        given); None if there is none."""
        return await self._sql.record(
            m.Intervention,
            "set_intervention_status",
            intervention_id=intervention_id,
            status=status,
            approval_status=approval_status,
            now=now,
        )

    async def touch(self, intervention_id: str, now: datetime) -> None:
        """The intervention changed at ``now``."""
        await self._sql.run("touch_intervention", intervention_id=intervention_id, now=now)

    async def set_participants(
        self, read: m.Intervention, participants: list[str], now: datetime
    ) -> m.Intervention | None:
        """The intervention ``read`` with ``participants``, if unchanged since it was read;
        else None, and nothing changed."""
        return await self._sql.record(
            m.Intervention,
            "set_intervention_participants",
            intervention_id=read.intervention_id,
            updated_at_read=read.updated_at,
            participants=participants,
            now=now,
        )

    async def page(self, before: tuple[datetime, str] | None, limit: int) -> list[m.Intervention]:
        """Up to ``limit`` interventions, newest first, after the one ``before`` names by
        its creation time and id (None: from the newest)."""
        before_at, before_id = before if before is not None else (None, None)
        return await self._sql.records(
            m.Intervention,
            "page_interventions",
            before_at=before_at,
            before_id=before_id,
            limit=limit,
        )

    async def add_diagnostic(self, diagnostic: m.Diagnostic) -> m.Diagnostic:
        """Store a new diagnostic; ``diagnostic`` is given its id and returned."""
        diagnostic.diagnostic_id = await self._sql.value(
            "insert_diagnostic",
            **{**vars(diagnostic), "content": encode_json(diagnostic.content)},
        )
        return diagnostic

    async def newest_diagnostics(self, intervention_ids: list[str]) -> dict[str, m.Diagnostic]:
        """The newest diagnostic of each of the interventions, by intervention (those with
        any)."""
        found = await self._sql.records(
            m.Diagnostic, "newest_diagnostics", intervention_ids=intervention_ids
        )
        return {diagnostic.intervention_id: diagnostic for diagnostic in found}

    async def add_action(self, action: m.InterventionAction) -> m.InterventionAction:
        """Store a new remediation action; ``action`` is given its id and returned."""
        action.action_id = await self._sql.value(
            "insert_intervention_action",
            **{
                **vars(action),
                "evidence_before": encode_json(action.evidence_before),
                "evidence_after": encode_json(action.evidence_after),
            },
        )
        return action

    async def newest_actions(self, intervention_ids: list[str]) -> dict[str, m.InterventionAction]:
        """The newest remediation action of each of the interventions, by intervention (those
        with any)."""
        found = await self._sql.records(
            m.InterventionAction, "newest_intervention_actions", intervention_ids=intervention_ids
        )
        return {action.intervention_id: action for action in found}
