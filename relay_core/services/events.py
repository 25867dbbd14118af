"""The event feed: what happened, read by cursor (long-poll or SSE).

Events are written in the same transaction as the change they describe (an outbox), so the feed
never tells of a change that was rolled back and never misses one that committed. What
committed before another change began comes before it; storage makes an event visible only
when no event can later appear below it (docs/resources/events.md), so a cursor never skips one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel

from relay_api import models as m
from relay_core import records, trace_context
from relay_core.auth import TICKET_PREFIX, TICKET_SECONDS, Caller, hash_secret, new_token
from relay_core.ports import UnitOfWork
from relay_core.services.base import Service, lost_hint_pause
from relay_core.topics import FEED, feed_topic, membership_topic

STREAM_PAGE = 100  # events a stream reads at a time


def task_topic(task_id: int) -> str:
    """The hub topic of a task's changes: what waits on one task (an A2A caller) wakes on it."""
    return f"task:{task_id}"


def inbox_topic(agent_id: str) -> str:
    """The hub topic that wakes an agent's long-polled inbox."""
    return f"inbox:{agent_id}"


async def emit(
    uow: UnitOfWork,
    kind: str,
    subject_id: str | int,
    data: dict[str, Any],
    now: datetime,
    audience: str = m.EVERYONE,
) -> None:
    """Record an event in the caller's transaction and wake the feed's waiters on commit."""
    await uow.announce(new_event(kind, subject_id, data, now, audience))


def new_event(
    kind: str,
    subject_id: str | int,
    data: dict[str, Any],
    now: datetime,
    audience: str = m.EVERYONE,
) -> m.Event:
    """An event of the feed, made at ``now`` in the trace of the work that makes it."""
    return m.Event(
        kind=kind,
        audience=audience,
        subject_id=str(subject_id),
        data=data,
        created_at=now,
        traceparent=trace_context.current(),
    )


def room_audience(room_id: str) -> str:
    """The audience of a room's events: its members (the feed adds the rooms the caller
    joined to what it reads)."""
    return f"room:{room_id}"


async def announce_receipt(
    uow: UnitOfWork, kind: str, message_id: int, sender: str, to: str, at: datetime
) -> None:
    """Tell a direct message's sender's feed that it was delivered or acknowledged."""
    field = "delivered_at" if kind == "message.delivered" else "acked_at"
    data = {"message_id": message_id, "to": to, field: at.isoformat()}
    await emit(uow, kind, message_id, data, at, sender)


async def audiences(uow: UnitOfWork, agent_id: str) -> list[str]:
    """The audiences whose events an agent reads: everyone's, its own, and its rooms'."""
    rooms = await uow.rooms.rooms_of(agent_id)
    return [m.EVERYONE, agent_id, *(room_audience(room) for room in rooms)]


# What an event says about the resource it concerns, by the resource's type.
EVENT_FIELDS: dict[type[BaseModel], tuple[str, ...]] = {
    m.Task: ("task_id", "status", "assignee", "claimed_by"),
    m.Approval: (
        "approval_id",
        "kind",
        "status",
        "subject_id",
        "approved_payload",
        "remembered_policy_id",
        "note",
        "interrupt",
        "answer",
    ),
    m.Intervention: ("intervention_id", "status", "approval_status", "approval_id"),
    m.A2ACall: ("call_id", "status", "approval_id", "remote_task_id", "state", "error"),
}


def event_data(resource: BaseModel) -> dict[str, Any]:
    """What an event says about ``resource``: its id and the fields that tell its state."""
    return event_data_of(type(resource), vars(resource))


def event_data_of(model: type[BaseModel], values: Mapping[str, Any]) -> dict[str, Any]:
    """What an event says about a ``model`` whose fields have ``values`` (at least those the
    event tells)."""
    return {name: values[name] for name in EVENT_FIELDS[model]}


async def announce_approval(
    uow: UnitOfWork,
    approval: m.Approval,
    kind: str,
    now: datetime,
    more: dict[str, Any] | None = None,
) -> None:
    """An approval event, for the operator and the agent that asked (with ``more`` data); the
    task it holds up, if any, is told it changed."""
    data = event_data(approval) | (more or {})
    await emit(uow, kind, approval.approval_id, data, now, approval.requested_by)
    if approval.task_id is not None:
        uow.publish(task_topic(approval.task_id))


class EventsService(Service):
    """Read the feed."""

    async def _page(
        self, uow: UnitOfWork, after: int | None, limit: int, readable: list[str] | None
    ) -> m.EventsResponse:
        if after is None:
            return m.EventsResponse(events=[], cursor=await uow.events.newest_id(readable))
        events = await uow.events.after(after, limit, readable)
        return m.EventsResponse(events=events, cursor=events[-1].event_id if events else after)

    async def list(
        self, caller: Caller, after: int | None = None, wait: float = 0, limit: int = 100
    ) -> m.EventsResponse:
        """Events the caller may see after the cursor (none given: from now), waiting up to
        ``wait`` seconds for the first one."""
        cursor = after
        # The audiences an agent reads (its rooms'), found once a call, not at every wake of
        # its long-poll: a room it joins while it waits is read from its next call. It waits
        # on their topics alone, so that an event for another agent does not wake it.
        readable: list[str] | None = None
        topics: tuple[str, ...] = (FEED,)
        if not caller.is_operator:
            readable = await self.read(lambda uow: audiences(uow, caller.name))
            topics = tuple(feed_topic(audience) for audience in readable)

        async def fetch() -> m.EventsResponse:
            nonlocal cursor

            async def work(uow: UnitOfWork) -> m.EventsResponse:
                return await self._page(uow, cursor, limit, readable)

            page = await self.read(work)
            cursor = page.cursor
            return page

        return await self.long_poll(topics, wait, fetch, lambda page: bool(page.events))

    async def ticket(self, caller: Caller) -> m.StreamTicket:
        """A ticket that opens the caller's event stream for the next minute, for a browser's
        EventSource, which cannot send Authorization: ``/v1/events/stream?ticket=…``. It is a
        random value, kept by its hash, that opens nothing else; the expired ones go as new
        ones are issued."""
        ticket = new_token(TICKET_PREFIX)
        now = self.now()
        expires = now + timedelta(seconds=TICKET_SECONDS)

        async def work(uow: UnitOfWork) -> None:
            await uow.stream_tickets.delete_expired(now)
            await uow.stream_tickets.insert(
                records.StreamTicket(
                    ticket_hash=hash_secret(ticket),
                    kind=caller.kind,
                    agent_id=caller.agent_id,
                    token_hash=caller.token_hash,
                    expires_at=expires,
                )
            )

        await self.write(work)
        return m.StreamTicket(ticket=ticket, expires_at=expires)

    async def stream(
        self, caller: Caller, after: int | None, ticket: str | None = None
    ) -> AsyncIterator[m.Event]:
        """Events after ``after`` as they commit, forever; none given: from where the feed
        stands now, before the stream is answered, so that an event committed once the client
        holds the answer is in it however late the stream's first read comes. (``ticket`` is
        how a browser authenticated; the server read it before. Keep-alives are the
        transport's.)"""
        state = _Reader(caller, after)
        await self.read(state.start, following=True)
        return self._follow(state)

    async def _follow(self, state: _Reader) -> AsyncIterator[m.Event]:
        """The events after ``state``'s cursor, forever; ends when the service shuts down.

        An idle stream reads nothing: it waits on its audiences' topics (an event for another
        agent does not wake it), and reads the feed when woken, or now and then
        (``lost_hint_pause``) where a hint can be lost. A room joined (``membership_topic``)
        makes it read its audiences again and subscribe to theirs."""
        hub = self.ctx.storage.hub
        missable = self.ctx.storage.hints_missable  # then a read now and then; else only woken
        while not hub.closed:
            with hub.subscribe(*state.topics) as subscription:
                # A room joined before the subscription began is seen at the first read.
                state.checked = False
                while not hub.closed:
                    # Catching up (a stream back after a restart, with all the others), a read
                    # takes its turn with the other streams' (``following``); once caught up,
                    # a delivery does not wait for theirs.
                    page = await self.read(
                        lambda uow: state.page(self, uow), following=not state.caught_up
                    )
                    if page is None:
                        break  # its audiences changed: subscribe to the new ones
                    for event in page.events:
                        yield event
                    if len(page.events) == STREAM_PAGE:
                        continue  # more may wait; a page short of full read all there was
                    state.caught_up = True
                    await subscription.wait(lost_hint_pause() if missable else None)
                    if state.membership in subscription.heard:
                        state.checked = False  # read its audiences again with the feed
                    subscription.heard.clear()


class _Reader:
    """One stream's place in the feed: its cursor, and the audiences it reads."""

    def __init__(self, caller: Caller, after: int | None) -> None:
        self.caller = caller
        self.cursor = after
        self.readable: list[str] | None = None
        self.checked = False  # whether the audiences are known to be current
        self.caught_up = False  # whether a read found less than a page: all there was
        self.membership = membership_topic(caller.name)

    @property
    def topics(self) -> tuple[str, ...]:
        """What wakes the stream: every event for the operator; for an agent, its audiences'
        events and its rooms changing."""
        if self.readable is None:
            return (FEED,)
        return (self.membership, *(feed_topic(a) for a in self.readable))

    async def look_up_audiences(self, uow: UnitOfWork) -> None:
        if not self.caller.is_operator:
            self.readable = await audiences(uow, self.caller.name)

    async def start(self, uow: UnitOfWork) -> None:
        """Look up the audiences, and with no cursor given put it at the newest event the
        caller may read."""
        await self.look_up_audiences(uow)
        if self.cursor is None:
            self.cursor = await uow.events.newest_id(self.readable)

    async def page(self, service: EventsService, uow: UnitOfWork) -> m.EventsResponse | None:
        """The next events, and the cursor moved past them; None when the agent reads other
        audiences than the stream waits on (looked at unless ``checked`` already), which are
        then the ones it reads."""
        if not self.checked and not self.caller.is_operator:
            readable = await audiences(uow, self.caller.name)
            if readable != self.readable:
                self.readable = readable
                return None
            self.checked = True
        page = await service._page(uow, self.cursor, STREAM_PAGE, self.readable)
        self.cursor = page.cursor
        return page
