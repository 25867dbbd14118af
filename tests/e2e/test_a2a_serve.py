"""A2A against ``relay serve`` as a user runs it: the official SDK's client finds Relay's card,
then an agent's, sends it work, and the agent answers through the CLI."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import httpx
import pytest
from a2a.client import ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb

from tests.live import LiveServer, agent_token, live_server, relay_command


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("relay-a2a")) as running:
        yield running


def relay(server: LiveServer, token: str, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}  # the test's home
    env |= {"RELAY_URL": server.url, "RELAY_TOKEN": token}
    done = subprocess.run(
        [*relay_command(), *args], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


async def test_an_agent_reached_over_a2a_answers_through_the_cli(server: LiveServer) -> None:
    worker = agent_token(server, "summarizer")
    asker = agent_token(server, "asker")
    relay(server, worker, "agents", "a2a", "--skill", "summarize:Summarize:Summarize a text.")

    async with httpx.AsyncClient(timeout=30) as http:
        directory = (await http.get(f"{server.url}/.well-known/agent-card.json")).json()
    [listed] = directory["capabilities"]["extensions"][0]["params"]["agents"]
    assert listed["agent_id"] == "summarizer"

    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {asker}"}, timeout=30)
    factory = ClientFactory(ClientConfig(httpx_client=http, streaming=False))
    client = await factory.create_from_url(
        listed["card"].removesuffix("/.well-known/agent-card.json")
    )
    try:
        message = pb.Message(message_id="m-1", role=pb.ROLE_USER, parts=[pb.Part(text="Hello")])
        request = pb.SendMessageRequest(message=message)
        request.configuration.return_immediately = True
        [response] = [r async for r in client.send_message(request)]
        task_id = response.task.id
        assert response.task.status.state == pb.TASK_STATE_SUBMITTED

        relay(server, worker, "tasks", "claim", task_id)
        relay(server, worker, "tasks", "complete", task_id, "--result", '{"summary": "hi"}')
        done = await client.get_task(pb.GetTaskRequest(id=task_id))
    finally:
        await client.close()
        await http.aclose()
    assert done.status.state == pb.TASK_STATE_COMPLETED
    assert done.artifacts[0].parts[0].data.struct_value["summary"] == "hi"
