"""The A2A calls store: messages sent to external A2A agents on an agent's behalf. Each method
runs one named statement of ``sqlite/queries/a2a_calls.sql`` or
``postgres/queries/a2a_calls.sql``."""

from __future__ import annotations

from datetime import datetime

from relay_api import models as m
from relay_core.storage.queries import Statements


class A2ACallsStore:
    """A2A calls in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def insert(self, call: m.A2ACall, bearer_sealed: str | None) -> int:
        """Store a new call, with the bearer token it was given sealed; its id."""
        call_id: int = await self._sql.value(
            "insert_a2a_call",
            agent_id=call.agent_id,
            url=call.url,
            status=call.status,
            approval_id=call.approval_id,
            message=call.message,
            context_id=call.context_id,
            bearer_sealed=bearer_sealed,
            due_at=call.due_at,
            created_at=call.created_at,
            updated_at=call.updated_at,
        )
        return call_id

    async def get(self, call_id: int) -> m.A2ACall | None:
        return await self._sql.record(m.A2ACall, "get_a2a_call", call_id=call_id)

    async def bearer(self, call_id: int) -> str | None:
        """The bearer token the call was given, sealed (None: none)."""
        sealed: str | None = await self._sql.value("a2a_call_bearer", call_id=call_id)
        return sealed

    async def save(self, call: m.A2ACall, updated_at_read: datetime) -> bool:
        """Store ``call`` as it stands, if its row is unchanged since it was read (its
        ``updated_at`` then); whether it was."""
        changed = await self._sql.run(
            "save_a2a_call",
            call_id=call.call_id,
            url=call.url,
            message=call.message,
            status=call.status,
            approval_id=call.approval_id,
            remote_name=call.remote_name,
            endpoint=call.endpoint,
            remote_task_id=call.remote_task_id,
            context_id=call.context_id,
            state=call.state,
            answer=call.answer,
            error=call.error,
            followed_until=call.followed_until,
            due_at=call.due_at,
            updated_at=call.updated_at,
            updated_at_read=updated_at_read,
        )
        return changed == 1

    async def page(
        self,
        agent_id: str | None,
        status: m.A2ACallStatus | None,
        before_id: int | None,
        limit: int,
    ) -> list[m.A2ACall]:
        """Up to ``limit`` calls of ``agent_id`` (None: of every agent) in ``status`` (None: in
        any), newest first, after the call ``before_id`` (None: from the newest)."""
        return await self._sql.records(
            m.A2ACall,
            "page_a2a_calls",
            agent_id=agent_id,
            status=status,
            before_id=before_id,
            limit=limit,
        )

    async def due(self, now: datetime, limit: int) -> list[m.A2ACall]:
        """Up to ``limit`` calls the follower has to act on at ``now``: due to be sent or read
        again, or held for an approval that is no longer pending."""
        return await self._sql.records(m.A2ACall, "due_a2a_calls", now=now, limit=limit)
