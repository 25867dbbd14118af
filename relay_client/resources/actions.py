"""``client.actions``: the audit log."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from relay_client._base import compact
from relay_client.resources._resource import AsyncResource, SyncResource
from relay_core import operations as ops
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
        return self._client.call(ops.ACTIONS_RECORD, json=body)

    def list(
        self, *, agent_id: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> ActionsResponse:
        """One page of actions, newest first, optionally of one agent."""
        params = compact(agent_id=agent_id, limit=limit, cursor=cursor)
        return self._client.call(ops.ACTIONS_LIST, params=params)

    def iterate(self, *, agent_id: str | None = None, limit: int | None = None) -> Iterator[Action]:
        """Every action, newest first, page after page."""
        for page in self._pages(ops.ACTIONS_LIST, compact(agent_id=agent_id, limit=limit)):
            yield from page.actions


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
        return await self._client.call(ops.ACTIONS_RECORD, json=body)

    async def list(
        self, *, agent_id: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> ActionsResponse:
        """One page of actions, newest first, optionally of one agent."""
        params = compact(agent_id=agent_id, limit=limit, cursor=cursor)
        return await self._client.call(ops.ACTIONS_LIST, params=params)

    async def iterate(
        self, *, agent_id: str | None = None, limit: int | None = None
    ) -> AsyncIterator[Action]:
        """Every action, newest first, page after page."""
        async for page in self._pages(ops.ACTIONS_LIST, compact(agent_id=agent_id, limit=limit)):
            for item in page.actions:
                yield item
