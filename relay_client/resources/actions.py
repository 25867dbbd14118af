"""``client.actions``: the audit log."""

from __future__ import annotations

from typing import Any

from relay_client._base import compact
from relay_client.resources._resource import AsyncResource, SyncResource
from relay_core.models import Action, ActionsResponse


class Actions(SyncResource):
    """Actions (sync)."""

    def record(
        self,
        action: str,
        *,
        agent_id: str | None = None,
        target: str | None = None,
        params: dict[str, Any] | None = None,
        outcome: str | None = None,
        task_id: int | None = None,
    ) -> Action:
        """Append what an agent did to the audit log."""
        body = compact(
            action=action,
            agent_id=agent_id,
            target=target,
            params=params,
            outcome=outcome,
            task_id=task_id,
        )
        return self._client.request("POST", "/v1/actions", Action, json=body, idempotent=True)

    def list(self, *, agent_id: str | None = None, limit: int | None = None) -> ActionsResponse:
        """The newest actions, optionally of one agent."""
        query = compact(agent_id=agent_id, limit=limit)
        return self._client.request("GET", "/v1/actions", ActionsResponse, params=query)


class AsyncActions(AsyncResource):
    """Actions (async)."""

    async def record(
        self,
        action: str,
        *,
        agent_id: str | None = None,
        target: str | None = None,
        params: dict[str, Any] | None = None,
        outcome: str | None = None,
        task_id: int | None = None,
    ) -> Action:
        """Append what an agent did to the audit log."""
        body = compact(
            action=action,
            agent_id=agent_id,
            target=target,
            params=params,
            outcome=outcome,
            task_id=task_id,
        )
        return await self._client.request("POST", "/v1/actions", Action, json=body, idempotent=True)

    async def list(
        self, *, agent_id: str | None = None, limit: int | None = None
    ) -> ActionsResponse:
        """The newest actions, optionally of one agent."""
        query = compact(agent_id=agent_id, limit=limit)
        return await self._client.request("GET", "/v1/actions", ActionsResponse, params=query)
