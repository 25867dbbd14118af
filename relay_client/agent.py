"""What agent authors would otherwise write by hand: heartbeats, an inbox loop, a task loop, and
waiting out an enrollment. Each loop is written once, as a flow (``relay_client._flow``) that
``Agent`` drives with a ``RelayClient`` and ``AsyncAgent`` with an ``AsyncRelayClient``.

    with Agent(client) as agent:             # heartbeats in the background until the block ends
        for message in agent.messages():     # acked only after the loop body handled it
            ...
        agent.work(handler)                  # claim, report progress, complete or fail
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, Unpack, cast

from pydantic import BaseModel

from relay_api import models
from relay_api.models import OPERATOR_TOKEN_PREFIX, Message, Task
from relay_api.models import Agent as AgentRecord
from relay_client import errors, identity
from relay_client._client import AsyncRelayClient, RelayClient
from relay_client._flow import (
    C,
    Close,
    Driven,
    Flow,
    Handle,
    InTrace,
    Items,
    Open,
    Out,
    Sleep,
    arun,
    call,
    flow_iterator,
    flow_method,
    run,
)

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


def _build_models() -> None:
    """Build every model of the contract now (about 60 ms), not when an answer is first read
    (``defer_build``): a stop (Ctrl-C, or SIGTERM, a KeyboardInterrupt wherever it lands) that
    lands while pydantic builds one comes out of it as a SchemaError, a traceback instead of a
    clean stop."""
    for value in vars(models).values():
        if isinstance(value, type) and issubclass(value, BaseModel):
            if value.__module__ == models.__name__:  # not pydantic's own, imported there
                value.model_rebuild()


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
    """Handed to a task handler: ``progress(50, "halfway")`` records a task event (with an
    async client, ``await progress(50, "halfway")``)."""

    def __init__(self, client: RelayClient | AsyncRelayClient, task: Task, agent_id: str) -> None:
        self._client, self._task, self._agent_id = client, task, agent_id

    def __call__(self, progress: int | None = None, message: str | None = None, **data: Any) -> Any:
        return self._client.tasks.event(
            self._task.task_id,
            agent_id=self._agent_id,
            progress=progress,
            message=message,
            data=data or None,
        )


AsyncProgress = Progress


# ---------------------------------------------------------------- the loops, once


def _messages(agent_id: str, idle_timeout: float | None) -> Flow[None]:
    idle = _Idle(idle_timeout)
    while not idle.expired():
        # Long-polled: the server answers the moment a message commits.
        inbox = yield call("agents.inbox", agent_id, wait=idle.budget())
        for message in inbox.messages:
            idle.busy()
            _log_message(agent_id, message)
            yield Out(message)
            yield _acked(message, agent_id)


def _acked(message: Message, agent_id: str) -> InTrace:
    """The step that acknowledges ``message``, in the trace it was sent in."""
    return InTrace(message.traceparent, call("messages.ack", message.message_id, agent_id=agent_id))


def _claim_next(agent_id: str, tasks: TaskFilter) -> Flow[Task | None]:
    mine = agent_id if tasks.assigned_only else None
    cursor = None
    while True:
        page = yield call("tasks.list", status="open", assignee=mine, cursor=cursor)
        for task in page.tasks:
            if not tasks.takes(task, agent_id):
                continue
            try:
                claimed: Task = yield call("tasks.claim", task.task_id, agent_id=agent_id)
            except _NOT_MINE:
                continue
            return claimed
        if page.next_cursor is None:
            return None
        cursor = page.next_cursor


def _work_on(
    agent_id: str, task: Task, handler: Callable[..., Any], progress: Progress
) -> Flow[None]:
    log.info("%s: claimed task %s: %s", agent_id, task.task_id, task.title)
    traced = task.traceparent  # the work goes on in the trace the task was created in
    try:
        result = yield InTrace(traced, Handle(handler, (task, progress)))
    except Exception as exc:
        log.exception("%s: task %s failed", agent_id, task.task_id)
        error = _failure_text(exc)
        failed = call("tasks.fail", task.task_id, agent_id=agent_id, error=error, retry=True)
        yield InTrace(traced, failed)
    else:
        done = call("tasks.complete", task.task_id, agent_id=agent_id, result=_as_result(result))
        yield InTrace(traced, done)
        log.info("%s: completed task %s", agent_id, task.task_id)


def _work(
    agent: _Loops[Any],
    handler: Callable[..., Any],
    max_tasks: int | None,
    tasks: TaskFilter = ANY_TASK,
    idle_timeout: float | None = None,
) -> Flow[int]:
    worked, idle = 0, _Idle(idle_timeout)
    cursor = (yield call("events.list")).cursor  # taken before looking, so nothing slips by
    while (max_tasks is None or worked < max_tasks) and not idle.expired():
        task = yield from _claim_next(agent.agent_id, tasks)
        if task is None:
            # Sleep until something happens in the feed (a task created, reopened…).
            cursor = (yield call("events.list", after=cursor, wait=idle.budget())).cursor
            continue
        idle.busy()
        yield from _work_on(agent.agent_id, task, handler, agent.progress(task))
        worked += 1
    return worked


def _run(
    agent: _Loops[Any],
    on_message: Callable[..., Any] | None,
    on_task: Callable[..., Any] | None,
    tasks: TaskFilter = ANY_TASK,
    idle_timeout: float | None = None,
) -> Flow[None]:
    agent_id = agent.agent_id
    idle = _Idle(idle_timeout)
    cursor = (yield call("events.list")).cursor  # taken before looking, so nothing slips by
    log.info("%s: running; waiting for messages and tasks", agent_id)
    try:
        while not idle.expired():
            busy = False
            if on_message is not None:
                for message in (yield call("agents.inbox", agent_id)).messages:
                    busy = True
                    _log_message(agent_id, message)
                    yield InTrace(message.traceparent, Handle(on_message, (message,)))
                    yield _acked(message, agent_id)
            task = (yield from _claim_next(agent_id, tasks)) if on_task is not None else None
            if task is not None and on_task is not None:
                busy = True
                yield from _work_on(agent_id, task, on_task, agent.progress(task))
            if busy:
                idle.busy()
            else:  # sleep until something happens in the feed: a message, a task…
                cursor = (yield call("events.list", after=cursor, wait=idle.budget())).cursor
    except errors.AuthenticationError:
        raise _refused_while_running(agent_id) from None


class RunOptions(TypedDict, total=False):
    """Which tasks an agent's loop claims (``tasks``, any by default) and how long it may find
    nothing to do before it ends (``idle_timeout`` seconds, forever by default)."""

    tasks: TaskFilter
    idle_timeout: float | None


class _Loops(Driven[C]):
    """What an agent is and does, whichever client drives it: its loops are written once."""

    def __init__(self, client: C, agent_id: str | None, heartbeat_interval: float) -> None:
        chosen = agent_id or client.config.agent_id
        if not chosen:
            raise ValueError(f"{type(self).__name__} needs an agent_id (or a client with one)")
        self._client = client
        self.agent_id: str = chosen
        self.heartbeat_interval = heartbeat_interval

    @property
    def client(self) -> C:
        """The client the agent works through."""
        return self._client

    def progress(self, task: Task) -> Progress:
        """What a task handler reports its progress with."""
        return Progress(self.client, task, self.agent_id)

    @flow_iterator
    def messages(self, *, idle_timeout: float | None = None) -> Items[Message]:
        """Yield inbox messages as they come; each is acked once the loop body has handled it.

        Leaving the loop (``break``, an exception) leaves the current message unacked, so it is
        delivered again. ``idle_timeout`` ends the loop after that long without a message.
        """
        return _messages(self.agent_id, idle_timeout)

    @flow_method
    def claim_next(self, tasks: TaskFilter = ANY_TASK) -> Flow[Task | None]:
        """Claim the first open task this agent may take and ``tasks`` lets it, or None."""
        return _claim_next(self.agent_id, tasks)

    @flow_method
    def work(
        self,
        handler: Callable[[Task, Progress], Any],
        *,
        max_tasks: int | None = None,
        **options: Unpack[RunOptions],
    ) -> Flow[int]:
        """Claim the tasks ``tasks`` lets it and run ``handler(task, progress)`` on each (sync,
        or async with an async client): its return value (a dict) completes the task, an
        exception fails it with the exception's text (reopened while attempts are left).
        Returns how many tasks were worked."""
        return _work(self, handler, max_tasks, **options)


class Agent(_Loops[RelayClient]):
    """One agent's loops over a ``RelayClient``."""

    def __init__(
        self, client: RelayClient, agent_id: str | None = None, *, heartbeat_interval: float = 15.0
    ) -> None:
        super().__init__(client, agent_id, heartbeat_interval)
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

    def run(
        self,
        on_message: Callable[[Message], Any] | None = None,
        on_task: Callable[[Task, Progress], Any] | None = None,
        **options: Unpack[RunOptions],
    ) -> None:
        """Handle messages and work the tasks ``tasks`` lets it claim as they come, until
        stopped (Ctrl-C or SIGTERM, after which it returns), or after ``idle_timeout`` seconds
        with nothing to do. A message is acked once ``on_message`` returned; a task is
        completed with ``on_task``'s result, or failed on its exception. A token the server
        stops taking (rotated) ends it with ``IdentityError``, which says what to do."""
        _build_models()
        try:
            with _sigterm_stops():
                run(_run(self, on_message, on_task, **options), self.client)
        except KeyboardInterrupt:
            log.info("%s: stopped", self.agent_id)

    def __enter__(self) -> Agent:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


class AsyncAgent(_Loops[AsyncRelayClient]):
    """One agent's loops over an ``AsyncRelayClient``; the handlers may be sync or async."""

    def __init__(
        self,
        client: AsyncRelayClient,
        agent_id: str | None = None,
        *,
        heartbeat_interval: float = 15.0,
    ) -> None:
        super().__init__(client, agent_id, heartbeat_interval)
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

    async def run(
        self,
        on_message: Callable[[Message], Any] | None = None,
        on_task: Callable[[Task, Progress], Any] | None = None,
        **options: Unpack[RunOptions],
    ) -> None:
        """``Agent.run``, with handlers that may be sync or async; cancelled, it stops."""
        await arun(_run(self, on_message, on_task, **options), self.client)

    async def __aenter__(self) -> AsyncAgent:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()


# ---------------------------------------------------------------- enrollment, once


class EnrollOptions(TypedDict, total=False):
    """What ``enroll_and_wait`` takes beside the agent's id."""

    url: str | None
    name: str | None
    kind: str | None
    capabilities: Sequence[str] | None
    metadata: dict[str, Any] | None
    reason: str | None
    keep_identity: bool
    timeout: float
    poll_interval: float
    max_poll_interval: float


def enroll_and_wait(agent_id: str, **options: Unpack[EnrollOptions]) -> RelayClient:
    """Ask to join, wait for the operator's decision, and return a client holding the agent's
    token. The enrollment waited on, then the token, are kept in ``identity_path(url,
    agent_id)`` (0600), so a second run resumes with them (``keep_identity=False``: neither
    read nor written). An agent's token in ``RELAY_TOKEN`` (a new one after a rotation, say)
    is checked, kept in its place and used. ``EnrollmentError`` if rejected or expired;
    ``IdentityError`` if a token is refused, or the id is registered and no token of it is
    kept; both end a script that does not catch them with one line and exit status 1.

    Options: ``url``; ``name``, ``kind``, ``capabilities``, ``metadata`` and ``reason`` for the
    operator; ``keep_identity`` (True); ``timeout`` (3600 s) for the decision, polled every
    ``poll_interval`` (0.5 s) growing to ``max_poll_interval`` (2 s)."""
    with RelayClient(options.get("url"), max_retries=5, anonymous=True) as anonymous:
        return cast(RelayClient, run(_enroll(agent_id, anonymous.config.url, options), anonymous))


async def async_enroll_and_wait(
    agent_id: str, **options: Unpack[EnrollOptions]
) -> AsyncRelayClient:
    """``enroll_and_wait`` with an async client."""
    async with AsyncRelayClient(options.get("url"), max_retries=5, anonymous=True) as anonymous:
        client = await arun(_enroll(agent_id, anonymous.config.url, options), anonymous)
        return cast(AsyncRelayClient, client)


def _enroll(
    agent_id: str, server: str, options: EnrollOptions
) -> Flow[RelayClient | AsyncRelayClient]:
    """The client of the agent: from RELAY_TOKEN, from the identity kept, or once the operator
    approved its enrollment."""
    keep = options.get("keep_identity", True)
    path = identity.identity_path(server, agent_id)
    given = _given_token()
    if given is not None:
        client: RelayClient | AsyncRelayClient = yield Open(
            {"url": server, "token": given, "agent_id": agent_id}
        )
        try:
            found = yield call("agents.me", on=client)
        except errors.AuthenticationError:
            found = None
        if found is None or found.agent_id != agent_id:
            yield Close(client)
            raise _not_given(agent_id, found)
        if keep:
            identity.keep(path, identity.Identity(token=given))
        log.info("%s: running with the token in RELAY_TOKEN (kept in %s)", agent_id, path)
        return client
    kept = identity.load(path) if keep else None
    if kept is not None and kept.token:
        resumed: RelayClient | AsyncRelayClient = yield Open(
            {"url": server, "token": kept.token, "agent_id": agent_id}
        )
        try:
            yield call("agents.me", on=resumed)
        except errors.AuthenticationError:
            yield Close(resumed)
            raise _refused(agent_id, path) from None
        log.info("%s: resuming with the token kept in %s", agent_id, path)
        return resumed
    if kept is not None and kept.enroll_id and kept.claim:
        waiting = kept
    else:
        asked = {k: options.get(k) for k in ("name", "kind", "capabilities", "metadata", "reason")}
        try:
            created = yield call("enroll.request", agent_id, **asked)
        except errors.ConflictError as exc:
            raise _taken(agent_id, server, path, exc) from None
        waiting = identity.Identity(created.enroll_id, created.claim, None, created.approval_id)
        if keep:
            identity.keep(path, waiting)
    assert waiting.enroll_id is not None and waiting.claim is not None
    log.info("%s: %s", agent_id, _waiting_line(waiting))
    interval = options.get("poll_interval", 0.5)
    deadline = time.monotonic() + options.get("timeout", 3600.0)
    while True:
        state = yield call("enroll.status", waiting.enroll_id, waiting.claim)
        token = _settled(state.status, state.token, waiting.enroll_id, path)
        if token:
            if keep:
                identity.keep(path, identity.Identity(token=token))
            log.info("%s: approved; enrolled", agent_id)
            enrolled: RelayClient | AsyncRelayClient = yield Open(
                {"url": server, "token": token, "agent_id": agent_id}
            )
            return enrolled
        if time.monotonic() + interval > deadline:
            raise errors.TimeoutError(f"enrollment {waiting.enroll_id} still pending")
        yield Sleep(interval)
        interval = min(options.get("max_poll_interval", 2.0), interval * 1.5)


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
