"""The A2A tasks store: the tasks asked of an agent over A2A. Each method runs one named
statement of ``sqlite/queries/a2a_tasks.sql`` or ``postgres/queries/a2a_tasks.sql``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from relay_api import models as m
from relay_core.records import A2ATask
from relay_core.storage.queries import Statements


@dataclass(frozen=True)
class A2ATaskFilter:
    """Which tasks asked of an agent over A2A a listing shows: those of ``agent_id`` asked by
    ``caller`` (None: anyone), of one conversation, of some statuses, asking their asker a
    question or not, and changed since a time, where given."""

    agent_id: str
    caller: str | None = None
    context_id: str | None = None
    statuses: list[m.TaskStatus] | None = None
    asking: bool | None = None
    changed_since: datetime | None = None


class A2ATasksStore:
    """A2A tasks in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def add(
        self, task: m.Task, agent_id: str, caller: str, context_id: str, message_id: str
    ) -> None:
        """Note that ``caller`` asked ``task`` of ``agent_id`` with a message, in a context."""
        await self._sql.run(
            "insert_a2a_task",
            task_id=task.task_id,
            agent_id=agent_id,
            caller=caller,
            context_id=context_id,
            message_id=message_id,
            created_at=task.created_at,
        )

    async def of_message(self, caller: str, agent_id: str, message_id: str) -> int | None:
        """The id of the task ``caller``'s message ``message_id`` started, if one did."""
        rows = await self._sql.rows(
            "a2a_task_of_message", caller=caller, agent_id=agent_id, message_id=message_id
        )
        return int(rows[0][0]) if rows else None

    async def get(self, agent_id: str, task_id: int) -> A2ATask | None:
        return await self._sql.record(A2ATask, "get_a2a_task", agent_id=agent_id, task_id=task_id)

    async def page(
        self, among: A2ATaskFilter, before: tuple[datetime, int] | None, limit: int
    ) -> list[A2ATask]:
        """Up to ``limit`` tasks ``among`` those, the most recently changed first, after
        ``before`` (its time of change and id; None: from the newest)."""
        before_at, before_id = before if before is not None else (None, None)
        return await self._sql.records(
            A2ATask,
            "page_a2a_tasks",
            **vars(among),
            before_at=before_at,
            before_id=before_id,
            limit=limit,
        )

    async def count(self, among: A2ATaskFilter) -> int:
        """How many tasks ``among`` those there are."""
        return int(await self._sql.value("count_a2a_tasks", **vars(among)))
