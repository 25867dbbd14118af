"""The policies store: every named statement of ``queries/policies.sql`` run through its
store method on both adapters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from relay_api import models as m
from relay_core import records
from relay_core.ports import Storage

NOW = datetime(2026, 11, 28, 17, 40, 1, 5, tzinfo=UTC)


def policy(name: str, *, enabled: bool = True) -> m.Policy:
    return m.Policy(
        name=name,
        decision="approve",
        priority=1,
        enabled=enabled,
        match={"kind": "request", "title": {"prefix": "ls"}},
        limit={"count": 2, "per_seconds": 60} if enabled else None,
        version=1,
        created_at=NOW,
        updated_at=NOW,
    )


async def test_policies_versions_held_and_paged(storage: Storage) -> None:
    later = NOW + timedelta(minutes=1)
    async with storage.unit_of_work(write=True) as uow:
        on, off = await uow.policies.insert(policy("on")), await uow.policies.insert(policy("off"))
        await uow.policies.keep_version(
            records.PolicyVersion(
                policy_id=on.policy_id, version=1, policy=on.model_dump(mode="json"), created_at=NOW
            )
        )
        second = on.model_copy(update={"version": 2, "enabled": False, "updated_at": later})
        replaced = await uow.policies.next_version(second)
        assert await uow.policies.next_version(second) is None  # no longer at version 1
        await uow.commit()
    assert replaced == second and 0 < on.policy_id < off.policy_id
    async with storage.unit_of_work(write=True) as uow:
        assert await uow.policies.get(on.policy_id) == second
        assert await uow.policies.get(0) is None
        kept = await uow.policies.version_of(on.policy_id, 1)
        assert await uow.policies.version_of(on.policy_id, 2) is None
        assert await uow.policies.page(None, 1) == [second]
        assert await uow.policies.page(on.policy_id, 5) == [off]
        assert await uow.policies.enabled(5) == [off]
        assert await uow.policies.hold(off.policy_id, 1)
        assert not await uow.policies.hold(off.policy_id, 2)  # another version
        assert not await uow.policies.hold(on.policy_id, 2)  # disabled
    assert kept is not None and m.Policy.model_validate(kept.policy) == on


async def test_policy_uses_counted_in_their_window_and_forgotten(storage: Storage) -> None:
    async with storage.unit_of_work(write=True) as uow:
        limited = await uow.policies.insert(policy("limited"))
        for agent_id, seconds in [("ada", 0), ("ada", 30), ("bob", 50)]:
            await uow.policies.add_use(
                records.PolicyUse(
                    policy_id=limited.policy_id,
                    agent_id=agent_id,
                    approval_id=1,
                    decided_at=NOW + timedelta(seconds=seconds),
                )
            )
        await uow.commit()
    async with storage.unit_of_work(write=True) as uow:
        counted = [
            await uow.policies.count_uses(limited.policy_id, agent_id, NOW + timedelta(seconds=s))
            for agent_id, s in [(None, -1), ("ada", -1), ("ada", 0), ("bob", 0)]
        ]
        await uow.policies.forget_uses_before(limited.policy_id, NOW + timedelta(seconds=40))
        left = await uow.policies.count_uses(limited.policy_id, None, NOW - timedelta(days=1))
    assert counted == [3, 2, 1, 1] and left == 1
