"""The agent helpers against a live server: inbox loop, task loop, heartbeats, enrollment."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
import uuid
from typing import Any

import pytest

from relay_api.models import Message, Task
from relay_client import (
    Agent,
    AsyncAgent,
    AsyncRelayClient,
    EnrollmentError,
    IdentityError,
    Progress,
    RelayClient,
    TaskFilter,
    async_enroll_and_wait,
    enroll_and_wait,
    in_trace,
)
from tests.live import LiveServer


def operator(server: LiveServer) -> RelayClient:
    return RelayClient(server.url, token=server.operator_token)


def new_agent(server: LiveServer) -> tuple[str, str]:
    agent_id = f"agent-{uuid.uuid4().hex[:8]}"
    with operator(server) as op:
        token = op.agents.register(agent_id).token
    assert token
    return agent_id, token


def test_messages_are_acked_only_after_the_loop_body(server: LiveServer) -> None:
    agent_id, token = new_agent(server)
    with operator(server) as op:
        for text in ("one", "two", "three"):
            op.messages.send(text, to=agent_id)
    with RelayClient(server.url, token=token, agent_id=agent_id) as client:
        agent = Agent(client)
        seen = []
        for message in agent.messages(idle_timeout=0.3):
            seen.append(message.text)
            if message.text == "two":
                break  # "two" was not handled to the end: it stays unacked
        assert seen == ["one", "two"]
        remaining = [m.text for m in client.agents.inbox().messages]
        assert remaining == ["two", "three"]
        assert [m.text for m in agent.messages(idle_timeout=0.3)] == ["two", "three"]
        assert client.agents.inbox().count == 0


def test_work_completes_and_fails_with_the_exception_text(server: LiveServer) -> None:
    agent_id, token = new_agent(server)
    with operator(server) as op:
        good = op.tasks.create("good", assignee=agent_id)
        bad = op.tasks.create("bad", assignee=agent_id)

    def handler(task: Task, progress: Progress) -> dict[str, Any]:
        progress(50, "halfway", step="fetch")
        if task.title == "bad":
            raise RuntimeError("disk full")
        return {"title": task.title}

    with RelayClient(server.url, token=token, agent_id=agent_id) as client:
        assert Agent(client).work(handler, idle_timeout=0.3) == 2
        done, failed = client.tasks.get(good.task_id), client.tasks.get(bad.task_id)
    assert done.status == "completed" and done.result == {"title": "good"}
    assert failed.status == "failed" and failed.error == "RuntimeError: disk full"
    with operator(server) as op:
        events = op.tasks.events(good.task_id).events
    assert [(e.kind, e.progress, e.data) for e in events if e.kind == "progress"] == [
        ("progress", 50, {"step": "fetch"})
    ]


def test_heartbeats_run_in_the_background(server: LiveServer) -> None:
    agent_id, token = new_agent(server)
    with RelayClient(server.url, token=token, agent_id=agent_id) as client:
        with Agent(client, heartbeat_interval=0.1):
            first = client.agents.list()
            seen = {a.agent_id: a.last_seen_at for a in first.agents}[agent_id]
            time.sleep(0.35)
            later = {a.agent_id: a for a in client.agents.list().agents}[agent_id]
        assert later.presence == "online"
        assert seen is not None and later.last_seen_at is not None and later.last_seen_at > seen


async def test_async_agent_loops(server: LiveServer) -> None:
    agent_id, token = new_agent(server)
    with operator(server) as op:
        op.messages.send("ping", to=agent_id)
        task = op.tasks.create("async work", assignee=agent_id)
    async with AsyncRelayClient(server.url, token=token, agent_id=agent_id) as client:
        async with AsyncAgent(client, heartbeat_interval=0.1) as agent:
            texts = [m.text async for m in agent.messages(idle_timeout=0.3)]

            async def handler(task: Task, progress: Any) -> dict[str, int]:
                await progress(10)
                return {"n": 1}

            assert await agent.work(handler, max_tasks=1) == 1
        assert texts == ["ping"]
        assert (await client.agents.inbox()).count == 0
        assert (await client.tasks.get(task.task_id)).result == {"n": 1}


SENT_IN = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def test_run_handles_each_message_and_task_in_the_trace_it_was_made_in(
    server: LiveServer,
) -> None:
    """A message or a task made in a trace is handled in it: the handler's requests carry it
    (Relay, which traces nothing here, keeps it with what they make); one made outside any
    trace is handled outside any."""
    agent_id, token = new_agent(server)
    told, told_token = new_agent(server)
    with operator(server) as op:
        with in_trace(SENT_IN):
            op.messages.send("traced", to=agent_id)
            op.tasks.create("traced", assignee=agent_id)
        op.messages.send("untraced", to=agent_id)

    with RelayClient(server.url, token=token, agent_id=agent_id) as client:

        def on_message(message: Message) -> None:
            client.messages.send(f"message {message.text}", to=told)

        def on_task(task: Task, progress: Progress) -> None:
            client.messages.send(f"task {task.title}", to=told)

        Agent(client).run(on_message=on_message, on_task=on_task, idle_timeout=0.5)
    with RelayClient(server.url, token=told_token, agent_id=told) as client:
        handled = {m.text: m.traceparent for m in client.agents.inbox().messages}
    assert handled == {
        "message traced": SENT_IN,
        "message untraced": None,
        "task traced": SENT_IN,
    }


async def test_an_async_agent_finishes_a_task_in_its_trace(server: LiveServer) -> None:
    """The task's completion is made in the trace the task was created in: Relay keeps that
    trace with the event that tells of it."""
    agent_id, token = new_agent(server)
    with operator(server) as op:
        cursor = op.events.list().cursor
        with in_trace(SENT_IN):
            task = op.tasks.create("traced", assignee=agent_id)
    async with AsyncRelayClient(server.url, token=token, agent_id=agent_id) as client:

        async def handler(task: Task, progress: Any) -> dict[str, int]:
            return {"n": 1}

        assert await AsyncAgent(client).work(handler, max_tasks=1) == 1
    with operator(server) as op:
        events = op.events.list(after=cursor, limit=1000).events
    told = [(e.kind, e.traceparent) for e in events if e.subject_id == str(task.task_id)]
    assert told == [
        ("task.created", SENT_IN),
        ("task.claimed", None),  # the agent's loop claims outside any trace
        ("task.completed", SENT_IN),
    ]


def approve_when_asked(
    server: LiveServer, agent_id: str, verb: str = "approve"
) -> threading.Thread:
    def run() -> None:
        with operator(server) as op:
            for _ in range(100):
                for approval in op.approvals.list(status="pending").approvals:
                    if approval.requested_by == agent_id:
                        getattr(op.approvals, verb)(approval.approval_id)
                        return
                time.sleep(0.05)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_enroll_and_wait_returns_a_ready_client(server: LiveServer) -> None:
    agent_id = f"enrollee-{uuid.uuid4().hex[:8]}"
    approver = approve_when_asked(server, agent_id)
    with enroll_and_wait(agent_id, url=server.url, reason="test", poll_interval=0.05) as client:
        approver.join()
        assert client.config.agent_id == agent_id
        assert client.agents.heartbeat().presence == "online"


def test_enroll_and_wait_raises_when_rejected(server: LiveServer) -> None:
    agent_id = f"refused-{uuid.uuid4().hex[:8]}"
    rejecter = approve_when_asked(server, agent_id, verb="reject")
    with pytest.raises(EnrollmentError) as caught:
        enroll_and_wait(agent_id, url=server.url, poll_interval=0.05)
    rejecter.join()
    assert caught.value.status == "rejected"


async def test_async_enroll_and_wait(server: LiveServer) -> None:
    agent_id = f"async-enrollee-{uuid.uuid4().hex[:8]}"
    approver = approve_when_asked(server, agent_id)
    client = await async_enroll_and_wait(agent_id, url=server.url, poll_interval=0.05)
    approver.join()
    async with client:
        assert (await client.agents.heartbeat()).agent_id == agent_id


def test_a_task_filter_names_what_the_agent_claims(server: LiveServer) -> None:
    """By title, by a test of the task, or only what is assigned to it; never another agent's."""
    agent_id, token = new_agent(server)
    other, _ = new_agent(server)
    n = uuid.uuid4().hex[:6]
    with operator(server) as op:
        deploy = op.tasks.create(f"deploy {n}")
        summarize = op.tasks.create(f"summarize {n}", payload={"text": "x"})
        theirs = op.tasks.create(f"summarize {n} for them", assignee=other)
        mine = op.tasks.create(f"translate {n}", assignee=agent_id, payload={"lang": "fr"})
        with RelayClient(server.url, token=token, agent_id=agent_id) as client:
            agent = Agent(client)
            worked: list[int] = []

            def note(task: Task, progress: Progress) -> dict[str, Any]:
                worked.append(task.task_id)
                return {}

            by_title = TaskFilter(titles=rf"^summarize {n}\b")
            assert agent.work(note, tasks=by_title, idle_timeout=0.3) == 1
            assert worked == [summarize.task_id]
            only_mine = TaskFilter(assigned_only=True, accept=lambda t: "lang" in t.payload)
            assert agent.work(note, tasks=only_mine, idle_timeout=0.3) == 1
            assert worked == [summarize.task_id, mine.task_id]
        assert op.tasks.get(deploy.task_id).status == "open"
        assert op.tasks.get(theirs.task_id).status == "open"


async def test_an_async_agent_takes_a_task_filter_too(server: LiveServer) -> None:
    agent_id, token = new_agent(server)
    n = uuid.uuid4().hex[:6]
    with operator(server) as op:
        skipped = op.tasks.create(f"deploy {n}")
        wanted = op.tasks.create(f"summarize {n}")
    async with AsyncRelayClient(server.url, token=token, agent_id=agent_id) as client:
        agent = AsyncAgent(client)
        done = await agent.work(
            lambda task, progress: {}, tasks=TaskFilter(titles=f"^summarize {n}$"), max_tasks=1
        )
        assert done == 1
        assert (await client.tasks.get(wanted.task_id)).status == "completed"
        assert (await client.tasks.get(skipped.task_id)).status == "open"


async def test_a_token_rotated_under_a_running_async_agent_is_an_identity_error(
    server: LiveServer,
) -> None:
    agent_id, token = new_agent(server)
    async with AsyncRelayClient(server.url, token=token, agent_id=agent_id) as client:
        running = asyncio.create_task(AsyncAgent(client).run(lambda message: None))
        await asyncio.sleep(0.5)
        with operator(server) as op:
            op.agents.register(agent_id, rotate_token=True)
        with pytest.raises(IdentityError, match="refused this agent's token while it ran"):
            await asyncio.wait_for(running, 30)


# In a fresh interpreter: which of the contract's models are built before a run and after.
BUILT_BY_RUN = """
import sys
from pydantic import BaseModel
from relay_api import models
from relay_client import Agent, RelayClient

def unbuilt():
    return [n for n, v in vars(models).items() if isinstance(v, type)
            and issubclass(v, BaseModel) and v.__module__ == models.__name__
            and not v.__pydantic_complete__]

before = len(unbuilt())
with RelayClient(sys.argv[1], token=sys.argv[2], agent_id=sys.argv[3]) as client:
    Agent(client).run(on_message=lambda message: None, idle_timeout=0.2)
print(before, unbuilt())
"""


def test_a_run_builds_every_model_before_its_loop(server: LiveServer) -> None:
    """A stop (Ctrl-C, SIGTERM) lands wherever the loop is; landing in pydantic building a
    model it would come out as a SchemaError, not a stop: the run builds them all first."""
    agent_id, token = new_agent(server)
    done = subprocess.run(
        [sys.executable, "-c", BUILT_BY_RUN, server.url, token, agent_id],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    before, after = done.stdout.split(" ", 1)
    assert int(before) > 50  # built only when used, as a short command wants them
    assert after.strip() == "[]"
