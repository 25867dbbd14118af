"""A2A the other way: a Relay agent reaches an external A2A agent through Relay
(``POST /v1/a2a/send``), on each backend.

The external agent is made with the official SDK (``a2a-sdk``'s request handler and routes)
and served by uvicorn on loopback: Relay reads its card, sends, follows its task in the
caller's feed, holds a call for the approval a policy asks for, and refuses private addresses
unless told otherwise.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2 as pb
from starlette.applications import Starlette
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import Response

from relay_core.ports import UnitOfWork
from relay_server.app_keys import SERVICES
from tests.server.conftest import ONE_BACKEND, Api, AppFactory

WAIT = 10.0  # seconds a test waits for the follower's change to reach the feed


class Scripted(AgentExecutor):
    """An external agent: "echo …" is answered with a message; "ask …" asks which branch and
    finishes once told; anything else is worked on for a moment and completed."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        assert context.message is not None
        if text.startswith("echo"):
            reply = new_text_message(f"you said: {text}", role=pb.ROLE_AGENT)
            await event_queue.enqueue_event(reply)
            return
        task = context.current_task or new_task_from_user_message(context.message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if text.startswith("ask"):
            question = updater.new_agent_message([pb.Part(text="Which branch?")])
            await updater.requires_input(question)
            return
        await updater.start_work()
        await asyncio.sleep(0.2)
        await updater.add_artifact([pb.Part(text=f"done: {text}")], name="result")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        assert context.task_id is not None and context.context_id is not None
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


class Remote:
    """The external agent's address, and the Authorization headers it was sent."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.authorizations: list[str | None] = []


def _app(remote: Remote) -> Starlette:
    card = pb.AgentCard(
        name="Builder",
        description="Builds branches.",
        version="1.0.0",
        supported_interfaces=[
            pb.AgentInterface(
                url=f"{remote.url}/rpc", protocol_binding="JSONRPC", protocol_version="1.0"
            )
        ],
        capabilities=pb.AgentCapabilities(streaming=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[pb.AgentSkill(id="build", name="Build", description="Builds.", tags=["ci"])],
    )
    handler = DefaultRequestHandler(Scripted(), InMemoryTaskStore(), card)

    async def seen(request: Request, call_next: Any) -> Response:
        if request.method == "POST":
            remote.authorizations.append(request.headers.get("authorization"))
        response: Response = await call_next(request)
        return response

    app = Starlette(
        routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/rpc")]
    )
    app.add_middleware(BaseHTTPMiddleware, dispatch=seen)
    return app


@pytest.fixture
def remote() -> Iterator[Remote]:
    """The external agent, served by uvicorn in a thread of its own on a loopback port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    found = Remote(f"http://127.0.0.1:{sock.getsockname()[1]}")
    server = uvicorn.Server(uvicorn.Config(_app(found), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        threading.Event().wait(0.02)
    yield found
    server.should_exit = True
    thread.join(timeout=10)
    sock.close()


async def changes(api: Api, agent: str, cursor: int, call_id: int) -> tuple[dict[str, Any], int]:
    """The next ``a2a.call.changed`` event of the call in the agent's feed after ``cursor``."""
    deadline = asyncio.get_running_loop().time() + WAIT
    while asyncio.get_running_loop().time() < deadline:
        page = await api.get("/v1/events", as_=agent, after=cursor, wait=2)
        cursor = page["cursor"]
        for event in page["events"]:
            if event["kind"] == "a2a.call.changed" and event["data"]["call_id"] == call_id:
                return event["data"], cursor
    raise AssertionError(f"no change of A2A call {call_id} within {WAIT} s")


async def until_status(api: Api, agent: str, cursor: int, call_id: int, status: str) -> int:
    """Wait for the caller's feed to tell that the call is in ``status``; its cursor then."""
    changed, cursor = await changes(api, agent, cursor, call_id)
    while changed["status"] != status:
        changed, cursor = await changes(api, agent, cursor, call_id)
    return cursor


async def until_state(api: Api, agent: str, call: dict[str, Any], state: str) -> int:
    """Move the test's clock past each next look of the follower until the call's task is in
    ``state``, as the caller's feed tells it; the feed's cursor then."""
    cursor, now = await feed_now(api, agent), call["state"]
    while now != state:
        api.clock.advance(2)
        changed, cursor = await changes(api, agent, cursor, call["call_id"])
        now = changed["state"]
    return cursor


async def feed_now(api: Api, agent: str) -> int:
    return int((await api.get("/v1/events", as_=agent))["cursor"])


async def test_a_task_is_sent_followed_to_its_end_and_logged(
    make_api: AppFactory, remote: Remote
) -> None:
    api = await make_api(a2a_allow_private=True)
    await api.agent("planner")
    call = await api.post(
        "/v1/a2a/send",
        {"url": remote.url, "text": "build main", "bearer": "s3cret-token"},
        as_="planner",
        expect=201,
    )
    assert (call["status"], call["remote_name"], call["endpoint"]) == (
        "sent",
        "Builder",
        f"{remote.url}/rpc",
    )
    assert call["remote_task_id"] and call["answer"]["task"]["id"] == call["remote_task_id"]
    assert call["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")
    assert call["message"]["parts"] == [{"text": "build main"}]
    assert "bearer" not in str(call) and "s3cret" not in str(call)
    # The follower reads the task again (the test's clock moved past its next look) and tells
    # the caller's feed until it ends.
    await until_state(api, "planner", call, "TASK_STATE_COMPLETED")
    shown = await api.get(f"/v1/a2a/calls/{call['call_id']}", as_="planner")
    assert shown["followed_until"] is None
    artifact = shown["answer"]["task"]["artifacts"][0]
    assert artifact["parts"] == [{"text": "done: build main"}]
    # The bearer token went with every request (send and each read) and is kept sealed.
    assert remote.authorizations and set(remote.authorizations) == {"Bearer s3cret-token"}
    assert len(remote.authorizations) >= 2
    sealed = await stored_bearer(api, call["call_id"])
    assert sealed is not None and "s3cret" not in sealed
    actions = (await api.get("/v1/actions", agent_id="planner"))["actions"]
    sent = [a for a in actions if a["action"] == "a2a.send"]
    assert sent[0]["target"] == remote.url and sent[0]["params"]["call_id"] == call["call_id"]


async def stored_bearer(api: Api, call_id: int) -> str | None:
    """The bearer token of the call as the database holds it."""
    services = api.client.app[SERVICES]

    async def work(uow: UnitOfWork) -> str | None:
        return await uow.a2a_calls.bearer(call_id)

    sealed: str | None = await services.a2a_calls.read(work)
    return sealed


async def test_a_reply_an_input_request_and_its_answer(
    make_api: AppFactory, remote: Remote
) -> None:
    api = await make_api(a2a_allow_private=True)
    await api.agent("planner")
    echoed = await api.post(
        "/v1/a2a/send", {"url": remote.url, "text": "echo hi"}, as_="planner", expect=201
    )
    assert echoed["state"] is None and echoed["followed_until"] is None
    assert echoed["answer"]["message"]["parts"] == [{"text": "you said: echo hi"}]
    asked = await api.post(
        "/v1/a2a/send",
        {"url": f"{remote.url}/.well-known/agent-card.json", "text": "ask me"},
        as_="planner",
        expect=201,
    )
    await until_state(api, "planner", asked, "TASK_STATE_INPUT_REQUIRED")
    asked = await api.get(f"/v1/a2a/calls/{asked['call_id']}", as_="planner")
    assert asked["followed_until"] is None  # the caller's turn: nothing to follow
    question = asked["answer"]["task"]["status"]["message"]["parts"]
    assert question == [{"text": "Which branch?"}]
    answered = await api.post(
        "/v1/a2a/send",
        {
            "url": remote.url,
            "text": "main",
            "task_id": asked["remote_task_id"],
            "context_id": asked["context_id"],
        },
        as_="planner",
        expect=201,
    )
    assert answered["remote_task_id"] == asked["remote_task_id"]
    assert answered["message"]["taskId"] == asked["remote_task_id"]
    # An unknown task is the agent's refusal, kept as a failed call.
    refused = await api.post(
        "/v1/a2a/send",
        {"url": remote.url, "text": "hello", "task_id": "no-such-task"},
        as_="planner",
        expect=201,
    )
    assert refused["status"] == "failed" and "refused SendMessage" in refused["error"]
    failed = await api.get("/v1/a2a/calls", as_="planner", status="failed")
    assert [c["call_id"] for c in failed["calls"]] == [refused["call_id"]]


async def test_a_policy_holds_a_call_for_the_operator(make_api: AppFactory, remote: Remote) -> None:
    api = await make_api(a2a_allow_private=True)
    await api.agent("planner")
    await api.post(
        "/v1/policies",
        {"name": "ask before A2A", "decision": "ask", "match": {"kinds": ["a2a"]}},
        expect=201,
    )
    cursor = await feed_now(api, "planner")
    held = await api.post(
        "/v1/a2a/send", {"url": remote.url, "text": "build release"}, as_="planner", expect=201
    )
    assert held["status"] == "awaiting_approval" and not remote.authorizations
    approval = await api.get(f"/v1/approvals/{held['approval_id']}")
    assert (approval["kind"], approval["status"]) == ("a2a", "pending")
    assert approval["payload"]["url"] == remote.url
    assert approval["payload"]["text"] == "build release"
    # The operator edits the text and approves; the follower sends it as approved.
    await api.post(
        f"/v1/approvals/{held['approval_id']}/approve", {"payload": {"text": "build rc1"}}
    )
    cursor = await until_status(api, "planner", cursor, held["call_id"], "sent")
    sent = await api.get(f"/v1/a2a/calls/{held['call_id']}", as_="planner")
    assert sent["message"]["parts"] == [{"text": "build rc1"}]
    assert sent["message"]["messageId"] == held["message"]["messageId"]
    # A rejected one is never sent.
    other = await api.post(
        "/v1/a2a/send", {"url": remote.url, "text": "deploy"}, as_="planner", expect=201
    )
    await api.post(f"/v1/approvals/{other['approval_id']}/reject", {"note": "not today"})
    await until_status(api, "planner", cursor, other["call_id"], "rejected")
    assert len(remote.authorizations) == 1  # the approved one's SendMessage alone


async def test_a_rejecting_policy_refuses_at_once(make_api: AppFactory, remote: Remote) -> None:
    api = await make_api(a2a_allow_private=True)
    await api.agent("planner")
    await api.post(
        "/v1/policies",
        {"name": "no A2A", "decision": "reject", "match": {"kinds": ["a2a"]}},
        expect=201,
    )
    refused = await api.post(
        "/v1/a2a/send", {"url": remote.url, "text": "build"}, as_="planner", expect=201
    )
    assert refused["status"] == "rejected" and "rejected" in refused["error"]
    assert not remote.authorizations


async def test_private_addresses_are_refused_unless_allowed(
    make_api: AppFactory, remote: Remote
) -> None:
    api = await make_api()
    await api.agent("planner")
    refused = await api.post(
        "/v1/a2a/send", {"url": remote.url, "text": "build"}, as_="planner", expect=201
    )
    assert refused["status"] == "failed" and "RELAY_A2A_ALLOW_PRIVATE" in refused["error"]
    assert not remote.authorizations
    (call,) = (await api.get("/v1/a2a/calls", as_="planner"))["calls"]
    assert call == refused


async def test_calls_are_their_callers(make_api: AppFactory, remote: Remote) -> None:
    api = await make_api(a2a_allow_private=True)
    await api.agent("planner")
    await api.agent("other")
    mine = await api.post(
        "/v1/a2a/send", {"url": remote.url, "text": "echo 1"}, as_="planner", expect=201
    )
    await api.post("/v1/a2a/send", {"url": remote.url, "text": "echo 2"}, as_="other", expect=201)
    assert [c["agent_id"] for c in (await api.get("/v1/a2a/calls", as_="planner"))["calls"]] == [
        "planner"
    ]
    await api.get(f"/v1/a2a/calls/{mine['call_id']}", as_="other", expect=404)
    await api.get("/v1/a2a/calls", as_="other", agent_id="planner", expect=403)
    every = await api.get("/v1/a2a/calls", limit=1)
    assert len(every["calls"]) == 1 and "next_cursor" in every
    rest = await api.get("/v1/a2a/calls", cursor=every["next_cursor"])
    assert [c["call_id"] for c in rest["calls"]] == [mine["call_id"]]


@ONE_BACKEND
async def test_a_message_says_something(make_api: AppFactory) -> None:
    api = await make_api()
    await api.agent("planner")
    await api.post("/v1/a2a/send", {"url": "http://a.example"}, as_="planner", expect=422)
    await api.post(
        "/v1/a2a/send", {"url": "ftp://a.example", "text": "x"}, as_="planner", expect=422
    )
    await api.post(
        "/v1/a2a/send", {"url": "http://u:p@a.example", "text": "x"}, as_="planner", expect=422
    )
