"""The enrollments store: agents asking to join. Each method runs one named statement of
``sqlite/queries/enrollments.sql`` or ``postgres/queries/enrollments.sql``."""

from __future__ import annotations

from datetime import datetime

from relay_api import models as m
from relay_core.storage.queries import Statements


class EnrollmentsStore:
    """Enrollments in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def get(self, enroll_id: int) -> m.Enrollment | None:
        return await self._sql.record(m.Enrollment, "get_enrollment", enroll_id=enroll_id)

    async def by_id(self, enroll_ids: list[int]) -> list[m.Enrollment]:
        """The enrollments of ``enroll_ids`` (those that exist), by id."""
        return await self._sql.records(m.Enrollment, "enrollments_by_id", enroll_ids=enroll_ids)

    async def insert(self, enrollment: m.Enrollment) -> m.Enrollment:
        """Store a new enrollment; ``enrollment`` is given its id and returned."""
        enrollment.enroll_id = await self._sql.value("insert_enrollment", **vars(enrollment))
        return enrollment

    async def set_approval(self, enroll_id: int, approval_id: int) -> None:
        await self._sql.run("set_enrollment_approval", enroll_id=enroll_id, approval_id=approval_id)

    async def decide(
        self, enroll_id: int, status: m.EnrollmentStatus, decided_at: datetime
    ) -> m.Enrollment | None:
        """The enrollment decided, if it was pending; else None, and nothing changed."""
        return await self._sql.record(
            m.Enrollment,
            "decide_enrollment",
            enroll_id=enroll_id,
            status=status,
            decided_at=decided_at,
        )

    async def deliver_token(self, enroll_id: int) -> m.Enrollment | None:
        """The enrollment with its agent's token delivered, if it was not before; else None."""
        return await self._sql.record(m.Enrollment, "deliver_enrollment_token", enroll_id=enroll_id)

    async def past_time(self, before: datetime, limit: int) -> list[m.Enrollment]:
        """Up to ``limit`` pending enrollments made before ``before``, oldest first."""
        return await self._sql.records(
            m.Enrollment, "enrollments_past_time", before=before, limit=limit
        )
