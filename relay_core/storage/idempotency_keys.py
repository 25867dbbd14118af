"""The retry keys' store: the first answer to each create made with one, sealed. Each method
runs one named statement of ``sqlite/queries/idempotency_keys.sql`` or
``postgres/queries/idempotency_keys.sql``."""

from __future__ import annotations

from datetime import datetime

from relay_core import records
from relay_core.storage.queries import Statements


class IdempotencyKeysStore:
    """Kept answers in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def find(
        self, scope: str, key_hash: str, since: datetime
    ) -> records.IdempotencyRecord | None:
        """The answer kept for ``key_hash`` in ``scope`` after ``since``, if any."""
        return await self._sql.record(
            records.IdempotencyRecord,
            "find_idempotency_key",
            scope=scope,
            key_hash=key_hash,
            since=since,
        )

    async def forget_before(self, before: datetime) -> None:
        """Drop the answers kept before ``before``."""
        await self._sql.run("forget_idempotency_keys", before=before)

    async def insert(self, record: records.IdempotencyRecord) -> None:
        await self._sql.run("insert_idempotency_key", **vars(record))
