"""The tasks store: each method runs one named statement of ``sqlite/queries/tasks.sql`` or
``postgres/queries/tasks.sql`` (the same names in both)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from relay_api import models as m
from relay_core.storage.queries import Statements


@dataclass(frozen=True)
class TaskRange:
    """Which tasks a read could show: of this assignee and claimer (None: any), with ids after
    ``after`` and up to ``through`` (None: no bound)."""

    assignee: str | None = None
    claimed_by: str | None = None
    after: int | None = None
    through: int | None = None


EVERY_TASK = TaskRange()


class TasksStore:
    """Tasks in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def get(self, task_id: int) -> m.Task | None:
        return await self._sql.record(m.Task, "get_task", task_id=task_id)

    async def insert(self, task: m.Task) -> m.Task:
        """Store a new task; ``task`` is given its id and returned."""
        task.task_id = await self._sql.value("insert_task", **task.model_dump(exclude={"task_id"}))
        return task

    async def claim_open(
        self, task_id: int, agent_id: str, now: datetime, lease_seconds: int
    ) -> m.Task | None:
        """The task claimed by ``agent_id`` until ``now`` + the lease, if it was open and
        assigned to nobody or to that agent; else None, and nothing changed."""
        return await self._sql.record(
            m.Task,
            "claim_open_task",
            task_id=task_id,
            agent_id=agent_id,
            now=now,
            lease_seconds=lease_seconds,
            lease_expires_at=now + timedelta(seconds=lease_seconds),
        )

    async def reopen_lapsed(self, task: m.Task, now: datetime) -> m.Task | None:
        """``task``, whose lease is over, open again; None if it changed since it was read."""
        return await self._sql.record(m.Task, "reopen_lapsed_task", **_as_read(task), now=now)

    async def record_progress(
        self, task: m.Task, progress: int | None, lease_expires_at: datetime, now: datetime
    ) -> m.Task | None:
        """``task`` in progress, its lease renewed to ``lease_expires_at`` and its progress set
        if given; None if it changed since it was read."""
        return await self._sql.record(
            m.Task,
            "record_task_progress",
            **_as_read(task),
            progress=progress,
            lease_expires_at=lease_expires_at,
            now=now,
        )

    async def complete(
        self, task: m.Task, result: dict[str, Any] | None, error: str | None, now: datetime
    ) -> m.Task | None:
        """``task`` completed; None if it changed since it was read."""
        return await self._finish("complete_task", task, result, error, now)

    async def fail(
        self, task: m.Task, result: dict[str, Any] | None, error: str | None, now: datetime
    ) -> m.Task | None:
        """``task`` failed for good; None if it changed since it was read."""
        return await self._finish("fail_task", task, result, error, now)

    async def retry(
        self, task: m.Task, result: dict[str, Any] | None, error: str | None, now: datetime
    ) -> m.Task | None:
        """``task`` failed and open again for anyone; None if it changed since it was read."""
        return await self._finish("retry_task", task, result, error, now)

    async def cancel(self, task: m.Task, reason: str | None, now: datetime) -> m.Task | None:
        """``task`` cancelled, with why; None if it changed since it was read."""
        return await self._finish("cancel_task", task, None, reason, now)

    async def _finish(
        self,
        name: str,
        task: m.Task,
        result: dict[str, Any] | None,
        error: str | None,
        now: datetime,
    ) -> m.Task | None:
        """Run one of the three statements that end a hold, with the result and error."""
        values = {"result": result, "error": error, "now": now}
        return await self._sql.record(m.Task, name, **_as_read(task), **values)

    async def count_lapsed(self, now: datetime, among: TaskRange) -> int:
        """How many held tasks ``among`` these have a lease over at ``now``."""
        return int(await self._sql.value("count_lapsed_tasks", now=now, **vars(among)))

    async def lapsed(self, now: datetime, among: TaskRange, limit: int) -> list[m.Task]:
        """Up to ``limit`` held tasks ``among`` these whose lease is over at ``now``, by id.
        On PostgreSQL they are held until the unit ends, and those another unit holds are
        left out (readers reaping at once share the work)."""
        return await self._sql.records(m.Task, "lapsed_tasks", now=now, **vars(among), limit=limit)

    async def page(
        self,
        *,
        status: m.TaskStatus | None,
        assignee: str | None,
        claimed_by: str | None,
        after: int | None,
        limit: int,
    ) -> list[tuple[int, str]]:
        """Up to ``limit`` tasks by id after ``after``, of the status, assignee and claimer
        given (None: any): each task's id and JSON."""
        filters = {"assignee": assignee, "claimed_by": claimed_by, "after": after, "limit": limit}
        if status is None:
            return await self._sql.keyed_json(m.Task, "task_id", "page_tasks", **filters)
        return await self._sql.keyed_json(
            m.Task, "task_id", "page_tasks_in_status", status=status, **filters
        )

    async def count_open(self) -> int:
        return int(await self._sql.value("count_open_tasks"))


def _as_read(task: m.Task) -> dict[str, Any]:
    """What a guarded change of ``task`` expects of it: as it was read."""
    return {"task_id": task.task_id, "status": task.status, "claimed_by": task.claimed_by}
