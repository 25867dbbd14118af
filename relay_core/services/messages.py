"""Messages: send (direct or to a room), acknowledge, and read a conversation."""

from __future__ import annotations

import logging
from collections.abc import Callable

from relay_api import models as m
from relay_api.errors import Conflict, NotFound, PermissionDenied
from relay_core import paging, records, trace_context
from relay_core.auth import Caller
from relay_core.ports import StaleWrite, UnitOfWork
from relay_core.services import outbox
from relay_core.services.agents import require_registered
from relay_core.services.base import Service
from relay_core.services.events import announce_receipt, emit, inbox_topic, room_audience
from relay_core.topics import feed_topics

log = logging.getLogger("relay.messages")


async def require_room(uow: UnitOfWork, room_id: str) -> m.Room:
    """The room, or NotFound."""
    room = await uow.rooms.get(room_id)
    if room is None:
        raise NotFound(f"room '{room_id}' does not exist")
    return room


async def require_member(uow: UnitOfWork, caller: Caller, room: m.Room, agent_id: str) -> None:
    """Refuse a non-member (the operator is always let in)."""
    if caller.is_operator:
        return
    if not await uow.rooms.is_member(room.room_id, agent_id):
        raise PermissionDenied(f"agent '{agent_id}' is not a member of room '{room.room_id}'")


async def require_writable(uow: UnitOfWork, room: m.Room) -> None:
    """Refuse a post to a room whose space is archived."""
    if room.space_id is None:
        return
    space = await uow.spaces.get(room.space_id)
    if space is not None and space.status == "archived":
        raise Conflict(f"room '{room.room_id}' is read-only: space '{space.space_id}' is archived")


async def add_direct_message(uow: UnitOfWork, message: m.Message) -> None:
    """Store a direct message, tell the recipient's feed (``message.created``), and wake its
    long-polled inbox, once this commits (the message's id is known once the unit is flushed
    or committed)."""
    assert message.to is not None
    await uow.messages.add_direct(message)
    for topic in (*feed_topics(message.to), inbox_topic(message.to)):
        uow.publish(topic)


async def announce_post(uow: UnitOfWork, post: m.Message) -> None:
    """Tell the room's members' feeds of a post (a channel pushes it to their sessions)."""
    assert post.room_id is not None
    data = {"from_agent": post.from_agent, "room_id": post.room_id, "thread_id": post.thread_id}
    await emit(
        uow, "message.posted", post.message_id, data, post.created_at, room_audience(post.room_id)
    )


async def _may_read(uow: UnitOfWork, caller: Caller, message: m.Message) -> bool:
    """Whether the caller may read this one message (``reader`` for one, without the rooms)."""
    me = caller.name
    if caller.is_operator or me in (message.to, message.from_agent):
        return True
    if message.room_id is None:
        return False
    return await uow.rooms.is_member(message.room_id, me)


# The most rows of a thread one request reads past that the caller may not read: a page that
# reaches it ends there, with a cursor to go on from.
THREAD_SCAN = 10_000


async def reader(uow: UnitOfWork, caller: Caller) -> Callable[[m.Message], bool]:
    """Whether the caller may read a message, as the API lets it: the operator every one, an
    agent the direct messages it sent or received and the posts of the rooms it joined."""
    if caller.is_operator:
        return lambda message: True
    me = caller.name
    rooms = set(await uow.rooms.rooms_of(me))
    return lambda message: message.to == me or message.from_agent == me or message.room_id in rooms


async def _readable_after(
    uow: UnitOfWork,
    thread_id: int,
    after: int,
    limit: int,
    readable: Callable[[m.Message], bool],
) -> tuple[list[m.Message], int | None]:
    """Up to ``limit + 1`` messages of the thread after ``after`` that the caller may read, and
    where the reading stopped short if it read ``THREAD_SCAN`` rows first (else None)."""
    found: list[m.Message] = []
    scanned = 0
    while scanned < THREAD_SCAN:
        batch = await uow.messages.thread_after(thread_id, after, limit + 1)
        for message in batch:
            after = message.message_id
            if readable(message):
                found.append(message)
                if len(found) > limit:
                    return found, None
        scanned += len(batch)
        if len(batch) <= limit:
            return found, None
    return found, after


class MessagesService(Service):
    """Direct messages and room posts."""

    async def send(self, caller: Caller, body: m.MessageCreate) -> m.Message:
        """Send a direct message or post to a room, as the caller."""
        if body.from_agent is not None and not caller.is_operator:
            caller.require_self(body.from_agent)
        sender = body.from_agent or caller.name

        async def work(uow: UnitOfWork) -> m.Message:
            thread_id = None
            if body.reply_to is not None:
                answered = await uow.messages.get(body.reply_to)
                # One the caller cannot read is answered as if it did not exist: a reply would
                # put the caller's text into a conversation it is not in, and a 403 would say
                # that the id exists.
                if answered is None or not await _may_read(uow, caller, answered):
                    raise NotFound(f"message {body.reply_to} (reply_to) does not exist")
                thread_id = answered.thread_id
            if body.to is not None:
                await require_registered(uow, body.to, self.ctx.registered)
                status: m.MessageStatus = "pending"
            else:
                assert body.room_id is not None  # MessageCreate guarantees one destination
                room = await require_room(uow, body.room_id)
                await require_member(uow, caller, room, sender)
                await require_writable(uow, room)
                status = "posted"
            # The body's fields as validated: model_dump would copy each once more.
            stamp = {
                "from_agent": sender,
                "status": status,
                "created_at": self.now(),
                "traceparent": trace_context.current(),
            }
            message = m.Message(**(body.__dict__ | stamp), thread_id=thread_id)
            if message.to is not None:
                await add_direct_message(uow, message)
                return message
            message = await uow.messages.insert(message)
            await announce_post(uow, message)
            if self.ctx.config.mirror_bridges:
                await self._mirror(uow, message, room.room_id)
            return message

        return await self.write_answer(work)

    async def _mirror(self, uow: UnitOfWork, message: m.Message, room_id: str) -> None:
        """Copy a room post to the room's thread on each platform that mirrors rooms, once this
        unit commits (through the outbox); the local platform shows nothing."""
        showing = {bridge.name for bridge in outbox.showing(self.ctx.bridges)}
        jobs = [
            records.PlatformJob(
                thread.bridge,
                "mirror",
                message.message_id,
                text=f"{message.from_agent}: {message.text}",
                target=thread.platform_thread_id,
            )
            for thread in await uow.room_threads.of_room(room_id)
            if thread.bridge in self.ctx.config.mirror_bridges and thread.bridge in showing
        ]
        await outbox.add_jobs(uow, jobs, self.now())

    async def thread(
        self, caller: Caller, message_id: int, limit: int = 100, cursor: str | None = None
    ) -> m.ThreadResponse:
        """The conversation ``message_id`` belongs to, as far as the caller may read it: its
        first message and every answer, oldest first; a page at a time."""
        after = paging.decode(cursor, (int,))[0] if cursor is not None else 0

        async def work(uow: UnitOfWork) -> m.ThreadResponse:
            message = await uow.messages.get(message_id)
            if message is None:
                raise NotFound(f"message {message_id} does not exist")
            thread_id = message.thread_id or message.message_id
            readable = await reader(uow, caller)
            found, scanned_to = await _readable_after(uow, thread_id, after, limit, readable)
            if not found and cursor is None:
                raise NotFound(f"message {message_id} does not exist")  # none of it is yours
            if len(found) > limit:
                next_cursor = paging.encode([found[limit - 1].message_id])
            elif scanned_to is not None:
                next_cursor = paging.encode([scanned_to])
            else:
                next_cursor = None
            return m.ThreadResponse(
                thread_id=thread_id, messages=found[:limit], next_cursor=next_cursor
            )

        return await self.read(work)

    async def show(self, caller: Caller, message_id: int) -> m.Message:
        """One message with its receipts, to its sender, its recipient (a room's members for a
        post) and the operator; NotFound to anyone else. Its recipient reading it is a
        delivery."""

        async def look(uow: UnitOfWork) -> m.Message:
            message = await uow.messages.get(message_id)
            if message is None or not await _may_read(uow, caller, message):
                raise NotFound(f"message {message_id} does not exist")
            return message

        async def deliver(uow: UnitOfWork) -> m.Message:
            now = self.now()
            delivered = await uow.messages.deliver(message_id, now)
            if delivered is None:  # delivered by another read meanwhile
                return await look(uow)
            await announce_receipt(
                uow, "message.delivered", message_id, delivered.from_agent, caller.name, now
            )
            return delivered

        message = await self.read(look)
        if message.status == "pending" and message.to == caller.name and not caller.is_operator:
            return await self.write(deliver)
        return message

    async def ack(self, caller: Caller, message_id: int, body: m.MessageAck) -> m.Message:
        """Acknowledge a direct message; acknowledging twice answers the same."""
        agent_id = caller.the_agent(body.agent_id)

        async def work(uow: UnitOfWork) -> m.Message:
            # Most acks are of an unacked message of the caller: ack it first, read it only if
            # it was not (missing, another's, or acked before).
            now = self.now()
            acked = await uow.messages.ack(message_id, agent_id, now)
            if acked is not None:
                sender = acked.from_agent
                await announce_receipt(uow, "message.acked", message_id, sender, agent_id, now)
                return acked
            message = await uow.messages.get(message_id)
            if message is None:
                raise NotFound(f"message {message_id} does not exist")
            if message.to != agent_id:
                raise PermissionDenied(f"only the recipient may acknowledge message {message_id}")
            if message.status == "acked":
                return message
            raise StaleWrite("message changed")

        return await self.write(work)
