"""Tasks: create, list, claim, report progress, complete, fail.

A claim holds a lease. Progress events extend it; when it lapses the task goes back to ``open``
(work is at-least-once) with a ``lease_expired`` event on its trail. Lapsed leases are reaped at
the start of every task operation, inside the same transaction, so no reader ever sees a task
held by a claimer whose lease is over. A read first looks in a read transaction; only when it
finds a lapsed lease does it become a write that reaps it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

from relay_api import models as m
from relay_api.errors import Conflict, NotFound, PermissionDenied
from relay_api.params import DEFAULT_LIMIT
from relay_core import paging, trace_context
from relay_core.auth import Caller
from relay_core.json_records import JsonRecords
from relay_core.ports import StaleWrite, UnitOfWork
from relay_core.services.agents import require_registered
from relay_core.services.base import SWEEP_BATCH, Service
from relay_core.services.events import emit, event_data, new_event, task_topic
from relay_core.services.messages import require_room
from relay_core.storage.tasks import EVERY_TASK, TaskRange, TasksStore
from relay_core.topics import feed_topics

T = TypeVar("T")

HELD: tuple[m.TaskStatus, ...] = ("claimed", "in_progress")
FINISHED: tuple[m.TaskStatus, ...] = ("completed", "failed", "cancelled")
# The kind of a claimer's note that asks the task's asker something (A2A's input-required).
INPUT_REQUIRED = "input_required"
# A finish's outcome: the task as changed (None if it changed since it was read), the trail's kind.
Finished = tuple[m.Task | None, str]


async def any_lapsed(uow: UnitOfWork, now: datetime, among: TaskRange = EVERY_TASK) -> bool:
    """Whether the lease of some task (``among`` those) is over: a reader that finds none
    needs no write to reap."""
    return await uow.tasks.count_lapsed(now, among) > 0


async def reap_lapsed_leases(
    uow: UnitOfWork, now: datetime, among: TaskRange = EVERY_TASK, limit: int = SWEEP_BATCH
) -> int:
    """Return tasks whose lease is over (``among`` those; up to ``limit``) to ``open``, noting
    why on their trails; how many. Tasks another transaction is reaping are skipped, not
    waited for, so that readers reaping at once after many leases lapsed share the work
    instead of racing for the same rows."""
    lapsed = await uow.tasks.lapsed(now, among, limit)
    for task in lapsed:
        await _reopen_lapsed(uow, task, now)
    return len(lapsed)


async def _reopen_lapsed(uow: UnitOfWork, task: m.Task, now: datetime) -> m.Task:
    """Return a task whose lease is over to ``open``, noting why on its trail and in the feed."""
    reopened = await uow.tasks.reopen_lapsed(task, now)
    if reopened is None:
        raise StaleWrite("task changed while reaping")
    holder = task.claimed_by
    lapsed = f"the lease of agent '{holder}' lapsed; the task is open again"
    await _note_on_trail(uow, event_data(reopened), holder, "lease_expired", lapsed, now)
    return reopened


async def _note_on_trail(
    uow: UnitOfWork,
    about: dict[str, Any],
    agent_id: str | None,
    kind: str,
    message: str | None,
    now: datetime,
) -> None:
    """Note a state change, made at ``now``, on the task's trail and in the event feed;
    ``about`` is what the event says of the task as changed (``event_data``)."""
    task_id = about["task_id"]
    event = m.TaskEvent(
        task_id=task_id, agent_id=agent_id, kind=kind, message=message, created_at=now
    )
    announced = new_event(f"task.{kind}", task_id, about, now)
    await uow.task_events.note(event, announced)
    for topic in (*feed_topics(announced.audience), task_topic(task_id)):
        uow.publish(topic)


async def require_task(uow: UnitOfWork, task_id: int) -> m.Task:
    """The task, or NotFound."""
    task = await uow.tasks.get(task_id)
    if task is None:
        raise NotFound(f"task {task_id} does not exist")
    return task


async def require_current_task(uow: UnitOfWork, task_id: int, now: datetime) -> m.Task:
    """The task, reopened first if its lease is over (a write on a task reaps its own lease;
    the sweep and the reads reap the others), or NotFound."""
    task = await require_task(uow, task_id)
    lapsed = task.lease_expires_at is not None and task.lease_expires_at < now
    if task.status in HELD and lapsed:
        return await _reopen_lapsed(uow, task, now)
    return task


def require_holder(task: m.Task, agent_id: str) -> None:
    """Refuse an agent that does not hold the task's claim."""
    if task.status not in HELD:
        raise Conflict(f"task {task.task_id} is {task.status}, not claimed")
    if task.claimed_by != agent_id:
        raise Conflict(f"task {task.task_id} is claimed by another agent")


async def add_task(uow: UnitOfWork, creator: str, body: m.TaskCreate, now: datetime) -> m.Task:
    """Store a new open task by ``creator``, in the trace of the request that makes it, and tell
    the feed (its assignee and room, if any, checked by the caller)."""
    task = m.Task(
        **body.model_dump(),
        created_by=creator,
        created_at=now,
        updated_at=now,
        traceparent=trace_context.current(),
    )
    task = await uow.tasks.insert(task)
    await emit(uow, "task.created", task.task_id, event_data(task), now)
    return task


async def cancel_task(
    uow: UnitOfWork, caller: Caller, task_id: int, reason: str | None, now: datetime
) -> m.Task:
    """Cancel a task that is not finished, for its creator or the operator (a cancelled one
    answers as it is); its claimer's hold ends, noted on its trail."""
    task = await require_current_task(uow, task_id, now)
    if not caller.is_operator and task.created_by != caller.name:
        raise PermissionDenied(
            f"task {task_id} was created by '{task.created_by}': only they or the operator "
            "may cancel it"
        )
    if task.status == "cancelled":
        return task
    if task.status in FINISHED:
        raise Conflict(f"task {task_id} is {task.status} and cannot be cancelled")
    cancelled = await uow.tasks.cancel(task, reason, now)
    if cancelled is None:
        raise StaleWrite("task changed")
    await _note_on_trail(uow, event_data(cancelled), caller.name, "cancelled", reason, now)
    return cancelled


class TasksService(Service):
    """Work queue with leases."""

    async def sweep(self) -> int:
        """Reap up to ``SWEEP_BATCH`` lapsed leases in one transaction; how many were reaped.
        Run in the background, it keeps reads of tasks from finding (and reaping) many."""

        async def lapsed(uow: UnitOfWork) -> bool:
            return await any_lapsed(uow, self.now())

        async def work(uow: UnitOfWork) -> int:
            return await reap_lapsed_leases(uow, self.now())

        if not await self.read(lapsed):
            return 0  # an idle server reads once a second and writes nothing
        return await self.write(work)

    async def _after_reaping(
        self,
        fetch: Callable[[UnitOfWork], Awaitable[T]],
        could_show: Callable[[T], TaskRange],
        most: int,
    ) -> T:
        """``fetch`` as no lapsed lease shows: in a read when no task that its answer could show
        (those ``could_show(answer)``) has lapsed, else in a write that reopens up to
        ``most`` of those first. A read never waits on the reaping of tasks it does not show:
        after a mass lapse, that is the sweep's work, done in small batches."""

        async def read(uow: UnitOfWork) -> tuple[T] | None:
            found = await fetch(uow)
            lapsed = await any_lapsed(uow, self.now(), could_show(found))
            return None if lapsed else (found,)

        async def reap_then_fetch(uow: UnitOfWork) -> T:
            shown = could_show(await fetch(uow))
            await reap_lapsed_leases(uow, self.now(), shown, most)
            return await fetch(uow)

        found = await self.read(read)
        return found[0] if found is not None else await self.write(reap_then_fetch)

    async def create(self, caller: Caller, body: m.TaskCreate) -> m.Task:
        """Create an open task."""

        async def work(uow: UnitOfWork) -> m.Task:
            if body.assignee is not None:
                await require_registered(uow, body.assignee, self.ctx.registered)
            if body.room_id is not None:
                await require_room(uow, body.room_id)
            return await add_task(uow, caller.name, body, self.now())

        return await self.write_answer(work)

    async def list(
        self,
        caller: Caller,
        status: m.TaskStatus | None = None,
        assignee: str | None = None,
        claimed_by: str | None = None,
        limit: int = DEFAULT_LIMIT,
        cursor: str | None = None,
    ) -> m.TasksResponse:
        """Tasks matching every given filter, by id; a page at a time."""
        after = paging.key_after(cursor, int)

        async def fetch(uow: UnitOfWork) -> m.TasksResponse:
            rows = await uow.tasks.page(
                status=status,
                assignee=assignee,
                claimed_by=claimed_by,
                after=after,
                limit=limit + 1,
            )
            next_cursor = paging.encode([rows[limit - 1][0]]) if len(rows) > limit else None
            tasks = JsonRecords(m.Task, min(len(rows), limit), _array(rows[:limit]))
            return m.TasksResponse.model_construct(tasks=tasks.as_field(), next_cursor=next_cursor)

        def could_show(page: m.TasksResponse) -> TaskRange:
            # Once reopened, a lapsed task after the cursor and up to the last task of a full
            # page, of the assignee and claimer asked for, whatever its status (a lapsed claim
            # is open).
            last = None if page.next_cursor is None else paging.decode(page.next_cursor, (int,))[0]
            return TaskRange(assignee, claimed_by, after, last)

        return await self._after_reaping(fetch, could_show, limit + 1)

    async def get(self, caller: Caller, task_id: int) -> m.Task:
        """One task."""

        async def fetch(uow: UnitOfWork) -> m.Task:
            return await require_task(uow, task_id)

        one = TaskRange(after=task_id - 1, through=task_id)
        return await self._after_reaping(fetch, lambda _: one, 1)

    async def events(
        self,
        caller: Caller,
        task_id: int,
        limit: int = DEFAULT_LIMIT,
        cursor: str | None = None,
    ) -> m.TaskEventsResponse:
        """A task's trail, oldest first; a page at a time."""

        async def work(uow: UnitOfWork) -> m.TaskEventsResponse:
            await require_task(uow, task_id)
            after = paging.key_after(cursor, int)
            trail, next_cursor = paging.cut(
                await uow.task_events.page(task_id, after, limit + 1),
                limit,
                lambda note: [note.event_id],
            )
            return m.TaskEventsResponse(task_id=task_id, events=trail, next_cursor=next_cursor)

        return await self.read(work)

    async def claim(self, caller: Caller, task_id: int, body: m.TaskClaim) -> m.Task:
        """Claim an open task; exactly one claimer wins, a repeat by the winner answers the same."""
        agent_id = caller.the_agent(body.agent_id)

        async def work(uow: UnitOfWork) -> m.Task:
            now = self.now()
            lease = body.lease_seconds or self.ctx.config.task_lease_seconds
            # Most claims are of an open task: claimed at once, and read only if that changed
            # nothing, to say why (or, when its lease had lapsed, to open it and claim it).
            claimed = await uow.tasks.claim_open(task_id, agent_id, now, lease)
            if claimed is None:
                task = await require_current_task(uow, task_id, now)
                self._require_assignable(task, agent_id)
                if task.status in HELD and task.claimed_by == agent_id:
                    return task
                if task.status != "open":
                    raise Conflict(f"task {task_id} is {task.status} and cannot be claimed")
                claimed = await uow.tasks.claim_open(task_id, agent_id, now, lease)
                if claimed is None:
                    raise StaleWrite("task changed")
            if agent_id != caller.agent_id:  # an agent's own token proves it registered
                await require_registered(uow, agent_id, self.ctx.registered)
            await _note_on_trail(
                uow, event_data(claimed), agent_id, "claimed", f"lease {lease}s", now
            )
            return claimed

        return await self.write(work)

    @staticmethod
    def _require_assignable(task: m.Task, agent_id: str) -> None:
        if task.assignee is not None and task.assignee != agent_id:
            raise PermissionDenied(
                f"task {task.task_id} is assigned to agent '{task.assignee}' only"
            )

    async def event(
        self,
        caller: Caller,
        task_id: int,
        body: m.TaskEventCreate,
    ) -> m.TaskEvent:
        """Record progress by the claimer; it moves the task to in_progress and renews the lease."""
        agent_id = caller.the_agent(body.agent_id)

        async def work(uow: UnitOfWork) -> m.TaskEvent:
            now = self.now()
            task = await require_current_task(uow, task_id, now)
            require_holder(task, agent_id)
            lease = task.lease_seconds or self.ctx.config.task_lease_seconds
            renewed = now + timedelta(seconds=lease)
            going = await uow.tasks.record_progress(task, body.progress, renewed, now)
            if going is None:
                raise StaleWrite("task changed")
            fields = body.model_dump() | {"agent_id": agent_id}
            event = m.TaskEvent(task_id=task_id, **fields, created_at=now)
            uow.publish(task_topic(task_id))
            if body.kind == INPUT_REQUIRED:  # a question to the task's asker: the feed says so
                await emit(uow, f"task.{INPUT_REQUIRED}", task_id, event_data(going), now)
            return await uow.task_events.insert(event)

        return await self.write_answer(work)

    async def complete(self, caller: Caller, task_id: int, body: m.TaskFinish) -> m.Task:
        """Complete a task held by the agent; completing twice answers the same."""

        async def completed(tasks: TasksStore, task: m.Task, now: datetime) -> Finished:
            return await tasks.complete(task, body.result, body.error, now), "completed"

        return await self._finish(caller, task_id, body, "completed", completed)

    async def fail(self, caller: Caller, task_id: int, body: m.TaskFinish) -> m.Task:
        """Fail a task held by the agent; with ``retry`` and attempts left it is open again."""

        async def failed(tasks: TasksStore, task: m.Task, now: datetime) -> Finished:
            if body.retry and task.attempts < task.max_attempts:
                return await tasks.retry(task, body.result, body.error, now), "retry"
            return await tasks.fail(task, body.result, body.error, now), "failed"

        return await self._finish(caller, task_id, body, "failed", failed)

    async def cancel(self, caller: Caller, task_id: int, body: m.TaskCancel) -> m.Task:
        """Cancel a task that is not finished: its creator or the operator; cancelling twice
        answers the same."""

        async def work(uow: UnitOfWork) -> m.Task:
            return await cancel_task(uow, caller, task_id, body.reason, self.now())

        return await self.write(work)

    async def _finish(
        self,
        caller: Caller,
        task_id: int,
        body: m.TaskFinish,
        final: m.TaskStatus,
        finish: Callable[[TasksStore, m.Task, datetime], Awaitable[Finished]],
    ) -> m.Task:
        """End the agent's hold on a task with ``finish`` (the task as changed, None if it
        changed since it was read, and the trail's kind); a repeat by the same agent once the
        task is ``final`` answers the same."""
        agent_id = caller.the_agent(body.agent_id)

        async def work(uow: UnitOfWork) -> m.Task:
            now = self.now()
            task = await require_current_task(uow, task_id, now)
            if task.status == final and task.claimed_by == agent_id:
                return task
            require_holder(task, agent_id)
            finished, kind = await finish(uow.tasks, task, now)
            if finished is None:
                raise StaleWrite("task changed")
            message = None if kind == "completed" else body.error
            await _note_on_trail(uow, event_data(finished), agent_id, kind, message, now)
            return finished

        return await self.write(work)


def _array(rows: Sequence[tuple[int, str]]) -> str:
    """The JSON array of rows' JSON, in their order."""
    return f"[{','.join(json for _, json in rows)}]"
