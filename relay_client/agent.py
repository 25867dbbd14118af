"""What agent authors would otherwise write by hand: heartbeats, an inbox loop, a task loop, and
waiting out an enrollment. Sync and async twins side by side.

    with Agent(client) as agent:             # heartbeats in the background until the block ends
        for message in agent.messages():     # acked only after the loop body handled it
            ...
        agent.work(handler)                  # claim, report progress, complete or fail
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import re
import signal
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from relay_client import errors, identity
from relay_client._client import AsyncRelayClient, RelayClient
from relay_core.auth import OPERATOR_TOKEN_PREFIX
from relay_core.models import Agent as AgentRecord
from relay_core.models import Message, Task

log = logging.getLogger("relay_client.agent")

LONG_POLL = 30.0

# A claim race lost to another agent, or a task assigned elsewhere: try the next one.
_NOT_MINE = (errors.ConflictError, errors.PermissionDeniedError)


def _failure_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:65536]


def _log_message(agent_id: str, message: Message) -> None:
    log.info("%s: message %s from %s", agent_id, message.message_id, message.from_agent)


def _as_result(value: Any) -> dict[str, Any] | None:
    if value is None or isinstance(value, dict):
        return value
    return {"value": value}


class _Idle:
    """Tracks how long a loop has found nothing to do."""

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.since = time.monotonic()

    def busy(self) -> None:
        self.since = time.monotonic()

    def expired(self) -> bool:
        return self.timeout is not None and time.monotonic() - self.since >= self.timeout

    def budget(self) -> float:
        """How long the next long-poll may wait: until idleness ends the loop, 30 s at most."""
        if self.timeout is None:
            return LONG_POLL
        return max(0.0, min(LONG_POLL, self.timeout - (time.monotonic() - self.since)))


@dataclass(frozen=True)
class TaskFilter:
    """Which open tasks an agent claims, beside those another agent is assigned (never): those
    whose title ``titles`` finds (a regular expression, searched: ``r"^summarize\\b"``), only
    those assigned to it (``assigned_only``), and those ``accept(task)`` says yes to. Left
    empty, any open task. An agent that claims a task it cannot do fails it, and with
    ``max_attempts`` 1 fails it for good: name what it can do."""

    titles: str | None = None
    assigned_only: bool = False
    accept: Callable[[Task], bool] | None = None

    def takes(self, task: Task, agent_id: str) -> bool:
        """Whether ``agent_id`` claims ``task`` under this filter."""
        if task.assignee not in (None, agent_id):
            return False
        if self.assigned_only and task.assignee != agent_id:
            return False
        if self.titles is not None and not re.search(self.titles, task.title):
            return False
        return self.accept is None or self.accept(task)


ANY_TASK = TaskFilter()


def _refused_while_running(agent_id: str) -> errors.IdentityError:
    return errors.IdentityError(
        f"{agent_id}: the server refused this agent's token while it ran (rotated or revoked): "
        f"ask the operator for a new one (relay agents register {agent_id} --rotate-token) and "
        f"start the agent again with it in RELAY_TOKEN"
    )


@contextmanager
def _sigterm_stops() -> Iterator[None]:
    """SIGTERM (a service manager's stop, or ``kill``) ends the loop as Ctrl-C does, where no
    one else handles it; a program started in the background ignores SIGINT."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


class Progress:
    """Handed to a task handler: ``progress(50, "halfway")`` records a task event."""

    def __init__(self, client: RelayClient, task: Task, agent_id: str) -> None:
        self._client, self._task, self._agent_id = client, task, agent_id

    def __call__(
        self, progress: int | None = None, message: str | None = None, **data: Any
    ) -> None:
        self._client.tasks.event(
            self._task.task_id,
            agent_id=self._agent_id,
            progress=progress,
            message=message,
            data=data or None,
        )


class AsyncProgress:
    """Handed to an async task handler: ``await progress(50, "halfway")``."""

    def __init__(self, client: AsyncRelayClient, task: Task, agent_id: str) -> None:
        self._client, self._task, self._agent_id = client, task, agent_id

    async def __call__(
        self, progress: int | None = None, message: str | None = None, **data: Any
    ) -> None:
        await self._client.tasks.event(
            self._task.task_id,
            agent_id=self._agent_id,
            progress=progress,
            message=message,
            data=data or None,
        )


class Agent:
    """One agent's loops over a ``RelayClient``."""

    def __init__(
        self,
        client: RelayClient,
        agent_id: str | None = None,
        *,
        heartbeat_interval: float = 15.0,
    ) -> None:
        chosen = agent_id or client.config.agent_id
        if not chosen:
            raise ValueError("Agent needs an agent_id (or a client with one)")
        self.client = client
        self.agent_id: str = chosen
        self.heartbeat_interval = heartbeat_interval
        self._stopping = threading.Event()
        self._beating: threading.Thread | None = None

    def start(self) -> Agent:
        """Send a first heartbeat now (so bad credentials fail here) and keep beating."""
        self.client.agents.heartbeat(self.agent_id)
        self._stopping.clear()
        self._beating = threading.Thread(target=self._beat, name="relay-heartbeat", daemon=True)
        self._beating.start()
        return self

    def stop(self) -> None:
        """Stop heartbeating."""
        self._stopping.set()
        if self._beating is not None:
            self._beating.join()
            self._beating = None

    def _beat(self) -> None:
        while not self._stopping.wait(self.heartbeat_interval):
            try:
                self.client.agents.heartbeat(self.agent_id)
            except errors.RelayError as exc:
                log.warning("heartbeat of %s failed: %s", self.agent_id, exc)

    def messages(self, *, idle_timeout: float | None = None) -> Iterator[Message]:
        """Yield inbox messages as they come; each is acked once the loop body has handled it.

        Leaving the loop (``break``, an exception) leaves the current message unacked, so it is
        delivered again. ``idle_timeout`` ends the loop after that long without a message.
        """
        idle = _Idle(idle_timeout)
        while not idle.expired():
            # Long-polled: the server answers the moment a message commits.
            inbox = self.client.agents.inbox(self.agent_id, wait=idle.budget())
            for message in inbox.messages:
                idle.busy()
                _log_message(self.agent_id, message)
                yield message
                self.client.messages.ack(message.message_id, agent_id=self.agent_id)

    def claim_next(self, tasks: TaskFilter = ANY_TASK) -> Task | None:
        """Claim the first open task this agent may take and ``tasks`` lets it, or None."""
        mine = self.agent_id if tasks.assigned_only else None
        for task in self.client.tasks.iterate(status="open", assignee=mine):
            if not tasks.takes(task, self.agent_id):
                continue
            try:
                return self.client.tasks.claim(task.task_id, agent_id=self.agent_id)
            except _NOT_MINE:
                continue
        return None

    def work(
        self,
        handler: Callable[[Task, Progress], Any],
        *,
        tasks: TaskFilter = ANY_TASK,
        max_tasks: int | None = None,
        idle_timeout: float | None = None,
    ) -> int:
        """Claim the tasks ``tasks`` lets it and run ``handler(task, progress)`` on each: its
        return value (a dict) completes the task, an exception fails it with the exception's
        text (reopened while attempts are left). Returns how many tasks were worked."""
        worked, idle = 0, _Idle(idle_timeout)
        cursor = self.client.events.list().cursor  # taken before looking, so nothing slips by
        while (max_tasks is None or worked < max_tasks) and not idle.expired():
            task = self.claim_next(tasks)
            if task is None:
                # Sleep until something happens in the feed (a task created, reopened…).
                cursor = self.client.events.list(after=cursor, wait=idle.budget()).cursor
                continue
            idle.busy()
            self._work_on(task, handler)
            worked += 1
        return worked

    def _work_on(self, task: Task, handler: Callable[[Task, Progress], Any]) -> None:
        log.info("%s: claimed task %s: %s", self.agent_id, task.task_id, task.title)
        try:
            result = handler(task, Progress(self.client, task, self.agent_id))
        except Exception as exc:
            log.exception("%s: task %s failed", self.agent_id, task.task_id)
            self.client.tasks.fail(
                task.task_id, agent_id=self.agent_id, error=_failure_text(exc), retry=True
            )
        else:
            self.client.tasks.complete(
                task.task_id, agent_id=self.agent_id, result=_as_result(result)
            )
            log.info("%s: completed task %s", self.agent_id, task.task_id)

    def run(
        self,
        on_message: Callable[[Message], Any] | None = None,
        on_task: Callable[[Task, Progress], Any] | None = None,
        *,
        tasks: TaskFilter = ANY_TASK,
        idle_timeout: float | None = None,
    ) -> None:
        """Handle messages and work the tasks ``tasks`` lets it claim as they come, until
        stopped (Ctrl-C or SIGTERM, after which it returns), or after ``idle_timeout`` seconds
        with nothing to do. A message is acked once ``on_message`` returned; a task is
        completed with ``on_task``'s result, or failed on its exception. A token the server
        stops taking (rotated) ends it with ``IdentityError``, which says what to do."""
        try:
            with _sigterm_stops():
                self._run(on_message, on_task, tasks, idle_timeout)
        except KeyboardInterrupt:
            log.info("%s: stopped", self.agent_id)
        except errors.AuthenticationError:
            raise _refused_while_running(self.agent_id) from None

    def _run(
        self,
        on_message: Callable[[Message], Any] | None,
        on_task: Callable[[Task, Progress], Any] | None,
        tasks: TaskFilter,
        idle_timeout: float | None,
    ) -> None:
        idle = _Idle(idle_timeout)
        cursor = self.client.events.list().cursor  # taken before looking, so nothing slips by
        log.info("%s: running; waiting for messages and tasks", self.agent_id)
        while not idle.expired():
            busy = False
            if on_message is not None:
                for message in self.client.agents.inbox(self.agent_id).messages:
                    busy = True
                    _log_message(self.agent_id, message)
                    on_message(message)
                    self.client.messages.ack(message.message_id, agent_id=self.agent_id)
            task = self.claim_next(tasks) if on_task is not None else None
            if task is not None and on_task is not None:
                busy = True
                self._work_on(task, on_task)
            if busy:
                idle.busy()
            else:  # sleep until something happens in the feed: a message, a task…
                cursor = self.client.events.list(after=cursor, wait=idle.budget()).cursor

    def __enter__(self) -> Agent:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class AsyncAgent:
    """One agent's loops over an ``AsyncRelayClient``."""

    def __init__(
        self,
        client: AsyncRelayClient,
        agent_id: str | None = None,
        *,
        heartbeat_interval: float = 15.0,
    ) -> None:
        chosen = agent_id or client.config.agent_id
        if not chosen:
            raise ValueError("AsyncAgent needs an agent_id (or a client with one)")
        self.client = client
        self.agent_id: str = chosen
        self.heartbeat_interval = heartbeat_interval
        self._beating: asyncio.Task[None] | None = None

    async def start(self) -> AsyncAgent:
        """Send a first heartbeat now (so bad credentials fail here) and keep beating."""
        await self.client.agents.heartbeat(self.agent_id)
        self._beating = asyncio.create_task(self._beat(), name="relay-heartbeat")
        return self

    async def stop(self) -> None:
        """Stop heartbeating."""
        if self._beating is not None:
            self._beating.cancel()
            await asyncio.gather(self._beating, return_exceptions=True)
            self._beating = None

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_interval)
            try:
                await self.client.agents.heartbeat(self.agent_id)
            except errors.RelayError as exc:
                log.warning("heartbeat of %s failed: %s", self.agent_id, exc)

    async def messages(self, *, idle_timeout: float | None = None) -> AsyncIterator[Message]:
        """Yield inbox messages as they come; each is acked once the loop body has handled it."""
        idle = _Idle(idle_timeout)
        while not idle.expired():
            inbox = await self.client.agents.inbox(self.agent_id, wait=idle.budget())
            for message in inbox.messages:
                idle.busy()
                _log_message(self.agent_id, message)
                yield message
                await self.client.messages.ack(message.message_id, agent_id=self.agent_id)

    async def claim_next(self, tasks: TaskFilter = ANY_TASK) -> Task | None:
        """Claim the first open task this agent may take and ``tasks`` lets it, or None."""
        mine = self.agent_id if tasks.assigned_only else None
        async for task in self.client.tasks.iterate(status="open", assignee=mine):
            if not tasks.takes(task, self.agent_id):
                continue
            try:
                return await self.client.tasks.claim(task.task_id, agent_id=self.agent_id)
            except _NOT_MINE:
                continue
        return None

    async def work(
        self,
        handler: Callable[[Task, AsyncProgress], Any],
        *,
        tasks: TaskFilter = ANY_TASK,
        max_tasks: int | None = None,
        idle_timeout: float | None = None,
    ) -> int:
        """Claim the tasks ``tasks`` lets it and run ``handler(task, progress)`` (sync or async)
        on each; see ``Agent.work``."""
        worked, idle = 0, _Idle(idle_timeout)
        cursor = (await self.client.events.list()).cursor
        while (max_tasks is None or worked < max_tasks) and not idle.expired():
            task = await self.claim_next(tasks)
            if task is None:
                cursor = (await self.client.events.list(after=cursor, wait=idle.budget())).cursor
                continue
            idle.busy()
            await self._work_on(task, handler)
            worked += 1
        return worked

    async def _work_on(self, task: Task, handler: Callable[[Task, AsyncProgress], Any]) -> None:
        log.info("%s: claimed task %s: %s", self.agent_id, task.task_id, task.title)
        try:
            result = handler(task, AsyncProgress(self.client, task, self.agent_id))
            if inspect.isawaitable(result):
                result = await result
        except Exception as exc:
            log.exception("%s: task %s failed", self.agent_id, task.task_id)
            await self.client.tasks.fail(
                task.task_id, agent_id=self.agent_id, error=_failure_text(exc), retry=True
            )
        else:
            await self.client.tasks.complete(
                task.task_id, agent_id=self.agent_id, result=_as_result(result)
            )
            log.info("%s: completed task %s", self.agent_id, task.task_id)

    async def run(
        self,
        on_message: Callable[[Message], Any] | None = None,
        on_task: Callable[[Task, AsyncProgress], Any] | None = None,
        *,
        tasks: TaskFilter = ANY_TASK,
        idle_timeout: float | None = None,
    ) -> None:
        """Async twin of ``Agent.run``; the handlers may be sync or async. Cancelled, it
        stops."""
        try:
            await self._run(on_message, on_task, tasks, idle_timeout)
        except errors.AuthenticationError:
            raise _refused_while_running(self.agent_id) from None

    async def _run(
        self,
        on_message: Callable[[Message], Any] | None,
        on_task: Callable[[Task, AsyncProgress], Any] | None,
        tasks: TaskFilter,
        idle_timeout: float | None,
    ) -> None:
        idle = _Idle(idle_timeout)
        cursor = (await self.client.events.list()).cursor
        log.info("%s: running; waiting for messages and tasks", self.agent_id)
        while not idle.expired():
            busy = False
            if on_message is not None:
                for message in (await self.client.agents.inbox(self.agent_id)).messages:
                    busy = True
                    _log_message(self.agent_id, message)
                    handled = on_message(message)
                    if inspect.isawaitable(handled):
                        await handled
                    await self.client.messages.ack(message.message_id, agent_id=self.agent_id)
            task = await self.claim_next(tasks) if on_task is not None else None
            if task is not None and on_task is not None:
                busy = True
                await self._work_on(task, on_task)
            if busy:
                idle.busy()
            else:
                cursor = (await self.client.events.list(after=cursor, wait=idle.budget())).cursor

    async def __aenter__(self) -> AsyncAgent:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()


def enroll_and_wait(
    agent_id: str,
    *,
    url: str | None = None,
    name: str | None = None,
    kind: str | None = None,
    capabilities: Sequence[str] | None = None,
    metadata: dict[str, Any] | None = None,
    reason: str | None = None,
    keep_identity: bool = True,
    timeout: float = 3600.0,
    poll_interval: float = 0.5,
    max_poll_interval: float = 2.0,
) -> RelayClient:
    """Ask to join, wait for the operator's decision, and return a client holding the agent's
    token. The enrollment waited on, then the token, are kept in ``identity_path(url,
    agent_id)`` (0600), so a second run resumes with them (``keep_identity=False``: neither
    read nor written). An agent's token in ``RELAY_TOKEN`` (a new one after a rotation, say)
    is checked, kept in its place and used. ``EnrollmentError`` if rejected or expired;
    ``IdentityError`` if a token is refused, or the id is registered and no token of it is
    kept; both end a script that does not catch them with one line and exit status 1."""
    with RelayClient(url, max_retries=5, anonymous=True) as anonymous:
        server = anonymous.config.url
        path = identity.identity_path(server, agent_id)
        given = _given_token()
        if given is not None:
            client = RelayClient(server, token=given, agent_id=agent_id)
            try:
                found = client.agents.me()
            except errors.AuthenticationError:
                found = None
            if found is None or found.agent_id != agent_id:
                client.close()
                raise _not_given(agent_id, found)
            if keep_identity:
                identity.keep(path, identity.Identity(token=given))
            log.info("%s: running with the token in RELAY_TOKEN (kept in %s)", agent_id, path)
            return client
        kept = identity.load(path) if keep_identity else None
        if kept is not None and kept.token:
            resumed = RelayClient(server, token=kept.token, agent_id=agent_id)
            try:
                resumed.agents.me()
            except errors.AuthenticationError:
                resumed.close()
                raise _refused(agent_id, path) from None
            log.info("%s: resuming with the token kept in %s", agent_id, path)
            return resumed
        if kept is not None and kept.enroll_id and kept.claim:
            waiting = kept
        else:
            try:
                created = anonymous.enroll.request(
                    agent_id,
                    name=name,
                    kind=kind,
                    capabilities=capabilities,
                    metadata=metadata,
                    reason=reason,
                )
            except errors.ConflictError as exc:
                raise _taken(agent_id, server, path, exc) from None
            waiting = identity.Identity(created.enroll_id, created.claim, None, created.approval_id)
            if keep_identity:
                identity.keep(path, waiting)
        assert waiting.enroll_id is not None and waiting.claim is not None
        log.info("%s: %s", agent_id, _waiting_line(waiting))
        deadline, interval = time.monotonic() + timeout, poll_interval
        while True:
            state = anonymous.enroll.status(waiting.enroll_id, waiting.claim)
            token = _settled(state.status, state.token, waiting.enroll_id, path)
            if token:
                if keep_identity:
                    identity.keep(path, identity.Identity(token=token))
                log.info("%s: approved; enrolled", agent_id)
                return RelayClient(server, token=token, agent_id=agent_id)
            if time.monotonic() + interval > deadline:
                raise errors.TimeoutError(f"enrollment {waiting.enroll_id} still pending")
            time.sleep(interval)
            interval = min(max_poll_interval, interval * 1.5)


async def async_enroll_and_wait(
    agent_id: str,
    *,
    url: str | None = None,
    name: str | None = None,
    kind: str | None = None,
    capabilities: Sequence[str] | None = None,
    metadata: dict[str, Any] | None = None,
    reason: str | None = None,
    keep_identity: bool = True,
    timeout: float = 3600.0,
    poll_interval: float = 0.5,
    max_poll_interval: float = 2.0,
) -> AsyncRelayClient:
    """Async twin of ``enroll_and_wait``."""
    async with AsyncRelayClient(url, max_retries=5, anonymous=True) as anonymous:
        server = anonymous.config.url
        path = identity.identity_path(server, agent_id)
        given = _given_token()
        if given is not None:
            client = AsyncRelayClient(server, token=given, agent_id=agent_id)
            try:
                found = await client.agents.me()
            except errors.AuthenticationError:
                found = None
            if found is None or found.agent_id != agent_id:
                await client.close()
                raise _not_given(agent_id, found)
            if keep_identity:
                identity.keep(path, identity.Identity(token=given))
            log.info("%s: running with the token in RELAY_TOKEN (kept in %s)", agent_id, path)
            return client
        kept = identity.load(path) if keep_identity else None
        if kept is not None and kept.token:
            resumed = AsyncRelayClient(server, token=kept.token, agent_id=agent_id)
            try:
                await resumed.agents.me()
            except errors.AuthenticationError:
                await resumed.close()
                raise _refused(agent_id, path) from None
            log.info("%s: resuming with the token kept in %s", agent_id, path)
            return resumed
        if kept is not None and kept.enroll_id and kept.claim:
            waiting = kept
        else:
            try:
                created = await anonymous.enroll.request(
                    agent_id,
                    name=name,
                    kind=kind,
                    capabilities=capabilities,
                    metadata=metadata,
                    reason=reason,
                )
            except errors.ConflictError as exc:
                raise _taken(agent_id, server, path, exc) from None
            waiting = identity.Identity(created.enroll_id, created.claim, None, created.approval_id)
            if keep_identity:
                identity.keep(path, waiting)
        assert waiting.enroll_id is not None and waiting.claim is not None
        log.info("%s: %s", agent_id, _waiting_line(waiting))
        deadline, interval = time.monotonic() + timeout, poll_interval
        while True:
            state = await anonymous.enroll.status(waiting.enroll_id, waiting.claim)
            token = _settled(state.status, state.token, waiting.enroll_id, path)
            if token:
                if keep_identity:
                    identity.keep(path, identity.Identity(token=token))
                log.info("%s: approved; enrolled", agent_id)
                return AsyncRelayClient(server, token=token, agent_id=agent_id)
            if time.monotonic() + interval > deadline:
                raise errors.TimeoutError(f"enrollment {waiting.enroll_id} still pending")
            await asyncio.sleep(interval)
            interval = min(max_poll_interval, interval * 1.5)


def _waiting_line(waiting: identity.Identity) -> str:
    approve = f" (relay approvals approve {waiting.approval_id})" if waiting.approval_id else ""
    return f"waiting for the operator to approve enrollment {waiting.enroll_id}{approve}"


def _refused(agent_id: str, path: Path) -> errors.IdentityError:
    return errors.IdentityError(
        f"{agent_id}: the token kept in {path} was refused (rotated or revoked): ask the "
        f"operator for a new one (relay agents register {agent_id} --rotate-token) and start "
        f"the agent again with it in RELAY_TOKEN (it is kept in that file then)"
    )


def _not_given(agent_id: str, found: AgentRecord | None) -> errors.IdentityError:
    """RELAY_TOKEN refused, or another agent's."""
    if found is None:
        return errors.IdentityError(
            f"{agent_id}: the token in RELAY_TOKEN was refused: ask the operator for a new one "
            f"(relay agents register {agent_id} --rotate-token)"
        )
    return errors.IdentityError(
        f"{agent_id}: the token in RELAY_TOKEN is {found.agent_id}'s, not {agent_id}'s"
    )


def _given_token() -> str | None:
    """An agent's token given in RELAY_TOKEN (the operator's is no agent's: ignored here)."""
    token = os.environ.get("RELAY_TOKEN")
    return token if token and not token.startswith(OPERATOR_TOKEN_PREFIX) else None


def _taken(
    agent_id: str, server: str, path: Path, exc: errors.ConflictError
) -> errors.IdentityError:
    return errors.IdentityError(
        f"{exc.message}, at {server}, and no token of it is kept in {path}: run with its token "
        f"(RELAY_TOKEN), or enroll under another id"
    )


def _settled(status: str, token: str | None, enroll_id: int, path: Path) -> str | None:
    """The token once approved; None while pending; EnrollmentError when it ended otherwise
    (and the enrollment kept at ``path`` is forgotten: the next run asks again)."""
    if status == "pending":
        return None
    if status == "approved" and token:
        return token
    identity.forget(path)
    if status == "approved":
        raise errors.EnrollmentError("approved, but its token was already delivered", enroll_id)
    raise errors.EnrollmentError(status, enroll_id)
