"""The task events store: the tasks' trails. Each method runs one named statement of
``sqlite/queries/task_events.sql`` or ``postgres/queries/task_events.sql``."""

from __future__ import annotations

from relay_api import models as m
from relay_core.storage.queries import Statements


class TaskEventsStore:
    """Task events in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def insert(self, event: m.TaskEvent) -> m.TaskEvent:
        """Store a new note; ``event`` is given its id and returned."""
        event.event_id = await self._sql.value("insert_task_event", **vars(event))
        return event

    async def note(self, event: m.TaskEvent, announced: m.Event) -> None:
        """Store a note and the feed's event that tells of it, held back on PostgreSQL (one
        statement for the two: a claim is four round trips, not five)."""
        await self._sql.add(
            "note_on_trail",
            None,
            **vars(event),
            event_kind=announced.kind,
            audience=announced.audience,
            subject_id=announced.subject_id,
            event_data=announced.data,
            event_traceparent=announced.traceparent,
        )

    async def page(self, task_id: int, after: int | None, limit: int) -> list[m.TaskEvent]:
        """Up to ``limit`` notes of a task's trail, oldest first, after ``after``."""
        return await self._sql.records(
            m.TaskEvent, "page_task_events", task_id=task_id, after=after, limit=limit
        )

    async def latest_of(self, task_id: int, kinds: list[str], limit: int) -> list[m.TaskEvent]:
        """The newest ``limit`` notes of a task's trail of these ``kinds``, newest first."""
        return await self._sql.records(
            m.TaskEvent, "latest_task_events_of", task_id=task_id, kinds=kinds, limit=limit
        )
