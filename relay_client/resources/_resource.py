"""The base of the resources: a handle on the client and the calling agent's id."""

from __future__ import annotations

from typing import Any

from relay_api.operations import Operation
from relay_client._base import wire
from relay_client._flow import C, Driven, Items, Out, Send


class Resource(Driven[C]):
    """A resource of a ``RelayClient`` or an ``AsyncRelayClient``: its methods are written once
    and take the client's kind."""

    def __init__(self, client: C) -> None:
        self._client = client
        self._config_agent = client.config.agent_id

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

    def _pages(
        self,
        op: Operation[Any],
        params: dict[str, Any],
        path: dict[str, str | int] | None,
        items: str,
    ) -> Items[Any]:
        """Every item (the page's field ``items``) of a list from its first page, following
        ``next_cursor``."""
        cursor = None
        while True:
            page = yield Send(op, path, params=params | wire(cursor=cursor))
            for item in getattr(page, items):
                yield Out(item)
            if page.next_cursor is None:
                return
            cursor = page.next_cursor
