"""The outbox store: everything Relay tells the outside world after a commit, in one queue
table (webhook deliveries, which ``webhooks.WebhookDeliveriesStore`` adds and reads, and the
platforms' jobs). Each method runs one named statement of ``sqlite/queries/outbox.sql`` or
``postgres/queries/outbox.sql``."""

from __future__ import annotations

from datetime import datetime

from relay_api import models as m
from relay_core import records
from relay_core.storage.queries import Statements


class OutboxStore:
    """The outbox in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def add_platform_job(self, job: records.PlatformJob, now: datetime) -> None:
        """A platform's job, due now."""
        await self._sql.add(
            "insert_platform_job",
            None,
            bridge=job.bridge,
            event_type=job.kind,
            body=job.arguments_json(),
            now=now,
            traceparent=None,
        )

    async def due_platform_jobs(self, now: datetime, limit: int) -> list[records.PlatformJob]:
        """Up to ``limit`` platforms' jobs due by ``now``, by when they fall due then by id."""
        rows = await self._sql.rows("due_platform_jobs", now=now, limit=limit)
        return [records.PlatformJob.of_row(*row) for row in rows]

    async def record_attempt(
        self,
        delivery_id: int,
        attempts_before: int,
        *,
        status: m.WebhookDeliveryStatus,
        last_status_code: int | None,
        last_error: str | None,
        next_attempt_at: datetime | None,
    ) -> bool:
        """Whether the row (a webhook's delivery, a platform's job) was as it was handed out
        (pending, after ``attempts_before`` attempts), and is now as its next attempt left
        it."""
        changed = await self._sql.run(
            "record_outbox_attempt",
            delivery_id=delivery_id,
            attempts_before=attempts_before,
            attempts=attempts_before + 1,
            status=status,
            last_status_code=last_status_code,
            last_error=last_error,
            next_attempt_at=next_attempt_at,
        )
        return changed > 0

    async def finished_before(self, status: str, before: datetime, limit: int) -> list[int]:
        """The ids of up to ``limit`` rows in ``status`` made before ``before``, oldest
        first."""
        rows = await self._sql.rows("finished_outbox", status=status, before=before, limit=limit)
        return [delivery_id for (delivery_id,) in rows]

    async def delete_finished(self, delivery_ids: list[int]) -> int:
        """Delete those of the rows that are finished; how many."""
        return await self._sql.run("delete_finished_outbox", delivery_ids=delivery_ids)
