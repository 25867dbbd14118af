"""Every operation through the SDK against a real server, once with each twin.

The scenario is written once, async; the sync client runs it through a proxy that calls each
method in a worker thread, so both twins make every real request. The proxy records which
operations ran, and the test checks that the scenario covered the whole route table.
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook

from relay_api.operations import OPERATIONS
from relay_client import (
    AsyncRelayClient,
    ConflictError,
    NotFoundError,
    PermissionDeniedError,
    RelayClient,
    UnprocessableEntityError,
)
from tests.live import LiveServer
from tests.webhook_receiver import Receiver, receiving


class Recorded:
    """Awaitable access to a client (sync or async) that notes each operation it calls."""

    def __init__(self, target: Any, calls: set[str], prefix: str = "") -> None:
        self._target, self._calls, self._prefix = target, calls, prefix

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if not callable(value):
            return Recorded(value, self._calls, f"{self._prefix}{name}.")
        if inspect.isasyncgenfunction(value) or inspect.isgeneratorfunction(value):
            return self._iterating(name, value)

        async def call(*args: Any, **kwargs: Any) -> Any:
            self._calls.add(f"{self._prefix}{name}")
            if asyncio.iscoroutinefunction(value):
                return await value(*args, **kwargs)
            return await asyncio.to_thread(value, *args, **kwargs)

        return call

    def _iterating(self, name: str, value: Any) -> Any:
        async def iterate(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            self._calls.add(f"{self._prefix}{name}")
            if inspect.isasyncgenfunction(value):
                async for item in value(*args, **kwargs):
                    yield item
                return
            items = value(*args, **kwargs)
            while True:
                item = await asyncio.to_thread(next, items, None)
                if item is None:
                    return
                yield item

        return iterate


@pytest.fixture(params=["sync", "async"])
async def twin(request: pytest.FixtureRequest, server: LiveServer) -> Any:
    """A factory of recorded clients of one flavour, and the set of operations they ran."""
    calls: set[str] = set()
    opened: list[Any] = []

    def make(**kwargs: Any) -> Any:
        cls = RelayClient if request.param == "sync" else AsyncRelayClient
        client = cls(server.url, **kwargs)
        opened.append(client)
        return Recorded(client, calls)

    yield make, calls
    for client in opened:
        if isinstance(client, RelayClient):
            client.close()
        else:
            await client.close()


async def test_every_operation(twin: Any, server: LiveServer) -> None:
    make, calls = twin
    run = uuid.uuid4().hex[:8]
    op = make(token=server.operator_token)
    assert (await op.health()).status == "ok"

    alice_id, bob_id = f"alice-{run}", f"bob-{run}"
    alice_token = (await op.agents.register(alice_id, name="Alice", capabilities=["ops"])).token
    bob_token = (await op.agents.register(bob_id)).token
    alice = make(token=alice_token, agent_id=alice_id)
    bob = make(token=bob_token, agent_id=bob_id)

    beat = await alice.agents.heartbeat(status="busy")
    assert beat.presence == "online" and beat.status == "busy"
    assert alice_id in {a.agent_id for a in (await bob.agents.list()).agents}
    assert (await bob.status()).counts.agents >= 2
    skill = {"id": "ops", "name": "Ops", "description": "Operations."}
    reached = await alice.agents.a2a(skills=[skill])
    assert reached.a2a is not None and reached.a2a.enabled and reached.a2a.skills[0].id == "ops"

    sent = await alice.messages.send("hello", to=bob_id, payload={"n": 1})
    inbox = await bob.agents.inbox()
    assert [m.message_id for m in inbox.messages] == [sent.message_id]
    assert (await bob.messages.ack(sent.message_id)).status == "acked"
    with pytest.raises(PermissionDeniedError):
        await alice.messages.ack(sent.message_id)
    receipt = await alice.messages.show(sent.message_id)  # the sender's receipts
    assert receipt.delivered_at is not None and receipt.acked_at is not None
    # A client with only a token: the server knows whose it is.
    bob_by_token = make(token=bob_token)
    me = await bob_by_token.agents.me()
    assert me.agent_id == bob_id and me.pending_messages == 0
    again = await alice.messages.send("again", to=bob_id)
    assert (await bob_by_token.messages.ack(again.message_id)).status == "acked"
    with pytest.raises(NotFoundError):
        await op.agents.me()  # the operator is no agent

    note = await alice.notify.send("need a hand")
    assert note.status == "sent" and note.platform_message_id
    assert (await alice.notify.retry(note.notification_id)) == note  # sent already: as it is
    reply = await op.notify.reply(note.platform_message_id, "coming")
    assert reply.reply_to_notification == note.notification_id
    assert [n.notification_id for n in (await alice.notify.list()).notifications] == [
        note.notification_id
    ]

    room = f"room-{run}"
    await alice.rooms.join(room)
    posted = await alice.messages.send("in the room", room_id=room)
    assert [m.text for m in (await alice.rooms.messages(room, limit=10)).messages] == [
        "in the room"
    ]
    answered = await alice.messages.send(f"answer {run}", room_id=room, reply_to=posted.message_id)
    thread = await alice.messages.thread(answered.message_id)
    assert [m.message_id for m in thread.messages] == [posted.message_id, answered.message_id]
    [hit] = (await alice.search(f'"answer {run}"', kinds="room_post")).hits
    assert (hit.id, hit.room_id) == (answered.message_id, room)
    assert room in {r.room_id for r in (await bob.rooms.list()).rooms}

    space = await op.spaces.create(f"Space {run}")
    added = await op.spaces.add_room(space.space_id, "Bench", topic="t")
    assert added.space_id == space.space_id
    assert (await op.spaces.sync()).bridge == "local"
    assert (await op.spaces.archive(space.space_id)).status == "archived"
    listed = await op.spaces.list(include_archived=True)
    assert space.space_id in {s.space_id for s in listed.spaces}
    assert space.space_id not in {s.space_id for s in (await op.spaces.list()).spaces}

    task = await op.tasks.create(f"task {run}", payload={"k": 1}, max_attempts=2)
    assert (await bob.tasks.claim(task.task_id)).claimed_by == bob_id
    with pytest.raises(ConflictError):
        await alice.tasks.claim(task.task_id)
    assert (await bob.tasks.event(task.task_id, progress=40, message="going")).progress == 40
    assert (await bob.tasks.fail(task.task_id, error="flaky", retry=True)).status == "open"
    await alice.tasks.claim(task.task_id)
    done = await alice.tasks.complete(task.task_id, result={"ok": True})
    assert done.status == "completed" and (await op.tasks.get(task.task_id)) == done
    kinds = [e.kind for e in (await op.tasks.events(task.task_id)).events]
    assert kinds == ["claimed", "progress", "retry", "claimed", "completed"]
    mine = await op.tasks.list(claimed_by=alice_id, status="completed")
    assert [t.task_id for t in mine.tasks] == [task.task_id]
    dropped = await alice.tasks.create(f"dropped {run}")
    assert (await alice.tasks.cancel(dropped.task_id, reason="no need")).status == "cancelled"

    recorded = await alice.actions.record("deploy", target="web-1", task_id=task.task_id)
    assert recorded.agent_id == alice_id
    assert (await op.actions.list(agent_id=alice_id)).actions[0] == recorded

    newcomer = make()
    created = await newcomer.enroll.request(f"carol-{run}", reason="new")
    assert (await newcomer.enroll.status(created.enroll_id, created.claim)).status == "pending"
    pending = await op.approvals.list(status="pending")
    assert created.approval_id in {a.approval_id for a in pending.approvals}
    assert (await op.approvals.show(created.approval_id)).kind == "enrollment"
    decided = await op.approvals.approve(created.approval_id, note="ok")
    assert decided.status == "approved" and decided.changed is True
    repeated = await op.approvals.approve(created.approval_id, note="another note")
    assert repeated.changed is False and repeated.note == "ok"  # nothing changed
    state = await newcomer.enroll.status(created.enroll_id, created.claim)
    assert state.token and state.token.startswith("rly_agent_")
    with pytest.raises(NotFoundError):
        await newcomer.enroll.status(created.enroll_id, "wrong")

    question = await alice.approvals.ask("Which database?", ["Postgres", "SQLite"])
    assert question.kind == "question" and [o.label for o in question.options or []] == [
        "Postgres",
        "SQLite",
    ]
    answered = await op.approvals.answer(question.approval_id, ["SQLite"])
    shown = await alice.approvals.show(question.approval_id)
    assert shown.answer == answered.answer == ["SQLite"]

    incident = f"inc-{run}"
    diagnostic = await alice.interventions.diagnostic(incident, summary="slow", content={"p99": 9})
    assert await alice.interventions.show_diagnostic(incident) == diagnostic
    asked = await alice.interventions.request_approval(
        incident, title="restart", reason="slow", proposed_action="restart", risk="low"
    )
    assert (await alice.interventions.approval(incident)).approval_id == asked.approval_id
    await op.approvals.reject(asked.approval_id, note="not now")
    again = await alice.interventions.request_approval(
        incident, title="restart", reason="slower", proposed_action="restart"
    )
    await op.approvals.approve(again.approval_id)
    trace = await alice.interventions.action(
        incident,
        action="restart",
        status="succeeded",
        evidence_before={"p99": 9},
        evidence_after={"p99": 1},
    )
    newest = await op.interventions.list(limit=100)
    entry = next(i for i in newest.interventions if i.intervention_id == incident)
    assert entry.status == "remediated" and entry.last_action == trace
    assert entry.latest_diagnostic == diagnostic
    with pytest.raises(PermissionDeniedError):
        await bob.interventions.diagnostic(incident, summary="seen", content="x")
    joined = await op.interventions.add_participant(incident, bob_id)
    assert joined.participants == [bob_id] and joined.created_by == alice_id
    assert (await bob.interventions.diagnostic(incident, summary="seen", content="x")).agent_id

    asked = await alice.approvals.request(
        "Bash: make deploy", payload={"command": "make deploy"}, expires_in=600
    )
    assert asked.kind == "request" and asked.expires_at is not None
    with pytest.raises(NotFoundError):
        await bob.approvals.show(asked.approval_id)
    await op.approvals.approve(asked.approval_id, note="go")
    decided = await alice.approvals.show(asked.approval_id, wait=5)
    assert decided.status == "approved" and decided.note == "go"
    dropped = await alice.approvals.request("Bash: make rollback")
    withdrawn = await alice.approvals.withdraw(dropped.approval_id, reason="fixed forward")
    assert withdrawn.status == "withdrawn" and withdrawn.note == "fixed forward"

    rule = await op.policies.create(
        f"reads of {run}",
        "approve",
        match={"agents": [alice_id], "title": "^Read: "},
        limit={"count": 1, "per_seconds": 3600},
    )
    assert (await alice.approvals.request("Read: notes.md")).decided_by == (
        f"policy:{rule.policy_id}@1"
    )
    assert (await alice.approvals.request("Read: again.md")).status == "pending"  # the limit
    verdict = await op.policies.simulate(bob_id, "Read: x")
    assert verdict.decision == "ask"
    replaced = await op.policies.replace(rule.policy_id, f"reads of {run}", "reject")
    assert replaced.version == 2 and (await op.policies.disable(rule.policy_id)).version == 3
    assert (await op.policies.enable(rule.policy_id)).enabled
    assert (await op.policies.show(rule.policy_id, version=1)).decision == "approve"
    assert rule.policy_id in {p.policy_id for p in (await op.policies.list(limit=1000)).policies}
    await op.policies.disable(rule.policy_id)  # the other tests' approvals stay pending

    with receiving() as receiver:
        await every_webhook_operation(op, receiver, run)

    repo = f"github.com/acme/{run}"
    held = await alice.reservations.create(repo, ["src/api/**"], reason="auth", ttl_seconds=600)
    with pytest.raises(ConflictError) as contested:
        await bob.reservations.create(repo, ["src/api/app.py"])
    assert contested.value.body["conflicts"][0]["holder"] == alice_id
    covering = await bob.reservations.list(workspace=repo, path="src/api/app.py")
    assert [r.reservation_id for r in covering.reservations] == [held.reservation_id]
    assert (await bob.reservations.show(held.reservation_id)).reason == "auth"
    renewed = await alice.reservations.renew(held.reservation_id, ttl_seconds=1200)
    assert renewed.expires_at > held.expires_at
    assert (await alice.reservations.release(held.reservation_id)).status == "released"

    # A2A: a call to a loopback address is refused (the server does not allow private ones)
    # and kept, failed, for its caller to read.
    refused = await alice.a2a.send("http://127.0.0.1:9/a", text=f"build {run}", bearer="s3cret")
    assert refused.status == "failed" and "RELAY_A2A_ALLOW_PRIVATE" in (refused.error or "")
    (failed,) = (await alice.a2a.list(status="failed", limit=1)).calls
    assert (await alice.a2a.show(failed.call_id)).message["parts"] == [{"text": f"build {run}"}]

    cursor = (await alice.events.list()).cursor
    await op.tasks.create(f"announced {run}")
    feed = await alice.events.list(after=cursor, wait=5)
    assert [e.kind for e in feed.events] == ["task.created"]
    async for event in alice.events.stream(after=cursor):
        assert event.event_id == feed.events[0].event_id
        break
    issued = await alice.events.ticket()
    assert issued.ticket.startswith("rly_ticket_") and issued.expires_at > feed.events[0].created_at
    waited = await bob.agents.inbox(wait=0.2)
    assert waited.count == 0

    with pytest.raises(UnprocessableEntityError) as invalid:
        await op.rooms.messages(room, limit=0)
    assert invalid.value.errors[0]["loc"] == ["query", "limit"]

    # Every operation, and the method written by hand on top of one (ask: a request).
    assert calls == {route.id for route in OPERATIONS} | {"approvals.ask"}


async def every_webhook_operation(op: Any, receiver: Receiver, run: str) -> None:
    """An endpoint made, read, changed, rotated, tested (the receiver verifies it with the new
    secret), its delivery listed and refused a retry (it succeeded), disabled and enabled."""
    hook = await op.webhooks.create(receiver.url, events=["webhook.test"], description=run)
    assert hook.secret and (await op.webhooks.show(hook.webhook_id)).secret is None
    listed = (await op.webhooks.list(limit=1000)).webhooks
    assert hook.webhook_id in {w.webhook_id for w in listed}
    changed = await op.webhooks.replace(
        hook.webhook_id, receiver.url, events=["webhook.test"], description=f"{run} again"
    )
    assert changed.description == f"{run} again"
    receiver.verifier = Webhook((await op.webhooks.rotate_secret(hook.webhook_id)).secret)
    tested = await op.webhooks.test(hook.webhook_id)
    for _ in range(200):
        [delivery] = (await op.webhooks.deliveries(hook.webhook_id)).deliveries
        if delivery.status != "pending":
            break
        await asyncio.sleep(0.05)
    assert (delivery.message_id, delivery.status) == (tested.message_id, "succeeded")
    assert receiver.attempts == {tested.message_id: 1} and receiver.forged == 0
    with pytest.raises(ConflictError):
        await op.webhooks.retry(hook.webhook_id, delivery.delivery_id)
    assert not (await op.webhooks.disable(hook.webhook_id)).enabled
    assert (await op.webhooks.enable(hook.webhook_id)).enabled
    await op.webhooks.disable(hook.webhook_id)  # the other tests' events are not sent


async def test_iterators_follow_every_cursor_in_both_twins(server: LiveServer) -> None:
    run = uuid.uuid4().hex[:8]
    owner = f"owner-{run}"
    with RelayClient(server.url, token=server.operator_token) as op:
        op.agents.register(owner)
        created = [op.tasks.create(f"t{n}", assignee=owner).task_id for n in range(25)]
        first = op.tasks.list(assignee=owner, limit=10)
        assert [t.task_id for t in first.tasks] == created[:10] and first.next_cursor
        following = op.tasks.list(assignee=owner, limit=10, cursor=first.next_cursor)
        assert [t.task_id for t in following.tasks] == created[10:20]
        assert [t.task_id for t in op.tasks.iterate(assignee=owner, limit=10)] == created
        assert owner in {agent.agent_id for agent in op.agents.iterate(limit=2)}
    async with AsyncRelayClient(server.url, token=server.operator_token) as aop:
        walked = [t.task_id async for t in aop.tasks.iterate(assignee=owner, limit=7)]
        assert walked == created
