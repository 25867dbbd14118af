"""A2A 1.0: the official SDK's client (``a2a-sdk``) against the real server, on each backend.

An agent opts in; an asker (another Relay agent) finds its card, sends it work, follows it,
lists and cancels it; the agent answers through Relay's own API, as any agent does.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.client.client import Client
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import (
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from aiohttp import web
from aiohttp.test_utils import TestServer
from google.api import field_behavior_pb2
from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor

from relay_core.storage.sqlite.driver import sqlite3
from tests.server.conftest import Api, AppFactory

SKILLS = [{"id": "summarize", "name": "Summarize", "description": "Summarize a text."}]


def missing_required(descriptor: Descriptor, shown: dict[str, Any], at: str = "") -> list[str]:
    """The fields the proto marks REQUIRED (google.api.field_behavior) that ``shown`` (a
    message's JSON) lacks, nested messages included."""
    missing = []
    for found in descriptor.fields:
        path = f"{at}{found.json_name}"
        value = shown.get(found.json_name)
        behaviors = found.GetOptions().Extensions[field_behavior_pb2.field_behavior]
        if field_behavior_pb2.REQUIRED in behaviors and value in (None, "", [], {}):
            missing.append(path)
        nested = found.message_type
        if nested is None or value is None or nested.GetOptions().map_entry:
            continue
        if nested.full_name.startswith("google.protobuf."):
            continue
        for item in value if isinstance(value, list) else [value]:
            missing += missing_required(nested, item, f"{path}.")
    return missing


def base(api: Api) -> str:
    return str(api.client.make_url("")).rstrip("/")


async def reachable(api: Api, agent_id: str = "worker") -> None:
    await api.agent(agent_id)
    await api.post(
        f"/v1/agents/{agent_id}/a2a",
        {"enabled": True, "description": "Summarizes texts.", "skills": SKILLS},
        as_=agent_id,
    )


@asynccontextmanager
async def a2a_client(
    api: Api, token: str, agent_id: str = "worker", streaming: bool = False
) -> AsyncIterator[Client]:
    """The SDK's client of the agent, from its card, with the caller's Relay token."""
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    factory = ClientFactory(ClientConfig(httpx_client=http, streaming=streaming))
    client = await factory.create_from_url(f"{base(api)}/a2a/agents/{agent_id}")
    try:
        yield client
    finally:
        await client.close()
        await http.aclose()


def ask(
    text: str, message_id: str = "m-1", task_id: str = "", *, at_once: bool = False
) -> pb.SendMessageRequest:
    """A send of ``text``; ``at_once``: answered as soon as the task is made."""
    message = pb.Message(
        message_id=message_id, role=pb.ROLE_USER, parts=[pb.Part(text=text)], task_id=task_id
    )
    request = pb.SendMessageRequest(message=message)
    request.configuration.return_immediately = at_once
    return request


async def sent(client: Client, request: pb.SendMessageRequest) -> pb.Task:
    """The task a send answers (the last one of a stream)."""
    found = None
    async for response in client.send_message(request):
        assert response.HasField("task"), response
        found = response.task
    assert found is not None
    return found


async def test_an_agent_opts_in_and_its_card_is_found(api: Api) -> None:
    await reachable(api)
    await api.agent("other")
    listed = await api.get("/v1/agents")
    worker = next(agent for agent in listed["agents"] if agent["agent_id"] == "worker")
    assert worker["a2a"]["enabled"] is True
    assert worker["a2a"]["skills"][0]["id"] == "summarize"
    # Another agent may not change it; the operator may.
    await api.post("/v1/agents/worker/a2a", {"enabled": False}, as_="other", expect=403)

    async with httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, f"{base(api)}/a2a/agents/worker").get_agent_card()
        relay = (await http.get(f"{base(api)}/.well-known/agent-card.json")).json()
        elsewhere = await http.get(f"{base(api)}/a2a/agents/other/.well-known/agent-card.json")
    assert card.name == "worker"
    assert card.description == "Summarizes texts."
    assert card.supported_interfaces[0].url == f"{base(api)}/a2a/agents/worker"
    assert card.supported_interfaces[0].protocol_binding == "JSONRPC"
    assert card.supported_interfaces[0].protocol_version == "1.0"
    assert card.capabilities.streaming is True and card.capabilities.push_notifications is True
    assert [skill.id for skill in card.skills] == ["summarize"]
    assert card.security_schemes["bearer"].http_auth_security_scheme.scheme == "Bearer"
    assert elsewhere.status_code == 404  # not reachable over A2A
    directory = relay["capabilities"]["extensions"][0]["params"]["agents"]
    assert directory == [
        {
            "agent_id": "worker",
            "name": "worker",
            "card": f"{base(api)}/a2a/agents/worker/.well-known/agent-card.json",
        }
    ]
    # Both cards are AgentCards as the specification's proto defines them: every field
    # known, every field it marks REQUIRED present.
    for shown in (relay, json_format.MessageToDict(card)):
        json_format.ParseDict(shown, pb.AgentCard())
        assert not missing_required(pb.AgentCard.DESCRIPTOR, shown)

    # An agent that declares no skill still has a card with one, as the proto requires.
    await api.post("/v1/agents/other/a2a", {}, as_="other")
    async with httpx.AsyncClient() as http:
        bare = (await http.get(f"{base(api)}/a2a/agents/other/.well-known/agent-card.json")).json()
    assert not missing_required(pb.AgentCard.DESCRIPTOR, bare)
    assert [skill["id"] for skill in bare["skills"]] == ["other"]

    await api.post("/v1/agents/worker/a2a", {"enabled": False})  # the operator
    async with httpx.AsyncClient() as http:
        gone = await http.get(f"{base(api)}/a2a/agents/worker/.well-known/agent-card.json")
    assert gone.status_code == 404


async def test_a_message_becomes_a_task_the_agent_works_through_relay(api: Api) -> None:
    await reachable(api)
    asker = await api.agent("asker")
    request = ask("Summarize the release notes\nThey are long.", at_once=True)
    async with a2a_client(api, asker) as client:
        task = await sent(client, request)
        assert task.status.state == pb.TASK_STATE_SUBMITTED
        assert task.context_id  # Relay gave the conversation an id
        # The same message sent again is the same task.
        again = await sent(client, request)
        assert again.id == task.id

        relay_task = await api.get(f"/v1/tasks/{task.id}", as_="worker")
        assert relay_task["assignee"] == "worker"
        assert relay_task["created_by"] == "asker"
        assert relay_task["title"] == "Summarize the release notes"
        assert relay_task["payload"]["text"] == "Summarize the release notes\nThey are long."

        await api.post(f"/v1/tasks/{task.id}/claim", {}, as_="worker")
        working = await client.get_task(pb.GetTaskRequest(id=task.id))
        assert working.status.state == pb.TASK_STATE_WORKING
        await api.post(
            f"/v1/tasks/{task.id}/complete", {"result": {"summary": "short"}}, as_="worker"
        )
        done = await client.get_task(pb.GetTaskRequest(id=task.id))
    assert done.status.state == pb.TASK_STATE_COMPLETED
    assert json_format.MessageToDict(done.artifacts[0].parts[0].data) == {"summary": "short"}
    assert done.history[0].role == pb.ROLE_USER
    assert done.history[0].parts[0].text.startswith("Summarize")


async def test_a_blocking_send_waits_for_the_agents_question_and_the_answer_reaches_it(
    api: Api,
) -> None:
    await reachable(api)
    asker = await api.agent("asker")

    async def agent_asks() -> str:
        while not (await api.get("/v1/tasks", as_="worker", assignee="worker"))["tasks"]:
            await asyncio.sleep(0.05)
        task_id = (await api.get("/v1/tasks", as_="worker", assignee="worker"))["tasks"][0]
        task_id = task_id["task_id"]
        await api.post(f"/v1/tasks/{task_id}/claim", {}, as_="worker")
        question = {"kind": "input_required", "message": "Which release?"}
        await api.post(f"/v1/tasks/{task_id}/events", question, as_="worker", expect=201)
        return str(task_id)

    async with a2a_client(api, asker) as client:
        asking = asyncio.create_task(agent_asks())
        waited = await sent(client, ask("Summarize the release notes"))
        task_id = await asking
        assert waited.id == task_id
        assert waited.status.state == pb.TASK_STATE_INPUT_REQUIRED
        assert waited.status.message.role == pb.ROLE_AGENT
        assert waited.status.message.parts[0].text == "Which release?"
        listed = await client.list_tasks(pb.ListTasksRequest(status=pb.TASK_STATE_INPUT_REQUIRED))
        assert [found.id for found in listed.tasks] == [task_id]

        answer = ask("Version 2.0", message_id="m-2", task_id=task_id, at_once=True)
        answered = await sent(client, answer)
        assert answered.status.state == pb.TASK_STATE_WORKING
        assert [m.parts[0].text for m in answered.history][-2:] == ["Which release?", "Version 2.0"]

    inbox = await api.get("/v1/agents/worker/inbox", as_="worker")
    told = inbox["messages"][-1]
    assert (told["from_agent"], told["text"]) == ("asker", "Version 2.0")
    assert told["payload"]["task_id"] == int(task_id)
    trail = await api.get(f"/v1/tasks/{task_id}/events", as_="worker")
    assert [(note["kind"], note["agent_id"]) for note in trail["events"]][-1] == (
        "message",
        "asker",
    )


async def test_a_stream_follows_the_task_to_its_end(api: Api) -> None:
    await reachable(api)
    asker = await api.agent("asker")
    seen: list[pb.StreamResponse] = []

    async def agent_works() -> None:
        while len(seen) < 1:
            await asyncio.sleep(0.05)
        task_id = seen[0].task.id
        await api.post(f"/v1/tasks/{task_id}/claim", {}, as_="worker")
        await api.post(f"/v1/tasks/{task_id}/complete", {"result": {"n": 1}}, as_="worker")

    async with a2a_client(api, asker, streaming=True) as client:
        working = asyncio.create_task(agent_works())
        async for response in client.send_message(ask("Count")):
            seen.append(response)
        await working
    assert seen[0].task.status.state == pb.TASK_STATE_SUBMITTED
    states = [r.status_update.status.state for r in seen if r.HasField("status_update")]
    assert states == [pb.TASK_STATE_WORKING, pb.TASK_STATE_COMPLETED]
    artifacts = [r.artifact_update for r in seen if r.HasField("artifact_update")]
    assert json_format.MessageToDict(artifacts[0].artifact.parts[0].data) == {"n": 1}


async def test_subscribe_shows_the_task_then_its_changes(api: Api) -> None:
    await reachable(api)
    asker = await api.agent("asker")
    request = ask("Wait for me", at_once=True)
    async with a2a_client(api, asker) as client:
        task = await sent(client, request)
    async with a2a_client(api, asker, streaming=True) as client:
        seen: list[pb.StreamResponse] = []

        async def follow() -> None:
            async for response in client.subscribe(pb.SubscribeToTaskRequest(id=task.id)):
                seen.append(response)

        following = asyncio.create_task(follow())
        while not seen:
            await asyncio.sleep(0.05)
        await api.post(f"/v1/tasks/{task.id}/cancel", {"reason": "not needed"}, as_="asker")
        await asyncio.wait_for(following, 10)
        assert seen[0].task.id == task.id
        final = seen[-1].status_update.status
        assert final.state == pb.TASK_STATE_CANCELED
        assert final.message.parts[0].text == "not needed"
        with pytest.raises(UnsupportedOperationError):
            async for _ in client.subscribe(pb.SubscribeToTaskRequest(id=task.id)):
                pass


async def test_listing_pages_the_askers_own_tasks_newest_first(api: Api) -> None:
    await reachable(api)
    asker = await api.agent("asker")
    stranger = await api.agent("stranger")
    ids = []
    async with a2a_client(api, asker) as client:
        for n in range(3):
            request = ask(f"job {n}", message_id=f"job-{n}", at_once=True)
            ids.append((await sent(client, request)).id)
            api.clock.advance(1)
        first = await client.list_tasks(pb.ListTasksRequest(page_size=2))
        second = await client.list_tasks(
            pb.ListTasksRequest(page_size=2, page_token=first.next_page_token)
        )
    assert [task.id for task in first.tasks] == [ids[2], ids[1]]
    assert [task.id for task in second.tasks] == [ids[0]]
    assert (first.total_size, first.page_size, second.next_page_token) == (3, 2, "")
    assert not first.tasks[0].history  # none unless asked for
    async with a2a_client(api, stranger) as client:
        assert not (await client.list_tasks(pb.ListTasksRequest())).tasks
        with pytest.raises(TaskNotFoundError):
            await client.get_task(pb.GetTaskRequest(id=ids[0]))
    async with a2a_client(api, "rly_op_test-operator-token-0123456789") as client:
        assert len((await client.list_tasks(pb.ListTasksRequest())).tasks) == 3


async def test_cancel_twice_and_a_finished_task_is_not_cancelable(api: Api) -> None:
    await reachable(api)
    asker = await api.agent("asker")
    async with a2a_client(api, asker) as client:
        first, second = ask("a", "a", at_once=True), ask("b", "b", at_once=True)
        one, two = await sent(client, first), await sent(client, second)
        cancelled = await client.cancel_task(pb.CancelTaskRequest(id=one.id))
        again = await client.cancel_task(pb.CancelTaskRequest(id=one.id))
        assert cancelled.status.state == again.status.state == pb.TASK_STATE_CANCELED
        relay_task = await api.get(f"/v1/tasks/{one.id}", as_="asker")
        assert relay_task["status"] == "cancelled"
        with pytest.raises(UnsupportedOperationError):  # a finished task takes no message
            await sent(client, ask("more", message_id="c", task_id=one.id))

        await api.post(f"/v1/tasks/{two.id}/claim", {}, as_="worker")
        await api.post(f"/v1/tasks/{two.id}/complete", {}, as_="worker")
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(pb.CancelTaskRequest(id=two.id))
        with pytest.raises(TaskNotFoundError):
            await client.get_task(pb.GetTaskRequest(id="999999"))


async def test_who_may_call_and_in_which_version(api: Api) -> None:
    await reachable(api)
    asker = await api.agent("asker")
    url = f"{base(api)}/a2a/agents/worker"
    call = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "1"}}
    async with httpx.AsyncClient() as http:
        anonymous = await http.post(url, json=call, headers={"A2A-Version": "1.0"})
        assert anonymous.status_code == 401
        bearer = {"Authorization": f"Bearer {asker}"}
        old = (await http.post(url, json=call, headers=bearer)).json()
        unknown = await http.post(
            url, json={**call, "method": "tasks/get"}, headers={**bearer, "A2A-Version": "1.0"}
        )
        garbled = await http.post(
            url,
            content=b"{",
            headers={**bearer, "A2A-Version": "1.0", "Content-Type": "application/json"},
        )
        extended = await http.post(
            url,
            json={**call, "method": "GetExtendedAgentCard"},
            headers={**bearer, "A2A-Version": "1.0"},
        )
    assert old["error"]["code"] == -32009  # no header: version 0.3, which is not served
    assert old["error"]["data"][0]["reason"] == "VERSION_NOT_SUPPORTED"
    assert unknown.json()["error"]["code"] == -32601
    assert garbled.json()["error"]["code"] == -32700
    assert extended.json()["error"]["code"] == -32004  # the card declares no extended card


async def test_a_task_waiting_on_the_operators_approval_is_input_required(api: Api) -> None:
    await reachable(api)
    asker = await api.agent("asker")
    request = ask("Deploy the site", at_once=True)
    async with a2a_client(api, asker) as client:
        task = await sent(client, request)
        await api.post(f"/v1/tasks/{task.id}/claim", {}, as_="worker")
        asked = {"title": "Deploy to production?", "task_id": int(task.id)}
        approval = await api.post("/v1/approvals", asked, as_="worker", expect=201)
        waiting = await client.get_task(pb.GetTaskRequest(id=task.id))
        assert waiting.status.state == pb.TASK_STATE_INPUT_REQUIRED
        said = waiting.status.message
        assert said.parts[0].text == (
            f"Waiting for the operator's approval {approval['approval_id']}: Deploy to production?"
        )
        data = json_format.MessageToDict(said.parts[1].data)
        assert data["approval_id"] == approval["approval_id"]
        input_required = pb.ListTasksRequest(status=pb.TASK_STATE_INPUT_REQUIRED)
        assert [t.id for t in (await client.list_tasks(input_required)).tasks] == [task.id]
        working = pb.ListTasksRequest(status=pb.TASK_STATE_WORKING)
        assert not (await client.list_tasks(working)).tasks

        await api.post(f"/v1/approvals/{approval['approval_id']}/approve", {})
        going = await client.get_task(pb.GetTaskRequest(id=task.id))
        assert going.status.state == pb.TASK_STATE_WORKING
        assert [t.id for t in (await client.list_tasks(working)).tasks] == [task.id]
    missing = {"title": "t", "task_id": 999999}
    await api.post("/v1/approvals", missing, as_="worker", expect=404)


class PushReceiver:
    """A loopback endpoint of A2A push notifications: each request's headers and body."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], dict[str, Any]]] = []
        self.url = ""

    async def handle(self, request: web.Request) -> web.Response:
        self.received.append((dict(request.headers), await request.json()))
        return web.Response(status=204)

    async def until(self, done: Callable[[], bool], timeout: float = 20) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while not done():
            assert asyncio.get_running_loop().time() < deadline, self.received
            await asyncio.sleep(0.05)


@pytest.fixture
async def pushes(aiohttp_server: Callable[..., Awaitable[TestServer]]) -> PushReceiver:
    receiver = PushReceiver()
    app = web.Application()
    app.router.add_post("/a2a-push", receiver.handle)
    server = await aiohttp_server(app)
    receiver.url = str(server.make_url("/a2a-push"))
    return receiver


def state_of(body: dict[str, Any]) -> int:
    return json_format.ParseDict(body, pb.StreamResponse()).task.status.state


async def test_push_notifications_reach_the_callers_endpoint(
    make_api: AppFactory, pushes: PushReceiver
) -> None:
    api = await make_api(webhooks_allow_private=True, webhook_retry_schedule="1,1,1")
    await reachable(api)
    asker = await api.agent("asker")
    request = ask("Summarize and tell me", at_once=True)
    config = request.configuration.task_push_notification_config
    config.url = pushes.url
    config.token = "notification-token-1"
    config.authentication.scheme = "Bearer"
    config.authentication.credentials = "push-credentials-1"
    async with a2a_client(api, asker) as client:
        task = await sent(client, request)
        await api.post(f"/v1/tasks/{task.id}/claim", {}, as_="worker")
        question = {"kind": "input_required", "message": "Which part?"}
        await api.post(f"/v1/tasks/{task.id}/events", question, as_="worker", expect=201)
        await pushes.until(
            lambda: any(state_of(b) == pb.TASK_STATE_INPUT_REQUIRED for _, b in pushes.received)
        )
        await api.post(f"/v1/tasks/{task.id}/complete", {"result": {"n": 2}}, as_="worker")
        await pushes.until(
            lambda: any(state_of(b) == pb.TASK_STATE_COMPLETED for _, b in pushes.received)
        )
        for headers, body in pushes.received:
            assert headers["X-A2A-Notification-Token"] == "notification-token-1"
            assert headers["Authorization"] == "Bearer push-credentials-1"
            assert body["task"]["id"] == task.id
            assert "webhook-signature" in headers  # signed as every webhook is

        # A config of its own, listed and read back without its secrets, then deleted.
        other = ask("Another", message_id="m-other", at_once=True)
        second = await sent(client, other)
        made = await client.create_task_push_notification_config(
            pb.TaskPushNotificationConfig(
                task_id=second.id, id="mine", url=pushes.url, token="notification-token-2"
            )
        )
        assert (made.id, made.task_id, made.url) == ("mine", second.id, pushes.url)
        listed = await client.list_task_push_notification_configs(
            pb.ListTaskPushNotificationConfigsRequest(task_id=second.id)
        )
        assert [(c.id, c.url, c.token) for c in listed.configs] == [("mine", pushes.url, "")]
        got = await client.get_task_push_notification_config(
            pb.GetTaskPushNotificationConfigRequest(task_id=second.id, id="mine")
        )
        assert got.url == pushes.url
        await client.delete_task_push_notification_config(
            pb.DeleteTaskPushNotificationConfigRequest(task_id=second.id, id="mine")
        )
        assert not (
            await client.list_task_push_notification_configs(
                pb.ListTaskPushNotificationConfigsRequest(task_id=second.id)
            )
        ).configs
        with pytest.raises(TaskNotFoundError):
            await client.get_task_push_notification_config(
                pb.GetTaskPushNotificationConfigRequest(task_id=second.id, id="mine")
            )
        before = len(pushes.received)
        await api.post(f"/v1/tasks/{second.id}/cancel", {}, as_="asker")
        await asyncio.sleep(1.5)  # a deleted config is sent nothing: nothing arrives meanwhile
        assert len(pushes.received) == before
    # Its secrets are kept sealed, never as given (SQLite: the rows and the files).
    if api.db_path.exists():
        with sqlite3.connect(api.db_path) as db:
            kept = [row[0] for row in db.execute("SELECT a2a_push FROM webhooks")]
        assert len(kept) == 2 and all("token" in push for push in kept)
        files = [api.db_path, api.db_path.with_name("relay.db-wal")]
        stored = b"".join(f.read_bytes() for f in files if f.exists()) + "".join(kept).encode()
        for secret in (b"notification-token-1", b"push-credentials-1", b"notification-token-2"):
            assert secret not in stored


async def test_a_push_config_to_a_private_address_is_refused(api: Api) -> None:
    await reachable(api)
    asker = await api.agent("asker")
    request = ask("x", at_once=True)
    async with a2a_client(api, asker) as client:
        task = await sent(client, request)
        with pytest.raises(InvalidParamsError):
            await client.create_task_push_notification_config(
                pb.TaskPushNotificationConfig(task_id=task.id, url="http://127.0.0.1:9/hook")
            )


async def test_bad_requests_get_the_bindings_errors_and_store_nothing(api: Api) -> None:
    await reachable(api)
    asker = await api.agent("asker")
    url = f"{base(api)}/a2a/agents/worker"
    headers = {"Authorization": f"Bearer {asker}", "A2A-Version": "1.0"}

    async def call(method: str, params: Any) -> dict[str, Any]:
        sent = {"jsonrpc": "2.0", "id": "x", "method": method, "params": params}
        async with httpx.AsyncClient() as http:
            answer = await http.post(url, json=sent, headers=headers)
        assert answer.status_code == 200
        return dict(answer.json()["error"])

    text = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    assert (await call("SendMessage", [1]))["code"] == -32602
    assert (await call("SendMessage", {"message": {"messageId": "m"}}))["code"] == -32602
    assert (await call("SendMessage", {"message": {**text, "bogus": 1}}))["code"] == -32602
    huge = {**text, "parts": [{"text": "x" * 70_000}]}
    assert (await call("SendMessage", {"message": huge}))["code"] == -32602
    elsewhere = {**text, "taskId": "not-a-task"}
    assert (await call("SendMessage", {"message": elsewhere}))["code"] == -32001
    assert (await call("GetTask", {"id": "99999999999999999999999"}))["code"] == -32001
    assert (await call("ListTasks", {"pageSize": 500}))["code"] == -32602
    assert (await call("ListTasks", {"pageToken": "forged"}))["code"] == -32602
    push = {"taskId": "1", "url": "ftp://example.com/x"}
    assert (await call("CreateTaskPushNotificationConfig", push))["code"] == -32602
    assert not (await api.get("/v1/tasks"))["tasks"]  # none of them made a task


async def test_a_blocking_send_waits_at_most_the_long_poll_cap_then_answers_the_task(
    make_api: AppFactory,
) -> None:
    """A blocking SendMessage is held open at most RELAY_MAX_WAIT_SECONDS (here 1 s): then it
    answers the task as it stands, for the client to follow up on."""
    api = await make_api(max_wait_seconds=1)
    await reachable(api)
    asker = await api.agent("asker")
    async with a2a_client(api, asker) as client:  # its HTTP client gives up after 30 s
        waited = await sent(client, ask("Summarize the release notes"))
    assert waited.status.state == pb.TASK_STATE_SUBMITTED, waited.status  # nobody took it yet
