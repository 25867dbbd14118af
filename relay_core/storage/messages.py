"""The messages store: direct messages and room posts. Each method runs one named statement
of ``sqlite/queries/messages.sql`` or ``postgres/queries/messages.sql``."""

from __future__ import annotations

from datetime import datetime

from relay_api import models as m
from relay_core.json_records import JsonRecords
from relay_core.storage.queries import Statements


class MessagesStore:
    """Messages in one unit of work."""

    def __init__(self, sql: Statements) -> None:
        self._sql = sql

    async def get(self, message_id: int) -> m.Message | None:
        return await self._sql.record(m.Message, "get_message", message_id=message_id)

    async def insert(self, message: m.Message) -> m.Message:
        """Store a new message; ``message`` is given its id (and, starting a conversation, its
        thread's) and returned."""
        _numbered(message, await self._sql.value("insert_message", **vars(message)))
        return message

    async def add_direct(self, message: m.Message) -> None:
        """Store a new direct message and the event that tells its recipient of it
        (``message.created``, naming the message): held back on PostgreSQL, so ``message`` has
        its id once the unit has sent it (``UnitOfWork.flush``, or its commit)."""
        await self._sql.add(
            "insert_direct_message",
            lambda message_id: _numbered(message, message_id),
            **vars(message),
        )

    async def ack(self, message_id: int, agent_id: str, now: datetime) -> m.Message | None:
        """The message acknowledged by ``agent_id``, if it is its recipient and had not
        acknowledged it; else None, and nothing changed."""
        return await self._sql.record(
            m.Message, "ack_message", message_id=message_id, agent_id=agent_id, now=now
        )

    async def deliver(self, message_id: int, now: datetime) -> m.Message | None:
        """The message delivered, if it was pending; else None, and nothing changed."""
        return await self._sql.record(m.Message, "deliver_message", message_id=message_id, now=now)

    async def unacked_to(self, agent_id: str, limit: int) -> list[tuple[int, str, str]]:
        """The first ``limit`` unacknowledged messages to ``agent_id``, by id: each one's id,
        status and sender. On PostgreSQL they are held until the unit ends, and those another
        unit holds are left out."""
        rows = await self._sql.rows("unacked_to", agent_id=agent_id, limit=limit)
        return [(message_id, status, sender) for message_id, status, sender in rows]

    async def count_reads(self, agent_id: str, message_ids: list[int]) -> None:
        """The messages ``message_ids`` (ascending), just read by ``unacked_to(agent_id, …)``
        in this unit, read once more (``delivery_count``)."""
        await self._sql.run("count_reads", agent_id=agent_id, message_ids=message_ids)

    async def mark_delivered(self, message_ids: list[int], now: datetime) -> None:
        """Pending messages delivered at ``now``."""
        await self._sql.run("mark_delivered", message_ids=message_ids, now=now)

    async def array(self, message_ids: list[int]) -> JsonRecords[m.Message]:
        """The messages ``message_ids``, by id."""
        return await self._sql.json_array(m.Message, "messages_array", message_ids=message_ids)

    async def inbox(self, agent_id: str, limit: int) -> JsonRecords[m.Message]:
        """The first ``limit`` unacknowledged messages to ``agent_id``, by id."""
        return await self._sql.json_array(m.Message, "inbox_array", agent_id=agent_id, limit=limit)

    async def room_newest(
        self, room_id: str, thread_id: int | None, limit: int
    ) -> JsonRecords[m.Message]:
        """The newest ``limit`` posts of a room (of one conversation, with ``thread_id``),
        oldest of them first."""
        if thread_id is None:
            return await self._sql.json_array(m.Message, "room_array", room_id=room_id, limit=limit)
        return await self._sql.json_array(
            m.Message, "room_thread_array", room_id=room_id, thread_id=thread_id, limit=limit
        )

    async def thread_after(self, thread_id: int, after: int, limit: int) -> list[m.Message]:
        """Up to ``limit`` messages of a conversation after ``after``, oldest first."""
        return await self._sql.records(
            m.Message, "thread_after", thread_id=thread_id, after=after, limit=limit
        )

    async def first_reply_to_notification(self, notification_id: int) -> m.Message | None:
        return await self._sql.record(
            m.Message, "first_reply_to_notification", notification_id=notification_id
        )

    async def count_unacked_to(self, agent_id: str) -> int:
        return int(await self._sql.value("count_unacked_to", agent_id=agent_id))

    async def count_unacked_by_recipient(self, agent_ids: list[str]) -> dict[str, int]:
        """How many unacknowledged messages each of ``agent_ids`` has (those with any)."""
        return dict(await self._sql.rows("count_unacked_by_recipient", agent_ids=agent_ids))

    async def count_unacked(self) -> int:
        return int(await self._sql.value("count_unacked"))

    async def count_replies(self, notification_ids: list[int]) -> dict[int, int]:
        """How many answers each of the notifications got (those with any)."""
        return dict(
            await self._sql.rows("count_replies_by_notification", notification_ids=notification_ids)
        )


def _numbered(message: m.Message, message_id: int) -> None:
    """``message`` given the id the database gave it; a first message's conversation is its
    own (as the messages' insert trigger stores it)."""
    message.message_id = message_id
    if message.thread_id is None:
        message.thread_id = message_id
