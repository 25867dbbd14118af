"""The agents store: registered agents. Each method runs one named statement of
``sqlite/queries/agents.sql`` or ``postgres/queries/agents.sql``."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from relay_api import models as m
from relay_core.storage.queries import Statements

# What registering again may change: the fields of the body (``AgentRegister``) it names.
REGISTERED = ("name", "kind", "capabilities", "metadata")


class AgentsStore:
    """Agents in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def get(self, agent_id: str) -> m.Agent | None:
        return await self._sql.record(m.Agent, "get_agent", agent_id=agent_id)

    async def exists(self, agent_id: str) -> bool:
        return bool(await self._sql.value("count_agent", agent_id=agent_id))

    async def by_token(self, token_hash: str) -> str | None:
        """The id of the agent whose token has this hash."""
        rows = await self._sql.rows("agent_by_token", token_hash=token_hash)
        return rows[0][0] if rows else None

    async def insert(self, agent: m.Agent) -> m.Agent:
        await self._sql.run("insert_agent", **vars(agent))
        return agent

    async def register_again(
        self, agent_id: str, given: dict[str, Any], token_hash: str | None, now: datetime
    ) -> m.Agent | None:
        """The agent with the fields ``given`` (of ``REGISTERED``) and, if given, its new
        token's hash; None if it is not registered."""
        fields = {name: given.get(name) for name in REGISTERED}
        chosen = {f"set_{name}": name in given for name in REGISTERED}
        return await self._sql.record(
            m.Agent,
            "register_agent_again",
            agent_id=agent_id,
            **fields,
            **chosen,
            token_hash=token_hash,
            now=now,
        )

    async def record_heartbeat(
        self, agent_id: str, reported: Mapping[str, Any], now: datetime
    ) -> m.Agent | None:
        """The agent seen at ``now``, with what it reported (of ``AgentHeartbeat``'s fields;
        one left out, or null, stays as it was); None if it is not registered."""
        return await self._sql.record(
            m.Agent,
            "record_heartbeat",
            agent_id=agent_id,
            status=reported.get("status"),
            note=reported.get("note"),
            metadata=reported.get("metadata"),
            now=now,
        )

    async def set_token(self, agent_id: str, token_hash: str, now: datetime) -> m.Agent | None:
        """The agent with a new token's hash; None if it is not registered."""
        return await self._sql.record(
            m.Agent, "set_agent_token", agent_id=agent_id, token_hash=token_hash, now=now
        )

    async def count(self) -> int:
        return int(await self._sql.value("count_agents"))

    async def count_seen_since(self, since: datetime) -> int:
        return int(await self._sql.value("count_agents_seen_since", since=since))

    async def page(self, after: str | None, limit: int) -> list[m.Agent]:
        """Up to ``limit`` agents by id, after ``after`` (None: from the first)."""
        return await self._sql.records(m.Agent, "page_agents", after=after, limit=limit)

    async def set_a2a(self, agent_id: str, a2a: dict[str, Any], now: datetime) -> m.Agent | None:
        """The agent with how it is reached over A2A (``A2AConfig``'s fields); None if it is
        not registered."""
        return await self._sql.record(m.Agent, "set_agent_a2a", agent_id=agent_id, a2a=a2a, now=now)

    async def reachable_over_a2a(self, limit: int) -> list[m.Agent]:
        """The first ``limit`` agents reachable over A2A, by id."""
        return await self._sql.records(m.Agent, "agents_reachable_over_a2a", limit=limit)
