"""The stream tickets store: each method runs one named statement of
``sqlite/queries/stream_tickets.sql`` or ``postgres/queries/stream_tickets.sql``."""

from __future__ import annotations

from datetime import datetime

from relay_core import records
from relay_core.storage.queries import Statements


class StreamTicketsStore:
    """Stream tickets in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def get(self, ticket_hash: str) -> records.StreamTicket | None:
        return await self._sql.record(
            records.StreamTicket, "get_stream_ticket", ticket_hash=ticket_hash
        )

    async def insert(self, ticket: records.StreamTicket) -> None:
        await self._sql.run("insert_stream_ticket", **ticket.model_dump())

    async def delete_expired(self, now: datetime) -> int:
        """Forget the tickets expired by ``now``; how many."""
        return await self._sql.run("delete_expired_stream_tickets", now=now)
