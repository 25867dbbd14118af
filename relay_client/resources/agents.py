"""``client.agents``: register, heartbeat, list, inbox."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from relay_client._base import compact, long_poll_timeout
from relay_client.resources._resource import AsyncResource, SyncResource
from relay_core import operations as ops
from relay_core.models import (
    Agent,
    AgentHeartbeatResult,
    AgentRegistered,
    AgentsResponse,
    InboxResponse,
)


class Agents(SyncResource):
    """Agents (sync)."""

    def register(
        self,
        agent_id: str,
        *,
        name: str | None = None,
        kind: str | None = None,
        capabilities: Sequence[str] | None = None,
        metadata: dict[str, Any] | None = None,
        rotate_token: bool = False,
    ) -> AgentRegistered:
        """Register (or update) an agent; ``token`` is set when one was issued. Operator only."""
        body = compact(
            agent_id=agent_id,
            name=name,
            kind=kind,
            capabilities=list(capabilities) if capabilities is not None else None,
            metadata=metadata,
            rotate_token=rotate_token or None,
        )
        return self._client.call(ops.AGENTS_REGISTER, json=body)

    def heartbeat(
        self,
        agent_id: str | None = None,
        *,
        status: str | None = None,
        note: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> AgentHeartbeatResult:
        """Record a sign of life; the answer counts unacknowledged messages."""
        body = compact(status=status, note=note, metadata=metadata)
        return self._client.call(
            ops.AGENTS_HEARTBEAT, {"agent_id": self._agent(agent_id)}, json=body
        )

    def inbox(
        self, agent_id: str | None = None, *, limit: int | None = None, wait: float | None = None
    ) -> InboxResponse:
        """Unacknowledged direct messages, oldest first; ``wait`` long-polls up to that many
        seconds (at most 60) for the first one."""
        params = compact(limit=limit, wait=wait)
        timeout = long_poll_timeout(wait, self._client.config.timeout)
        return self._client.call(
            ops.AGENTS_INBOX, {"agent_id": self._agent(agent_id)}, params=params, timeout=timeout
        )

    def me(self) -> Agent:
        """The agent this client's token belongs to (``NotFoundError`` for the operator's)."""
        return self._client.call(ops.AGENTS_ME)

    def list(self, *, limit: int | None = None, cursor: str | None = None) -> AgentsResponse:
        """One page of registered agents, by id, with presence."""
        params = compact(limit=limit, cursor=cursor)
        return self._client.call(ops.AGENTS_LIST, params=params)

    def iterate(self, *, limit: int | None = None) -> Iterator[Agent]:
        """Every registered agent, page after page."""
        for page in self._pages(ops.AGENTS_LIST, compact(limit=limit)):
            yield from page.agents


class AsyncAgents(AsyncResource):
    """Agents (async)."""

    async def register(
        self,
        agent_id: str,
        *,
        name: str | None = None,
        kind: str | None = None,
        capabilities: Sequence[str] | None = None,
        metadata: dict[str, Any] | None = None,
        rotate_token: bool = False,
    ) -> AgentRegistered:
        """Register (or update) an agent; ``token`` is set when one was issued. Operator only."""
        body = compact(
            agent_id=agent_id,
            name=name,
            kind=kind,
            capabilities=list(capabilities) if capabilities is not None else None,
            metadata=metadata,
            rotate_token=rotate_token or None,
        )
        return await self._client.call(ops.AGENTS_REGISTER, json=body)

    async def heartbeat(
        self,
        agent_id: str | None = None,
        *,
        status: str | None = None,
        note: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> AgentHeartbeatResult:
        """Record a sign of life; the answer counts unacknowledged messages."""
        body = compact(status=status, note=note, metadata=metadata)
        return await self._client.call(
            ops.AGENTS_HEARTBEAT, {"agent_id": self._agent(agent_id)}, json=body
        )

    async def inbox(
        self, agent_id: str | None = None, *, limit: int | None = None, wait: float | None = None
    ) -> InboxResponse:
        """Unacknowledged direct messages, oldest first; ``wait`` long-polls up to that many
        seconds (at most 60) for the first one."""
        params = compact(limit=limit, wait=wait)
        timeout = long_poll_timeout(wait, self._client.config.timeout)
        return await self._client.call(
            ops.AGENTS_INBOX, {"agent_id": self._agent(agent_id)}, params=params, timeout=timeout
        )

    async def me(self) -> Agent:
        """The agent this client's token belongs to (``NotFoundError`` for the operator's)."""
        return await self._client.call(ops.AGENTS_ME)

    async def list(self, *, limit: int | None = None, cursor: str | None = None) -> AgentsResponse:
        """One page of registered agents, by id, with presence."""
        params = compact(limit=limit, cursor=cursor)
        return await self._client.call(ops.AGENTS_LIST, params=params)

    async def iterate(self, *, limit: int | None = None) -> AsyncIterator[Agent]:
        """Every registered agent, page after page."""
        async for page in self._pages(ops.AGENTS_LIST, compact(limit=limit)):
            for item in page.agents:
                yield item
