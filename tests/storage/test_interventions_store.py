"""The interventions store: every named statement of ``queries/interventions.sql`` run
through its store method on both adapters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from relay_api import models as m
from relay_core.ports import Storage

NOW = datetime(2026, 11, 28, 18, 0, 1, 5, tzinfo=UTC)


def opened(intervention_id: str, at: datetime) -> m.Intervention:
    return m.Intervention(
        intervention_id=intervention_id, created_by="ada", created_at=at, updated_at=at
    )


async def test_interventions_await_approval_change_once_and_page(storage: Storage) -> None:
    later = NOW + timedelta(minutes=1)
    request = m.InterventionApprovalRequest(
        title="restart", reason="stuck", proposed_action="systemctl restart x", risk="low"
    )
    async with storage.unit_of_work(write=True) as uow:
        first = await uow.interventions.insert(opened("i1", NOW))
        tied = await uow.interventions.insert(opened("i2", NOW))
        newest = await uow.interventions.insert(opened("i3", later))
        awaiting = await uow.interventions.await_approval(first, request, 7, later)
        assert await uow.interventions.await_approval(first, request, 8, later) is None
        joined = await uow.interventions.set_participants(tied, ["bob"], later)
        assert await uow.interventions.set_participants(tied, ["cy"], later) is None
        approved = await uow.interventions.set_status("i1", "approved", later, "approved")
        remediated = await uow.interventions.set_status("i1", "remediated", later)
        assert await uow.interventions.set_status("none", "approved", later) is None
        await uow.interventions.touch("i3", later + timedelta(seconds=1))
        await uow.commit()
    assert awaiting is not None and (awaiting.status, awaiting.approval_id) == (
        "awaiting_approval",
        7,
    )
    assert (awaiting.risk, awaiting.approval_status) == ("low", "pending")
    assert joined is not None and joined.participants == ["bob"]
    assert approved is not None and approved.approval_status == "approved"
    assert remediated is not None and remediated.approval_status == "approved"
    async with storage.unit_of_work(write=False) as uow:
        assert await uow.interventions.get("i1") == remediated
        touched = await uow.interventions.get("i3")
        assert await uow.interventions.get("i0") is None
        assert await uow.interventions.page(None, 2) == [touched, joined]
        assert await uow.interventions.page((NOW, "i2"), 5) == [remediated]
        assert await uow.interventions.page((later, "i3"), 1) == [joined]
    assert touched is not None and touched.updated_at == later + timedelta(seconds=1)
    assert newest.created_at == touched.created_at


async def test_evidence_keeps_strings_and_objects_and_the_newest_is_found(
    storage: Storage,
) -> None:
    async with storage.unit_of_work(write=True) as uow:
        for intervention_id in ("i1", "i2"):
            await uow.interventions.insert(opened(intervention_id, NOW))
        diagnostics = [
            await uow.interventions.add_diagnostic(
                m.Diagnostic(
                    intervention_id="i1", agent_id="x", summary="s", content=c, created_at=NOW
                )
            )
            for c in ("plain text", {"disk": {"free": 3}})
        ]
        action = await uow.interventions.add_action(
            m.InterventionAction(
                intervention_id="i2",
                agent_id="x",
                action="restart",
                status="succeeded",
                evidence_before="down",
                evidence_after={"up": True},
                created_at=NOW,
            )
        )
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        newest_diagnostics = await uow.interventions.newest_diagnostics(["i1", "i2"])
        newest_actions = await uow.interventions.newest_actions(["i1", "i2"])
        assert await uow.interventions.newest_actions([]) == {}
    assert diagnostics[0].diagnostic_id < diagnostics[1].diagnostic_id
    assert newest_diagnostics == {"i1": diagnostics[1]}
    assert newest_actions == {"i2": action}
    assert (action.evidence_before, action.evidence_after) == ("down", {"up": True})
