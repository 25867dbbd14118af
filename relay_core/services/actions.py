"""Actions: the append-only audit log of what agents did."""

from __future__ import annotations

from relay_api import models as m
from relay_api.params import DEFAULT_LIMIT
from relay_core import paging
from relay_core.auth import Caller
from relay_core.ports import UnitOfWork
from relay_core.services.base import Service
from relay_core.services.tasks import require_task


class ActionsService(Service):
    """Record and read the audit log."""

    async def record(self, caller: Caller, body: m.ActionCreate) -> m.Action:
        """Append an action by the caller (or the agent the operator names)."""
        agent_id = caller.acting_as(body.agent_id)

        async def work(uow: UnitOfWork) -> m.Action:
            if body.task_id is not None:
                await require_task(uow, body.task_id)
            action = m.Action(
                **body.model_dump(exclude={"agent_id"}), agent_id=agent_id, created_at=self.now()
            )
            return await uow.actions.insert(action)

        return await self.write_answer(work)

    async def audit(
        self,
        *,
        agent_id: str,
        action: str,
        target: str,
        outcome: str,
        params: dict[str, object],
    ) -> m.Action:
        """Record something Relay itself observed (a refused request), not an agent's report."""

        async def work(uow: UnitOfWork) -> m.Action:
            record = m.Action(
                agent_id=agent_id,
                action=action,
                target=target,
                params=params,
                outcome=outcome,
                created_at=self.now(),
            )
            return await uow.actions.insert(record)

        return await self.write(work)

    async def recount(self, action_id: int, count: int) -> None:
        """Set how many refusals an audit record stands for (they are folded per minute)."""

        async def work(uow: UnitOfWork) -> None:
            record = await uow.actions.get(action_id)
            if record is not None:
                await uow.actions.set_params(action_id, {**record.params, "count": count})

        await self.write(work)

    async def list(
        self,
        caller: Caller,
        agent_id: str | None = None,
        limit: int = DEFAULT_LIMIT,
        cursor: str | None = None,
    ) -> m.ActionsResponse:
        """Actions, newest first, optionally of one agent; a page at a time. An agent sees its
        own only (the log holds every refused request with its client's address); the
        operator sees all."""
        if not caller.is_operator:
            agent_id = caller.the_agent(agent_id)
        before = paging.key_after(cursor, int)

        async def work(uow: UnitOfWork) -> m.ActionsResponse:
            newest, next_cursor = paging.cut(
                await uow.actions.page(agent_id or None, before, limit + 1),
                limit,
                lambda action: [action.action_id],
            )
            return m.ActionsResponse(actions=newest, next_cursor=next_cursor)

        return await self.read(work)
