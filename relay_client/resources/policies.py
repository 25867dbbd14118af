"""``client.policies``: the operator's rules that decide routine approvals as they come."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from typing import Any

from relay_client._base import compact
from relay_client.resources._resource import AsyncResource, SyncResource
from relay_core import operations as ops
from relay_core.models import PoliciesResponse, Policy, PolicyVerdict


def policy_body(
    name: str,
    decision: str,
    *,
    match: dict[str, Any] | None,
    note: str | None,
    priority: int | None,
    enabled: bool | None,
    limit: dict[str, int] | None,
) -> dict[str, Any]:
    """A ``PolicyCreate`` body from the arguments given."""
    return compact(
        name=name,
        decision=decision,
        match=match,
        note=note,
        priority=priority,
        enabled=enabled,
        limit=limit,
    )


def simulation_body(
    agent_id: str,
    title: str,
    *,
    kind: str | None,
    detail: str | None,
    payload: dict[str, Any] | None,
    at: datetime | None,
) -> dict[str, Any]:
    """A ``PolicySimulation`` body from the arguments given."""
    return compact(
        agent_id=agent_id,
        title=title,
        kind=kind,
        detail=detail,
        payload=payload,
        at=at.isoformat() if at is not None else None,
    )


class Policies(SyncResource):
    """Policies (sync; the operator's)."""

    def create(
        self,
        name: str,
        decision: str,
        *,
        match: dict[str, Any] | None = None,
        note: str | None = None,
        priority: int | None = None,
        enabled: bool | None = None,
        limit: dict[str, int] | None = None,
    ) -> Policy:
        """A policy that decides (``approve`` or ``reject``) the approvals ``match`` takes;
        ``limit`` as ``{"count": 5, "per_seconds": 3600}``."""
        body = policy_body(
            name, decision, match=match, note=note, priority=priority, enabled=enabled, limit=limit
        )
        return self._client.call(ops.POLICIES_CREATE, json=body)

    def replace(
        self,
        policy_id: int,
        name: str,
        decision: str,
        *,
        match: dict[str, Any] | None = None,
        note: str | None = None,
        priority: int | None = None,
        enabled: bool | None = None,
        limit: dict[str, int] | None = None,
    ) -> Policy:
        """Replace the policy whole: its next version."""
        body = policy_body(
            name, decision, match=match, note=note, priority=priority, enabled=enabled, limit=limit
        )
        return self._client.call(ops.POLICIES_REPLACE, {"policy_id": policy_id}, json=body)

    def show(self, policy_id: int, *, version: int | None = None) -> Policy:
        """The policy now, or at an earlier ``version``."""
        params = compact(version=version)
        return self._client.call(ops.POLICIES_SHOW, {"policy_id": policy_id}, params=params)

    def enable(self, policy_id: int) -> Policy:
        """Let the policy decide again."""
        return self._client.call(ops.POLICIES_ENABLE, {"policy_id": policy_id})

    def disable(self, policy_id: int) -> Policy:
        """Stop the policy deciding."""
        return self._client.call(ops.POLICIES_DISABLE, {"policy_id": policy_id})

    def simulate(
        self,
        agent_id: str,
        title: str,
        *,
        kind: str | None = None,
        detail: str | None = None,
        payload: dict[str, Any] | None = None,
        at: datetime | None = None,
    ) -> PolicyVerdict:
        """What the policies would do with such an approval (``approve``, ``reject`` or
        ``ask``); creates nothing."""
        body = simulation_body(agent_id, title, kind=kind, detail=detail, payload=payload, at=at)
        return self._client.call(ops.POLICIES_SIMULATE, json=body)

    def list(self, *, limit: int | None = None, cursor: str | None = None) -> PoliciesResponse:
        """One page of policies, oldest first."""
        return self._client.call(ops.POLICIES_LIST, params=compact(limit=limit, cursor=cursor))

    def iterate(self, *, limit: int | None = None) -> Iterator[Policy]:
        """Every policy, oldest first."""
        for page in self._pages(ops.POLICIES_LIST, compact(limit=limit)):
            yield from page.policies


class AsyncPolicies(AsyncResource):
    """Policies (async; the operator's)."""

    async def create(
        self,
        name: str,
        decision: str,
        *,
        match: dict[str, Any] | None = None,
        note: str | None = None,
        priority: int | None = None,
        enabled: bool | None = None,
        limit: dict[str, int] | None = None,
    ) -> Policy:
        """A policy that decides (``approve`` or ``reject``) the approvals ``match`` takes;
        ``limit`` as ``{"count": 5, "per_seconds": 3600}``."""
        body = policy_body(
            name, decision, match=match, note=note, priority=priority, enabled=enabled, limit=limit
        )
        return await self._client.call(ops.POLICIES_CREATE, json=body)

    async def replace(
        self,
        policy_id: int,
        name: str,
        decision: str,
        *,
        match: dict[str, Any] | None = None,
        note: str | None = None,
        priority: int | None = None,
        enabled: bool | None = None,
        limit: dict[str, int] | None = None,
    ) -> Policy:
        """Replace the policy whole: its next version."""
        body = policy_body(
            name, decision, match=match, note=note, priority=priority, enabled=enabled, limit=limit
        )
        return await self._client.call(ops.POLICIES_REPLACE, {"policy_id": policy_id}, json=body)

    async def show(self, policy_id: int, *, version: int | None = None) -> Policy:
        """The policy now, or at an earlier ``version``."""
        params = compact(version=version)
        return await self._client.call(ops.POLICIES_SHOW, {"policy_id": policy_id}, params=params)

    async def enable(self, policy_id: int) -> Policy:
        """Let the policy decide again."""
        return await self._client.call(ops.POLICIES_ENABLE, {"policy_id": policy_id})

    async def disable(self, policy_id: int) -> Policy:
        """Stop the policy deciding."""
        return await self._client.call(ops.POLICIES_DISABLE, {"policy_id": policy_id})

    async def simulate(
        self,
        agent_id: str,
        title: str,
        *,
        kind: str | None = None,
        detail: str | None = None,
        payload: dict[str, Any] | None = None,
        at: datetime | None = None,
    ) -> PolicyVerdict:
        """What the policies would do with such an approval (``approve``, ``reject`` or
        ``ask``); creates nothing."""
        body = simulation_body(agent_id, title, kind=kind, detail=detail, payload=payload, at=at)
        return await self._client.call(ops.POLICIES_SIMULATE, json=body)

    async def list(
        self, *, limit: int | None = None, cursor: str | None = None
    ) -> PoliciesResponse:
        """One page of policies, oldest first."""
        params = compact(limit=limit, cursor=cursor)
        return await self._client.call(ops.POLICIES_LIST, params=params)

    async def iterate(self, *, limit: int | None = None) -> AsyncIterator[Policy]:
        """Every policy, oldest first."""
        async for page in self._pages(ops.POLICIES_LIST, compact(limit=limit)):
            for item in page.policies:
                yield item
