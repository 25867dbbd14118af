"""The policies store: the operator's policies, their kept versions and the decisions their
limits count. Each method runs one named statement of ``sqlite/queries/policies.sql`` or
``postgres/queries/policies.sql``."""

from __future__ import annotations

from datetime import datetime

from relay_api import models as m
from relay_core import records
from relay_core.storage.queries import Statements


class PoliciesStore:
    """Policies in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def get(self, policy_id: int) -> m.Policy | None:
        return await self._sql.record(m.Policy, "get_policy", policy_id=policy_id)

    async def insert(self, policy: m.Policy) -> m.Policy:
        """Store a new policy; ``policy`` is given its id and returned."""
        policy.policy_id = await self._sql.value("insert_policy", **vars(policy))
        return policy

    async def hold(self, policy_id: int, version: int) -> bool:
        """Whether the policy is still enabled at ``version``; if so it is held (no other
        transaction changes it) until this one ends."""
        return await self._sql.run("hold_policy", policy_id=policy_id, version=version) > 0

    async def next_version(self, policy: m.Policy) -> m.Policy | None:
        """``policy`` stored whole as its next version if the one before is still stored;
        else None, and nothing changed."""
        return await self._sql.record(m.Policy, "next_policy_version", **vars(policy))

    async def page(self, after: int | None, limit: int) -> list[m.Policy]:
        """Up to ``limit`` policies by id after ``after`` (None: from the first)."""
        return await self._sql.records(m.Policy, "page_policies", after=after, limit=limit)

    async def enabled(self, limit: int) -> list[m.Policy]:
        """Up to ``limit`` enabled policies, by id."""
        return await self._sql.records(m.Policy, "enabled_policies", limit=limit)

    async def keep_version(self, kept: records.PolicyVersion) -> None:
        await self._sql.run("insert_policy_version", **vars(kept))

    async def version_of(self, policy_id: int, version: int) -> records.PolicyVersion | None:
        """The policy as it was at ``version``, if it had one."""
        return await self._sql.record(
            records.PolicyVersion, "get_policy_version", policy_id=policy_id, version=version
        )

    async def add_use(self, use: records.PolicyUse) -> None:
        """Count a decision the policy made against its limit."""
        await self._sql.run("insert_policy_use", **vars(use))

    async def count_uses(self, policy_id: int, agent_id: str | None, since: datetime) -> int:
        """How many decisions the policy made after ``since``, for ``agent_id`` (None: for
        anyone)."""
        count: int = await self._sql.value(
            "count_policy_uses", policy_id=policy_id, agent_id=agent_id, since=since
        )
        return count

    async def forget_uses_before(self, policy_id: int, before: datetime) -> None:
        """Drop the policy's decisions made before ``before``."""
        await self._sql.run("forget_policy_uses", policy_id=policy_id, before=before)
