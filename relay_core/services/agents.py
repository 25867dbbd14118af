"""Agents: register, heartbeat, list, inbox."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from relay_api import models as m
from relay_api.errors import NotFound
from relay_api.models import AGENT_TOKEN_PREFIX
from relay_api.params import DEFAULT_LIMIT
from relay_core import paging
from relay_core.auth import Caller, hash_secret, new_token
from relay_core.coalesce import Coalescer
from relay_core.json_records import JsonRecords
from relay_core.ports import StaleWrite, UnitOfWork
from relay_core.services.access import CREDENTIALS
from relay_core.services.base import Context, Registered, Service
from relay_core.services.events import announce_receipt, inbox_topic

UNACKED: tuple[m.MessageStatus, ...] = ("pending", "delivered")
# A heartbeat as recorded: the agent, and what it reported (JSON).
Beat = tuple[str, str]
BeatResult = m.AgentHeartbeatResult | NotFound


def with_presence(agent: m.Agent, now: datetime, ttl: float) -> m.Agent:
    """The agent with ``presence`` computed from its last heartbeat."""
    online = agent.last_seen_at is not None and now - agent.last_seen_at <= timedelta(seconds=ttl)
    return agent.model_copy(update={"presence": "online" if online else "offline"})


async def unacked_count(uow: UnitOfWork, agent_id: str) -> int:
    """How many direct messages wait for the agent's acknowledgement."""
    return await uow.messages.count_unacked_to(agent_id)


def _has_messages(inbox: m.InboxResponse) -> bool:
    return bool(inbox.count)


async def require_registered(uow: UnitOfWork, agent_id: str, known: Registered) -> None:
    """NotFound unless the agent is registered (cheaper than loading it, and free for an id
    this process has seen registered)."""
    if agent_id in known:
        return
    if not await uow.agents.exists(agent_id):
        raise NotFound(f"agent '{agent_id}' is not registered")
    known.add(agent_id)


async def require_agent(uow: UnitOfWork, agent_id: str) -> m.Agent:
    """The agent, or NotFound."""
    agent = await uow.agents.get(agent_id)
    if agent is None:
        raise NotFound(f"agent '{agent_id}' is not registered")
    return agent


class AgentsService(Service):
    """Registration, presence and inboxes."""

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._beats: Coalescer[Beat, m.AgentHeartbeatResult] = Coalescer(self._record_beats)

    def _present(self, agent: m.Agent) -> m.Agent:
        return with_presence(agent, self.now(), self.ctx.config.presence_ttl)

    async def register(self, caller: Caller, body: m.AgentRegister) -> m.AgentRegistered:
        """Register an agent (or update it); a token is issued when it has none or on rotation."""
        fields = body.model_dump(include=body.model_fields_set - {"agent_id", "rotate_token"})

        async def work(uow: UnitOfWork) -> m.AgentRegistered:
            now = self.now()
            agent = await uow.agents.get(body.agent_id)
            token = None
            if agent is None or agent.token_hash is None or body.rotate_token:
                token = new_token(AGENT_TOKEN_PREFIX)
            secret = {"token_hash": hash_secret(token)} if token else {}
            if secret:
                uow.publish(CREDENTIALS)
            if agent is None:
                agent = m.Agent(agent_id=body.agent_id, created_at=now, updated_at=now, **fields)
                agent = await uow.agents.insert(agent.model_copy(update=secret))
            else:
                token_hash = secret.get("token_hash")
                changed = await uow.agents.register_again(body.agent_id, fields, token_hash, now)
                if changed is None:
                    raise StaleWrite("agent vanished")
                agent = changed
            return m.AgentRegistered(**self._present(agent).model_dump(), token=token)

        return await self.write_answer(work)

    async def heartbeat(
        self, caller: Caller, agent_id: str, body: m.AgentHeartbeat
    ) -> m.AgentHeartbeatResult:
        """Record a sign of life; answer with the count of unacknowledged messages."""
        caller.require_self(agent_id)
        # An explicit null leaves the field as it was (metadata, at least, cannot be null).
        report = body.model_dump_json(include=body.model_fields_set, exclude_none=True)
        return await self._beats.run((agent_id, report))

    async def _record_beats(self, beats: list[Beat]) -> dict[Beat, BeatResult]:
        """Record racing heartbeats, of any agents, in one write made after they all arrived
        (a fleet's beats rarely share an agent: a write an agent was a unit of work a beat)."""

        async def work(uow: UnitOfWork) -> dict[Beat, BeatResult]:
            now = self.now()
            results: dict[Beat, BeatResult] = {}
            # In id order: PostgreSQL locks each row from its update to the commit, and two
            # instances' writes taking rows in one order never wait on each other crosswise.
            # Counted before the update, for as short a hold.
            for agent_id, report in sorted(beats):
                pending = await unacked_count(uow, agent_id)
                reported = json.loads(report)
                agent = await uow.agents.record_heartbeat(agent_id, reported, now)
                if agent is None:
                    results[agent_id, report] = NotFound(f"agent '{agent_id}' is not registered")
                    continue
                window = self.ctx.config.presence_ttl
                present = with_presence(agent, now, window).model_dump()
                beat = m.AgentHeartbeatResult(
                    **present | {"pending_messages": pending, "presence_window_seconds": window}
                )
                results[agent_id, report] = beat
            return results

        return await self.write(work)

    async def me(self, caller: Caller) -> m.Agent:
        """The agent the token belongs to, with its presence and its count of unacknowledged
        messages."""
        agent_id = caller.agent_id
        if agent_id is None:
            raise NotFound("the operator's token belongs to no agent")

        async def work(uow: UnitOfWork) -> m.Agent:
            agent = await uow.agents.get(agent_id)
            if agent is None:
                raise NotFound(f"agent '{agent_id}' is not registered")
            pending = await unacked_count(uow, agent_id)
            return self._present(agent).model_copy(update={"pending_messages": pending})

        return await self.read(work)

    async def list(
        self, caller: Caller, limit: int = DEFAULT_LIMIT, cursor: str | None = None
    ) -> m.AgentsResponse:
        """Registered agents by id, with their presence and their count of unacknowledged
        messages; a page at a time."""

        async def work(uow: UnitOfWork) -> m.AgentsResponse:
            after = paging.key_after(cursor, str)
            found, next_cursor = paging.cut(
                await uow.agents.page(after, limit + 1), limit, lambda agent: [agent.agent_id]
            )
            pending = await uow.messages.count_unacked_by_recipient(
                [agent.agent_id for agent in found]
            )
            agents = [
                self._present(agent).model_copy(
                    update={"pending_messages": pending.get(agent.agent_id, 0)}
                )
                for agent in found
            ]
            return m.AgentsResponse(agents=agents, next_cursor=next_cursor)

        return await self.read(work)

    async def set_a2a(self, caller: Caller, agent_id: str, body: m.A2AConfig) -> m.Agent:
        """Make the agent reachable over A2A, or no longer, with the skills its card lists:
        the agent itself or the operator."""
        if not caller.is_operator:
            caller.require_self(agent_id)

        async def work(uow: UnitOfWork) -> m.Agent:
            changed = await uow.agents.set_a2a(agent_id, body.model_dump(), self.now())
            if changed is None:
                raise NotFound(f"agent '{agent_id}' is not registered")
            return self._present(changed)

        return await self.write(work)

    async def inbox(
        self, caller: Caller, agent_id: str, limit: int = 100, wait: float = 0, peek: bool = False
    ) -> m.InboxResponse:
        """The agent's unacknowledged direct messages, oldest first; pending ones become
        delivered (unless ``peek``, which changes nothing). With ``wait``, an empty inbox is
        answered when a message arrives, or empty after that many seconds."""
        caller.require_self(agent_id)

        async def work(uow: UnitOfWork) -> m.InboxResponse:
            # Readers of one inbox at once take disjoint messages (each held until its read
            # commits) rather than locking the same rows in different orders: no deadlock.
            found = await uow.messages.unacked_to(agent_id, limit)
            messages = JsonRecords(m.Message, 0, "[]")
            if not found:  # found ones prove the agent exists: "to" is a foreign key
                await require_registered(uow, agent_id, self.ctx.registered)
            else:
                # Every read is a delivery: the count tells the agent it saw one before.
                read = [message_id for message_id, _, _ in found]
                await uow.messages.count_reads(agent_id, read)
                pending = [(mid, sender) for mid, status, sender in found if status == "pending"]
                if pending:
                    now = self.now()
                    await uow.messages.mark_delivered([mid for mid, _ in pending], now)
                    for mid, sender in pending:
                        await announce_receipt(uow, "message.delivered", mid, sender, agent_id, now)
                messages = await uow.messages.array(read)
            return m.InboxResponse.model_construct(
                agent_id=agent_id, messages=messages.as_field(), count=messages.length
            )

        async def look(uow: UnitOfWork) -> m.InboxResponse:
            messages = await uow.messages.inbox(agent_id, limit)
            if not messages.length:
                await require_registered(uow, agent_id, self.ctx.registered)
            return m.InboxResponse.model_construct(
                agent_id=agent_id, messages=messages.as_field(), count=messages.length
            )

        async def fetch() -> m.InboxResponse:
            if peek:
                return await self.read(look)
            # Delivery marks are advice (delivery is at least once): the answer does not wait
            # for them to reach the disk (docs/resources/storage.md says what a crash can lose).
            return await self.write(work, durable=False)

        return await self.long_poll((inbox_topic(agent_id),), wait, fetch, _has_messages)
