"""``client.tasks``: create, list, get, events, claim, event, complete, fail."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from relay_client._base import compact
from relay_client.resources._resource import AsyncResource, SyncResource
from relay_core import operations as ops
from relay_core.models import Task, TaskEvent, TaskEventsResponse, TasksResponse


class Tasks(SyncResource):
    """Tasks (sync)."""

    def create(
        self,
        title: str,
        *,
        description: str | None = None,
        payload: dict[str, Any] | None = None,
        priority: int | None = None,
        assignee: str | None = None,
        room_id: str | None = None,
        max_attempts: int | None = None,
    ) -> Task:
        """Create an open task."""
        body = compact(
            title=title,
            description=description,
            payload=payload,
            priority=priority,
            assignee=assignee,
            room_id=room_id,
            max_attempts=max_attempts,
        )
        return self._client.call(ops.TASKS_CREATE, json=body)

    def get(self, task_id: int) -> Task:
        """One task."""
        return self._client.call(ops.TASKS_GET, {"task_id": task_id})

    def events(
        self, task_id: int, *, limit: int | None = None, cursor: str | None = None
    ) -> TaskEventsResponse:
        """One page of a task's trail, oldest first."""
        params = compact(limit=limit, cursor=cursor)
        return self._client.call(ops.TASKS_EVENTS, {"task_id": task_id}, params=params)

    def iterate_events(self, task_id: int, *, limit: int | None = None) -> Iterator[TaskEvent]:
        """A task's whole trail, oldest first, page after page."""
        for page in self._pages(ops.TASKS_EVENTS, compact(limit=limit), {"task_id": task_id}):
            yield from page.events

    def claim(
        self, task_id: int, *, agent_id: str | None = None, lease_seconds: int | None = None
    ) -> Task:
        """Claim an open task; ``ConflictError`` if another agent holds it."""
        body = compact(agent_id=self._acting(agent_id), lease_seconds=lease_seconds)
        return self._client.call(ops.TASKS_CLAIM, {"task_id": task_id}, json=body)

    def event(
        self,
        task_id: int,
        *,
        agent_id: str | None = None,
        kind: str | None = None,
        message: str | None = None,
        progress: int | None = None,
        data: dict[str, Any] | None = None,
    ) -> TaskEvent:
        """Report progress on a claimed task (renews the lease)."""
        body = compact(
            agent_id=self._acting(agent_id),
            kind=kind,
            message=message,
            progress=progress,
            data=data,
        )
        return self._client.call(ops.TASKS_EVENT, {"task_id": task_id}, json=body)

    def complete(
        self, task_id: int, *, agent_id: str | None = None, result: dict[str, Any] | None = None
    ) -> Task:
        """Complete a claimed task."""
        body = compact(agent_id=self._acting(agent_id), result=result)
        return self._client.call(ops.TASKS_COMPLETE, {"task_id": task_id}, json=body)

    def fail(
        self,
        task_id: int,
        *,
        agent_id: str | None = None,
        error: str | None = None,
        result: dict[str, Any] | None = None,
        retry: bool = False,
    ) -> Task:
        """Fail a claimed task; ``retry`` reopens it while attempts are left."""
        body = compact(
            agent_id=self._acting(agent_id), error=error, result=result, retry=retry or None
        )
        return self._client.call(ops.TASKS_FAIL, {"task_id": task_id}, json=body)

    def list(
        self,
        *,
        status: str | None = None,
        assignee: str | None = None,
        claimed_by: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> TasksResponse:
        """One page of the tasks matching every given filter, by id (``next_cursor`` leads to
        the next)."""
        params = compact(
            status=status, assignee=assignee, claimed_by=claimed_by, limit=limit, cursor=cursor
        )
        return self._client.call(ops.TASKS_LIST, params=params)

    def iterate(
        self,
        *,
        status: str | None = None,
        assignee: str | None = None,
        claimed_by: str | None = None,
        limit: int | None = None,
    ) -> Iterator[Task]:
        """Every task matching every given filter, by id, page after page."""
        params = compact(status=status, assignee=assignee, claimed_by=claimed_by, limit=limit)
        for page in self._pages(ops.TASKS_LIST, params):
            yield from page.tasks


class AsyncTasks(AsyncResource):
    """Tasks (async)."""

    async def create(
        self,
        title: str,
        *,
        description: str | None = None,
        payload: dict[str, Any] | None = None,
        priority: int | None = None,
        assignee: str | None = None,
        room_id: str | None = None,
        max_attempts: int | None = None,
    ) -> Task:
        """Create an open task."""
        body = compact(
            title=title,
            description=description,
            payload=payload,
            priority=priority,
            assignee=assignee,
            room_id=room_id,
            max_attempts=max_attempts,
        )
        return await self._client.call(ops.TASKS_CREATE, json=body)

    async def get(self, task_id: int) -> Task:
        """One task."""
        return await self._client.call(ops.TASKS_GET, {"task_id": task_id})

    async def events(
        self, task_id: int, *, limit: int | None = None, cursor: str | None = None
    ) -> TaskEventsResponse:
        """One page of a task's trail, oldest first."""
        params = compact(limit=limit, cursor=cursor)
        return await self._client.call(ops.TASKS_EVENTS, {"task_id": task_id}, params=params)

    async def iterate_events(
        self, task_id: int, *, limit: int | None = None
    ) -> AsyncIterator[TaskEvent]:
        """A task's whole trail, oldest first, page after page."""
        async for page in self._pages(ops.TASKS_EVENTS, compact(limit=limit), {"task_id": task_id}):
            for event in page.events:
                yield event

    async def claim(
        self, task_id: int, *, agent_id: str | None = None, lease_seconds: int | None = None
    ) -> Task:
        """Claim an open task; ``ConflictError`` if another agent holds it."""
        body = compact(agent_id=self._acting(agent_id), lease_seconds=lease_seconds)
        return await self._client.call(ops.TASKS_CLAIM, {"task_id": task_id}, json=body)

    async def event(
        self,
        task_id: int,
        *,
        agent_id: str | None = None,
        kind: str | None = None,
        message: str | None = None,
        progress: int | None = None,
        data: dict[str, Any] | None = None,
    ) -> TaskEvent:
        """Report progress on a claimed task (renews the lease)."""
        body = compact(
            agent_id=self._acting(agent_id),
            kind=kind,
            message=message,
            progress=progress,
            data=data,
        )
        return await self._client.call(ops.TASKS_EVENT, {"task_id": task_id}, json=body)

    async def complete(
        self, task_id: int, *, agent_id: str | None = None, result: dict[str, Any] | None = None
    ) -> Task:
        """Complete a claimed task."""
        body = compact(agent_id=self._acting(agent_id), result=result)
        return await self._client.call(ops.TASKS_COMPLETE, {"task_id": task_id}, json=body)

    async def fail(
        self,
        task_id: int,
        *,
        agent_id: str | None = None,
        error: str | None = None,
        result: dict[str, Any] | None = None,
        retry: bool = False,
    ) -> Task:
        """Fail a claimed task; ``retry`` reopens it while attempts are left."""
        body = compact(
            agent_id=self._acting(agent_id), error=error, result=result, retry=retry or None
        )
        return await self._client.call(ops.TASKS_FAIL, {"task_id": task_id}, json=body)

    async def list(
        self,
        *,
        status: str | None = None,
        assignee: str | None = None,
        claimed_by: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> TasksResponse:
        """One page of the tasks matching every given filter, by id (``next_cursor`` leads to
        the next)."""
        params = compact(
            status=status, assignee=assignee, claimed_by=claimed_by, limit=limit, cursor=cursor
        )
        return await self._client.call(ops.TASKS_LIST, params=params)

    async def iterate(
        self,
        *,
        status: str | None = None,
        assignee: str | None = None,
        claimed_by: str | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[Task]:
        """Every task matching every given filter, by id, page after page."""
        params = compact(status=status, assignee=assignee, claimed_by=claimed_by, limit=limit)
        async for page in self._pages(ops.TASKS_LIST, params):
            for task in page.tasks:
                yield task
