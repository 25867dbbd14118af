"""A2A calls: an agent reaches an external A2A agent through Relay (``POST /v1/a2a/send``).

Relay reads the agent's card, sends the message (answered at once, ``returnImmediately``), and
keeps the call: what was sent, what the agent answered, its task's state. While that task runs,
the follower (``follow``, one instance at a time) reads it again, at first every second, then
less often as it ages, until it ends, asks for input, or ``FOLLOW_FOR`` has passed; each change
is told to the caller's feed (``a2a.call.changed``).

Where a policy has a say in the call (an approval of kind ``a2a``, its payload the URL, text,
data and task id), the call is opened as an approval for it: approved at once, it is sent;
rejected, it is not; left to the operator, it waits (``awaiting_approval``) and the follower
sends it once approved (as the operator edited it) or marks it rejected. Where no policy speaks
to it, it is sent. Every call is in the audit log (``a2a.send``).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import datetime, timedelta

from relay_api import models as m
from relay_api.errors import NotFound, PermissionDenied
from relay_api.params import DEFAULT_LIMIT
from relay_core import paging, trace_context
from relay_core.auth import Caller
from relay_core.policy_rules import Facts
from relay_core.ports import RemoteAgents, RemoteFailed, UnitOfWork
from relay_core.services.base import SWEEP_BATCH, Service
from relay_core.services.events import emit, event_data
from relay_core.services.policies import open_approval, screen, speaks_to

log = logging.getLogger("relay.a2a")

# A task is followed this long after the call, then left as it was last read.
FOLLOW_FOR = timedelta(hours=24)
# A sending not finished by then (its process stopped) is the follower's to send again, with
# the same messageId; longer than the remote agents' client waits for an answer in all.
SENDING_LEASE = timedelta(seconds=120)
FIRST_LOOK = 1.0  # seconds between reads of a young task; a tenth of its age later, at most
LAST_LOOK = 60.0
FINAL = frozenset(
    {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED"}
)
INTERRUPTED = frozenset({"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"})


def _parts(text: str | None, data: m.JsonObject | None) -> list[m.JsonObject]:
    """A message's parts: its text, its data, or both."""
    return ([{"text": text}] if text is not None else []) + (
        [{"data": data}] if data is not None else []
    )


def outgoing(body: m.A2ASend) -> m.JsonObject:
    """The A2A Message Relay sends for ``body``."""
    message: m.JsonObject = {
        "messageId": str(uuid.uuid4()),
        "role": "ROLE_USER",
        "parts": _parts(body.text, body.data),
    }
    if body.task_id is not None:
        message["taskId"] = body.task_id
    if body.context_id is not None:
        message["contextId"] = body.context_id
    return message


def facts_of(body: m.A2ASend, agent_id: str) -> Facts:
    """What the policies look at in a call."""
    return Facts("a2a", agent_id, f"Send an A2A message to {body.url}", payload_of(body))


def payload_of(body: m.A2ASend) -> m.JsonObject:
    """A call as its approval shows it (and as the operator may edit it)."""
    return {"url": body.url, "text": body.text, "data": body.data, "task_id": body.task_id}


def next_look(call: m.A2ACall, now: datetime) -> datetime | None:
    """When the follower reads the call's task again: soon while it is young, seldom as it
    ages; None once it is past being followed."""
    if call.followed_until is None or now >= call.followed_until:
        return None
    age = (now - call.created_at).total_seconds()
    return now + timedelta(seconds=min(LAST_LOOK, max(FIRST_LOOK, age / 10)))


def answered(call: m.A2ACall, answer: m.JsonObject, now: datetime) -> m.A2ACall:
    """``call`` as the remote agent's ``answer`` (``{"task": …}`` or ``{"message": …}``) leaves
    it: a task's state and ids, followed while it runs."""
    task = answer.get("task")
    if isinstance(task, dict):
        state = str((task.get("status") or {}).get("state") or "")
        follows = state not in FINAL and state not in INTERRUPTED and bool(task.get("id"))
        until = call.followed_until or now + FOLLOW_FOR
        shown = call.model_copy(
            update={
                "status": "sent",
                "answer": answer,
                "state": state or None,
                "remote_task_id": task.get("id") or call.remote_task_id,
                "context_id": task.get("contextId") or call.context_id,
                "error": None,
                "followed_until": until if follows else None,
                "updated_at": now,
            }
        )
        return shown.model_copy(update={"due_at": next_look(shown, now) if follows else None})
    message = answer.get("message") or {}
    return call.model_copy(
        update={
            "status": "sent",
            "answer": answer,
            "remote_task_id": message.get("taskId") or call.remote_task_id,
            "context_id": message.get("contextId") or call.context_id,
            "error": None,
            "followed_until": None,
            "due_at": None,
            "updated_at": now,
        }
    )


def _told(before: m.A2ACall, after: m.A2ACall) -> bool:
    """Whether the caller's feed hears of the change: a reading that found the same task says
    nothing."""
    fields = ("status", "state", "answer", "error", "followed_until")
    return any(getattr(before, name) != getattr(after, name) for name in fields)


async def _announce(uow: UnitOfWork, call: m.A2ACall, now: datetime) -> None:
    await emit(uow, "a2a.call.changed", call.call_id, event_data(call), now, call.agent_id)


class A2ACallsService(Service):
    """Send messages to external A2A agents, follow their tasks, list the calls."""

    @property
    def _remote(self) -> RemoteAgents:
        if self.ctx.remote_agents is None:
            raise PermissionDenied("this server sends no A2A calls (no client for them)")
        return self.ctx.remote_agents

    async def send(self, caller: Caller, body: m.A2ASend) -> m.A2ACall:
        """Send ``body`` to the agent at its URL, or hold it for the approval a policy asks
        for; the call as it then stands: sent, failed (its ``error`` says why), awaiting
        approval or rejected."""
        remote = self._remote
        agent = caller.name
        facts = facts_of(body, agent)
        # The operator's own calls are not put to the operator's policies.
        screened = await screen(self, facts) if caller.agent_id is not None else None
        bearer = body.bearer.get_secret_value() if body.bearer is not None else None
        sealed = self.ctx.seal.seal(bearer) if bearer is not None else None

        async def work(uow: UnitOfWork) -> m.A2ACall:
            now = self.now()
            approval = None
            if screened is not None and await speaks_to(
                uow, self.ctx.rulebook, facts, screened, now
            ):
                asked = m.Approval(
                    kind="a2a",
                    title=facts.title,
                    payload=facts.payload,
                    requested_by=agent,
                    subject_id=agent,
                    audience=agent,
                    traceparent=trace_context.current(),
                    created_at=now,
                )
                approval = await open_approval(self, uow, asked, screened)
            call = m.A2ACall(
                agent_id=agent,
                url=body.url,
                status="sending",
                message=outgoing(body),
                remote_task_id=body.task_id,
                context_id=body.context_id,
                created_at=now,
                updated_at=now,
                due_at=now + SENDING_LEASE,
            )
            if approval is not None:
                call = _held_for(call, approval, now)
            call.call_id = await uow.a2a_calls.insert(call, sealed)
            await uow.actions.insert(
                m.Action(
                    agent_id=agent,
                    action="a2a.send",
                    target=body.url,
                    params={"call_id": call.call_id, "approval_id": call.approval_id},
                    outcome=call.status,
                    created_at=now,
                )
            )
            await _announce(uow, call, now)
            return call

        created = await self.write(work)
        after = created
        if created.status == "sending":
            after = await self._delivered(remote, created, bearer)

        async def answer(uow: UnitOfWork) -> m.A2ACall:
            # The create's answer, kept for its retry key: the call as sending left it (one
            # held for an approval, or refused, is as it was made: nothing to write).
            if after is created:
                return created
            return await self._keep(uow, created, after, after.updated_at) or created

        return await self.write_answer(answer)

    async def show(self, caller: Caller, call_id: int) -> m.A2ACall:
        """One call: its caller's, or the operator's to see."""

        async def work(uow: UnitOfWork) -> m.A2ACall:
            call = await uow.a2a_calls.get(call_id)
            if call is None or not (caller.is_operator or call.agent_id == caller.agent_id):
                raise NotFound(f"A2A call {call_id} does not exist")
            return call

        return await self.read(work)

    async def list(
        self,
        caller: Caller,
        agent_id: str | None = None,
        status: m.A2ACallStatus | None = None,
        limit: int = DEFAULT_LIMIT,
        cursor: str | None = None,
    ) -> m.A2ACallsResponse:
        """Calls, newest first: an agent's own; the operator's, every agent's or one's."""
        if not caller.is_operator:
            if agent_id is not None and agent_id != caller.agent_id:
                raise PermissionDenied("an agent sees its own A2A calls only")
            agent_id = caller.agent_id
        before = paging.key_after(cursor, int)

        async def work(uow: UnitOfWork) -> m.A2ACallsResponse:
            rows = await uow.a2a_calls.page(agent_id, status, before, limit + 1)
            page, next_cursor = paging.cut(rows, limit, lambda call: [call.call_id])
            return m.A2ACallsResponse(calls=page, next_cursor=next_cursor)

        return await self.read(work)

    async def follow(self, limit: int = SWEEP_BATCH) -> int:
        """Act on up to ``limit`` calls that are due, at once: send those approved, mark those
        refused, read again the tasks of those sent; how many were acted on."""
        remote = self._remote
        now = self.now()

        async def due(uow: UnitOfWork) -> list[m.A2ACall]:
            return await uow.a2a_calls.due(now, limit)

        calls = await self.read(due)
        acted = await asyncio.gather(
            *(self._act(remote, call) for call in calls), return_exceptions=True
        )
        for call, outcome in zip(calls, acted, strict=True):
            if isinstance(outcome, Exception):  # the next round tries it again
                log.error("A2A call %s: %s", call.call_id, outcome, exc_info=outcome)
        return len(calls)

    async def _act(self, remote: RemoteAgents, call: m.A2ACall) -> None:
        if call.status == "awaiting_approval":
            decided = await self._decided(call)
            if decided is not None and decided.status == "sending":
                bearer = await self._bearer(call.call_id)
                await self._save(decided, await self._delivered(remote, decided, bearer))
        elif call.status == "sending":
            bearer = await self._bearer(call.call_id)
            await self._save(call, await self._delivered(remote, call, bearer))
        elif call.endpoint is not None and call.remote_task_id is not None:
            await self._read_task(remote, call, await self._bearer(call.call_id))
        else:  # nothing to read again: it is due no more
            update = {"due_at": None, "followed_until": None, "updated_at": self.now()}
            await self._save(call, call.model_copy(update=update))

    async def _bearer(self, call_id: int) -> str | None:
        async def work(uow: UnitOfWork) -> str | None:
            return await uow.a2a_calls.bearer(call_id)

        sealed = await self.read(work)
        return self.ctx.seal.open(sealed) if sealed is not None else None

    async def _decided(self, call: m.A2ACall) -> m.A2ACall | None:
        """The call as its decided approval leaves it: to be sent (as approved), or
        rejected; None when another got there first."""

        async def work(uow: UnitOfWork) -> m.A2ACall | None:
            now = self.now()
            approval = (
                await uow.approvals.get(call.approval_id) if call.approval_id is not None else None
            )
            if approval is None:
                held = call.model_copy(
                    update={"status": "rejected", "error": "its approval is gone"}
                )
            else:
                held = _held_for(call, approval, now)
            held = held.model_copy(update={"updated_at": now})
            return await self._keep(uow, call, held, now)

        return await self.write(work)

    async def _delivered(
        self, remote: RemoteAgents, call: m.A2ACall, bearer: str | None
    ) -> m.A2ACall:
        """Read the agent's card and send it the call's message; the call as that leaves it
        (not kept yet)."""
        try:
            card = await remote.card(call.url)
            answer = await remote.send(card.endpoint, call.message, bearer)
        except RemoteFailed as failed:
            update = {"status": "failed", "error": str(failed), "due_at": None}
            return call.model_copy(update={**update, "updated_at": self.now()})
        named = call.model_copy(update={"remote_name": card.name, "endpoint": card.endpoint})
        return answered(named, answer, self.now())

    async def _read_task(self, remote: RemoteAgents, call: m.A2ACall, bearer: str | None) -> None:
        """Read the call's task again; keep what changed, and when to read it next."""
        assert call.endpoint is not None and call.remote_task_id is not None
        try:
            task = await remote.task(call.endpoint, call.remote_task_id, bearer)
        except RemoteFailed as failed:
            # Followed on: the agent may be down for a while. The error says so meanwhile.
            now = self.now()
            update = {"error": str(failed), "due_at": next_look(call, now), "updated_at": now}
            await self._save(call, call.model_copy(update=update))
            return
        await self._save(call, answered(call, {"task": task}, self.now()))

    async def _save(self, read: m.A2ACall, after: m.A2ACall) -> m.A2ACall:
        """Keep ``after``, the call ``read`` changed, unless the call changed meanwhile."""

        async def work(uow: UnitOfWork) -> m.A2ACall:
            return await self._keep(uow, read, after, after.updated_at) or read

        return await self.write(work)

    async def _keep(
        self, uow: UnitOfWork, read: m.A2ACall, after: m.A2ACall, now: datetime
    ) -> m.A2ACall | None:
        if not await uow.a2a_calls.save(after, read.updated_at):
            return None
        if _told(read, after):
            await _announce(uow, after, now)
        return after


def _held_for(call: m.A2ACall, approval: m.Approval, now: datetime) -> m.A2ACall:
    """``call`` as its approval stands: waiting for it, refused, or to be sent as approved."""
    held = call.model_copy(update={"approval_id": approval.approval_id})
    if approval.status == "pending":
        return held.model_copy(update={"status": "awaiting_approval", "due_at": None})
    if approval.status != "approved":
        error = f"approval {approval.approval_id} {approval.status}"
        return held.model_copy(update={"status": "rejected", "error": error, "due_at": None})
    if approval.approved_payload:
        # The operator edited it: its URL, text and data are sent as approved.
        try:
            edited = m.A2ASend.model_validate(
                {**(approval.payload or {}), **approval.approved_payload}
            )
        except ValueError as invalid:
            error = f"approval {approval.approval_id}'s edited message is not one: {invalid}"
            return held.model_copy(update={"status": "failed", "error": error, "due_at": None})
        message = held.message | {"parts": _parts(edited.text, edited.data)}
        held = held.model_copy(update={"url": edited.url, "message": message})
    return held.model_copy(update={"status": "sending", "due_at": now + SENDING_LEASE})
