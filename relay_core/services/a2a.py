"""A2A: an agent reachable over the Agent2Agent protocol is asked for work as Relay tasks.

A message sent to the agent becomes a task assigned to it, created by the asker; a message
about a task already asked (its id) is noted on the task's trail and sent to the agent as a
direct message. The conversation is the trail's notes of two kinds: ``message`` (the asker's)
and ``input_required`` (the agent's question, recorded as a task event of that kind). Only the
asker and the operator see a task over A2A. The protocol's own shapes are the server's
(``relay_server.a2a``); this module speaks in tasks, notes and plain values.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from relay_api import models as m
from relay_api.errors import Conflict, NotFound
from relay_core import webhooks as hooks
from relay_core.auth import Caller
from relay_core.ports import UnitOfWork
from relay_core.records import A2ATask
from relay_core.services.base import REPOLL_SECONDS, Service
from relay_core.services.events import task_topic
from relay_core.services.messages import add_direct_message
from relay_core.services.tasks import FINISHED, INPUT_REQUIRED, add_task, cancel_task
from relay_core.services.webhooks import add_endpoint, require_deliverable
from relay_core.storage.a2a_tasks import A2ATaskFilter

ASKED = "message"  # a note of the asker's on the trail
QUESTION = INPUT_REQUIRED  # the agent's question to the asker
CONVERSATION = [ASKED, QUESTION]
TITLE_CHARACTERS = 200
HISTORY = 100  # the latest notes of a task's conversation read with it
DIRECTORY_SIZE = 500  # agents listed on Relay's own card
PUSH_CONFIGS = 10  # a task's push-notification configs at most
REPLACED = "replaced by an A2A push config of the same id"
DELETED = "deleted by its A2A caller"


@dataclass(frozen=True)
class A2AMessage:
    """What an asker sent: its text (the text parts, joined), every part as the protocol's
    JSON, its id, and the conversation (context) it names, if any."""

    text: str
    parts: list[dict[str, Any]]
    message_id: str
    context_id: str | None = None
    task_id: int | None = None


@dataclass(frozen=True)
class A2AConversation:
    """A task asked over A2A and its conversation's latest notes, oldest first (its latest
    one at least, which its state needs)."""

    task: A2ATask
    turns: list[m.TaskEvent] = field(default_factory=list)

    @property
    def question(self) -> m.TaskEvent | None:
        """The agent's question the asker has not answered, while the task is not finished."""
        if self.task.status in FINISHED or not self.turns or self.turns[-1].kind != QUESTION:
            return None
        return self.turns[-1]

    @property
    def waiting(self) -> m.Approval | None:
        """The operator's approval the task waits on (the newest pending one that names it),
        while it is not finished."""
        return None if self.task.status in FINISHED else self.task.waiting_on

    @property
    def settled(self) -> bool:
        """Finished, or waiting for the asker or the operator: where a blocking send answers."""
        finished = self.task.status in FINISHED
        return finished or self.question is not None or self.waiting is not None


@dataclass(frozen=True)
class A2APushConfig:
    """Where a task's changes are pushed for its caller: the config's id, the URL, and what is
    sent with each notification (a token; credentials, with their scheme)."""

    config_id: str
    url: str
    token: str | None = None
    scheme: str | None = None
    credentials: str | None = None


def _push_config(endpoint: m.Webhook) -> A2APushConfig:
    """A config as the caller sees it again: its secrets are not shown."""
    assert endpoint.a2a_push is not None  # one of pushing()'s
    push = endpoint.a2a_push
    return A2APushConfig(push.config_id, endpoint.url, scheme=push.scheme)


def _title(message: A2AMessage, caller: Caller) -> str:
    first_line = message.text.strip().split("\n", 1)[0].strip()
    if not first_line:
        return f"A2A request from {caller.name}"
    if len(first_line) <= TITLE_CHARACTERS:
        return first_line
    return first_line[: TITLE_CHARACTERS - 1] + "…"


class A2AService(Service):
    """Agents asked for work over A2A."""

    async def reachable(self, agent_id: str) -> m.Agent:
        """The agent, if it is reachable over A2A; else NotFound."""

        async def work(uow: UnitOfWork) -> m.Agent:
            return await _require_reachable(uow, agent_id)

        return await self.read(work)

    async def directory(self) -> list[m.Agent]:
        """The agents reachable over A2A, by id (the first ``DIRECTORY_SIZE``)."""

        async def work(uow: UnitOfWork) -> list[m.Agent]:
            return await uow.agents.reachable_over_a2a(DIRECTORY_SIZE)

        return await self.read(work)

    async def send(
        self,
        caller: Caller,
        agent_id: str,
        message: A2AMessage,
        push: A2APushConfig | None = None,
    ) -> A2AConversation:
        """A new task asked of the agent (the same one when a message id is sent again), or,
        with ``message.task_id``, the message noted on that task and sent to the agent; with
        ``push``, the task's changes pushed there too (its address refused first, if it is)."""
        if push is not None:
            await require_deliverable(self.ctx.config, push.url, "params")

        async def asked(uow: UnitOfWork) -> int:
            now = self.now()
            if message.task_id is not None:
                return await _tell(uow, caller, agent_id, message, now)
            known = await uow.a2a_tasks.of_message(caller.name, agent_id, message.message_id)
            if known is not None:
                return known
            payload = {"text": message.text, "a2a": {"parts": message.parts}}
            body = m.TaskCreate(title=_title(message, caller), payload=payload, assignee=agent_id)
            task = await add_task(uow, caller.name, body, now)
            context_id = message.context_id or str(uuid.uuid4())
            await uow.a2a_tasks.add(task, agent_id, caller.name, context_id, message.message_id)
            return task.task_id

        async def work(uow: UnitOfWork) -> A2AConversation:
            await _require_reachable(uow, agent_id)
            task_id = await asked(uow)
            if push is not None:
                await self._push(uow, caller, agent_id, task_id, push)
            return await _conversation(uow, caller, agent_id, task_id, HISTORY)

        return await self.write(work)

    async def conversation(
        self, caller: Caller, agent_id: str, task_id: int, turns: int = HISTORY
    ) -> A2AConversation:
        """A task the caller asked of the agent, with its latest ``turns`` notes."""

        async def work(uow: UnitOfWork) -> A2AConversation:
            return await _conversation(uow, caller, agent_id, task_id, turns)

        return await self.read(work)

    async def tasks(
        self,
        caller: Caller,
        among: A2ATaskFilter,
        before: tuple[datetime, int] | None,
        limit: int,
    ) -> tuple[list[A2AConversation], int]:
        """Up to ``limit`` tasks ``among`` those the caller (the operator: anyone) asked, the
        most recently changed first, after ``before``, each with its latest note; and how
        many there are in all."""
        if not caller.is_operator:
            among = dataclasses.replace(among, caller=caller.name)

        async def work(uow: UnitOfWork) -> tuple[list[A2AConversation], int]:
            await _require_reachable(uow, among.agent_id)
            found = await uow.a2a_tasks.page(among, before, limit)
            shown = [A2AConversation(task, _latest(task)) for task in found]
            return shown, await uow.a2a_tasks.count(among)

        return await self.read(work)

    async def cancel(self, caller: Caller, agent_id: str, task_id: int) -> A2AConversation:
        """Cancel a task the caller asked of the agent (Conflict once it is finished)."""

        async def work(uow: UnitOfWork) -> A2AConversation:
            await _conversation(uow, caller, agent_id, task_id, 0)
            why = f"cancelled over A2A by {caller.name}"
            await cancel_task(uow, caller, task_id, why, self.now())
            return await _conversation(uow, caller, agent_id, task_id, HISTORY)

        return await self.write(work)

    async def push_to(
        self, caller: Caller, agent_id: str, task_id: int, config: A2APushConfig
    ) -> None:
        """Push the task's changes to ``config``'s URL (checked as the webhook sender checks
        an endpoint's), for the caller; one of the same id is replaced. At most
        ``PUSH_CONFIGS`` a task."""
        await require_deliverable(self.ctx.config, config.url, "params")

        async def work(uow: UnitOfWork) -> None:
            await _conversation(uow, caller, agent_id, task_id, 0)
            await self._push(uow, caller, agent_id, task_id, config)

        await self.write(work)

    async def _push(
        self, uow: UnitOfWork, caller: Caller, agent_id: str, task_id: int, config: A2APushConfig
    ) -> None:
        """Add ``config`` to the task's push configs, an endpoint of the webhook sender that
        takes the task's events (its token and credentials sealed), in place of the caller's
        of the same id; Conflict past ``PUSH_CONFIGS``."""
        now = self.now()
        kept = await uow.webhooks.pushing(task_id)
        same = _pushes_of(kept, caller, config.config_id)
        if len(kept) - len(same) >= PUSH_CONFIGS:
            raise Conflict(f"task {task_id} has {PUSH_CONFIGS} push configs already")
        for replaced in same:
            await uow.webhooks.disable(replaced.webhook_id, REPLACED, now)
        seal = self.ctx.seal
        push = m.A2APushKept(
            config_id=config.config_id,
            caller=caller.name,
            agent_id=agent_id,
            token=config.token and seal.seal(config.token),
            scheme=config.scheme,
            credentials=config.credentials and seal.seal(config.credentials),
        )
        await add_endpoint(
            uow,
            m.Webhook(
                url=config.url,
                events=["task.*"],
                description=f"A2A push of task {task_id} for {caller.name}",
                sealed_secret=seal.seal(hooks.new_secret()),
                created_at=now,
                updated_at=now,
                task_id=task_id,
                a2a_push=push,
            ),
        )

    async def pushes(self, caller: Caller, agent_id: str, task_id: int) -> list[A2APushConfig]:
        """The caller's push configs of the task (at most ``PUSH_CONFIGS``)."""

        async def work(uow: UnitOfWork) -> list[A2APushConfig]:
            await _conversation(uow, caller, agent_id, task_id, 0)
            kept = await uow.webhooks.pushing(task_id)
            return [_push_config(e) for e in kept if _pushed_for(e, caller)]

        return await self.read(work)

    async def stop_pushing(
        self, caller: Caller, agent_id: str, task_id: int, config_id: str
    ) -> None:
        """Push no more to the caller's config ``config_id`` of the task (NotFound if none)."""

        async def work(uow: UnitOfWork) -> None:
            await _conversation(uow, caller, agent_id, task_id, 0)
            found = _pushes_of(await uow.webhooks.pushing(task_id), caller, config_id)
            if not found:
                raise NotFound(f"task {task_id} has no push config '{config_id}'")
            for endpoint in found:
                await uow.webhooks.disable(endpoint.webhook_id, DELETED, self.now())

        await self.write(work)

    async def settled(self, caller: Caller, agent_id: str, task_id: int) -> A2AConversation:
        """The task once it is finished or its agent asks a question (a blocking send), waited
        for at most ``max_wait_seconds``; then, or at shutdown, the task as it is."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.ctx.config.max_wait_seconds):
                async for shown in self.changes(caller, agent_id, task_id):
                    if shown.settled:
                        return shown
        return await self.conversation(caller, agent_id, task_id)

    async def changes(
        self, caller: Caller, agent_id: str, task_id: int
    ) -> AsyncIterator[A2AConversation]:
        """The task as it is, then as it is each time something may have changed it (a hint
        of its topic, or ``REPOLL_SECONDS`` without one), until it is finished (or shutdown):
        the caller tells what changed."""
        hub = self.ctx.storage.hub
        while not hub.closed:
            with hub.subscribe(task_topic(task_id)) as subscription:
                shown = await self.conversation(caller, agent_id, task_id)
                yield shown
                if shown.task.status in FINISHED:
                    return
                # Another instance's hint can be lost: read again now and then.
                await subscription.wait(REPOLL_SECONDS)


def _pushed_for(endpoint: m.Webhook, caller: Caller) -> bool:
    push = endpoint.a2a_push
    return push is not None and (caller.is_operator or push.caller == caller.name)


def _pushes_of(kept: list[m.Webhook], caller: Caller, config_id: str) -> list[m.Webhook]:
    """The caller's push configs among ``kept`` with this id."""
    return [
        e
        for e in kept
        if _pushed_for(e, caller) and e.a2a_push is not None and e.a2a_push.config_id == config_id
    ]


async def _require_reachable(uow: UnitOfWork, agent_id: str) -> m.Agent:
    agent = await uow.agents.get(agent_id)
    if agent is None or agent.a2a is None or not agent.a2a.enabled:
        raise NotFound(f"agent '{agent_id}' is not reachable over A2A")
    return agent


async def _turns(uow: UnitOfWork, task_id: int, limit: int) -> list[m.TaskEvent]:
    """The latest ``limit`` notes of the task's conversation, oldest first."""
    return list(reversed(await uow.task_events.latest_of(task_id, CONVERSATION, limit)))


def _latest(task: A2ATask) -> list[m.TaskEvent]:
    """The latest note of the task's conversation, read with it (what its state needs)."""
    return [] if task.latest_note is None else [task.latest_note]


async def _conversation(
    uow: UnitOfWork, caller: Caller, agent_id: str, task_id: int, turns: int
) -> A2AConversation:
    """The task, if the caller asked it of the agent (or is the operator); else NotFound,
    which does not say whether it exists."""
    task = await uow.a2a_tasks.get(agent_id, task_id)
    if task is None or not (caller.is_operator or task.created_by == caller.name):
        raise NotFound(f"task {task_id} does not exist")
    return A2AConversation(task, await _turns(uow, task_id, turns) if turns else _latest(task))


async def _tell(
    uow: UnitOfWork, caller: Caller, agent_id: str, message: A2AMessage, now: datetime
) -> int:
    """Note the asker's message on its task's trail and send it to the agent; the task's id."""
    assert message.task_id is not None
    shown = await _conversation(uow, caller, agent_id, message.task_id, 0)
    if shown.task.status in FINISHED:
        raise Conflict(f"task {message.task_id} is {shown.task.status}: it takes no more messages")
    a2a = {"parts": message.parts, "message_id": message.message_id}
    note = m.TaskEvent(
        task_id=message.task_id,
        agent_id=caller.name,
        kind=ASKED,
        message=message.text,
        data=a2a,
        created_at=now,
    )
    await uow.task_events.insert(note)
    uow.publish(task_topic(message.task_id))
    told = m.Message(
        from_agent=caller.name,
        to=agent_id,
        text=message.text or f"(a message about task {message.task_id} without text)",
        payload={"task_id": message.task_id, "a2a": a2a},
        status="pending",
        created_at=now,
    )
    await add_direct_message(uow, told)
    return message.task_id
