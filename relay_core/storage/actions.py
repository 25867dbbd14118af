"""The action log's store. Each method runs one named statement of
``sqlite/queries/actions.sql`` or ``postgres/queries/actions.sql``."""

from __future__ import annotations

from typing import Any

from relay_api import models as m
from relay_core.storage.queries import Statements


class ActionsStore:
    """Logged actions in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def insert(self, action: m.Action) -> m.Action:
        """Log a new action; ``action`` is given its id and returned."""
        action.action_id = await self._sql.value("insert_action", **vars(action))
        return action

    async def get(self, action_id: int) -> m.Action | None:
        return await self._sql.record(m.Action, "get_action", action_id=action_id)

    async def set_params(self, action_id: int, params: dict[str, Any]) -> None:
        await self._sql.run("set_action_params", action_id=action_id, params=params)

    async def page(self, agent_id: str | None, before: int | None, limit: int) -> list[m.Action]:
        """Up to ``limit`` actions, newest first, before ``before`` (None: from the newest),
        of ``agent_id`` (None: of everyone)."""
        return await self._sql.records(
            m.Action, "page_actions", agent_id=agent_id, before=before, limit=limit
        )
