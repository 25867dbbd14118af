"""Base classes of the resources: a handle on the client and the calling agent's id."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from relay_api.models import Page
from relay_api.operations import Operation
from relay_client._base import wire

if TYPE_CHECKING:
    from relay_client._client import AsyncRelayClient, RelayClient

P = TypeVar("P", bound=Page)


class _Bound:
    _config_agent: str | None

    def _agent(self, agent_id: str | None) -> str:
        """The agent an operation acts for: the argument, else the client's own agent id."""
        chosen = agent_id or self._config_agent
        if not chosen:
            raise ValueError("agent_id is required: pass it, or give the client an agent_id")
        return chosen

    def _acting(self, agent_id: str | None) -> str | None:
        """The agent a body names: the argument, else the client's own agent id, else none
        (the server takes the agent the token belongs to)."""
        return agent_id or self._config_agent


class SyncResource(_Bound):
    """A resource of ``RelayClient``."""

    def __init__(self, client: RelayClient) -> None:
        self._client = client
        self._config_agent = client.config.agent_id

    def _pages(
        self, op: Operation[P], params: dict[str, Any], path: dict[str, str | int] | None = None
    ) -> Iterator[P]:
        """Every page of a list from the first, following ``next_cursor``."""
        cursor = None
        while True:
            page = self._client.call(op, path, params=params | wire(cursor=cursor))
            yield page
            if page.next_cursor is None:
                return
            cursor = page.next_cursor


class AsyncResource(_Bound):
    """A resource of ``AsyncRelayClient``."""

    def __init__(self, client: AsyncRelayClient) -> None:
        self._client = client
        self._config_agent = client.config.agent_id

    async def _pages(
        self, op: Operation[P], params: dict[str, Any], path: dict[str, str | int] | None = None
    ) -> AsyncIterator[P]:
        """Every page of a list from the first, following ``next_cursor``."""
        cursor = None
        while True:
            page = await self._client.call(op, path, params=params | wire(cursor=cursor))
            yield page
            if page.next_cursor is None:
                return
            cursor = page.next_cursor
