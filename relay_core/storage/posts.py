"""The posts store: what each operator platform did with a notification or an approval.
Each method runs one named statement of ``sqlite/queries/posts.sql`` or
``postgres/queries/posts.sql``."""

from __future__ import annotations

from relay_core import records
from relay_core.storage.queries import Statements


class PostsStore:
    """Posts in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def insert(self, post: records.Post) -> None:
        await self._sql.run("insert_post", **vars(post))

    async def of_subjects(self, subject: str, subject_ids: list[int]) -> list[records.Post]:
        """The posts of each of the notifications or approvals ``subject_ids``, oldest first."""
        return await self._sql.records(
            records.Post, "posts_of_subjects", subject=subject, subject_ids=subject_ids
        )

    async def subject_of(self, subject: str, bridge: str, platform_message_id: str) -> int | None:
        """The id of the notification or approval a platform's message carries, if any."""
        rows = await self._sql.rows(
            "subject_of_post",
            subject=subject,
            bridge=bridge,
            platform_message_id=platform_message_id,
        )
        return rows[0][0] if rows else None
