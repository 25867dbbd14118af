"""A real agent framework as the MCP host, with no LLM: pydantic-ai agents whose model is a
scripted function call Relay's tools through ``relay mcp`` (stdio) against a live server.

Agent A creates a task, asks the operator and gets the answer the operator gives seconds later
from the CLI; agent B claims the task A created and completes it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastmcp.client import Client
from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from typer.testing import CliRunner

from relay_cli.main import app
from relay_client import RelayClient
from tests.e2e.test_mcp_stdio import agent_process
from tests.live import LiveServer, live_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("relay-pydantic-ai")) as running:
        yield running


def relay_tools(server: LiveServer, agent_id: str) -> MCPToolset[Any]:
    """``relay mcp`` for a newly registered agent, as pydantic-ai's MCP toolset."""
    command, args, env = agent_process(server, agent_id)
    return MCPToolset(Client(StdioTransport(command, args, env=env)))


def scripted(calls: list[tuple[str, dict[str, Any]]]) -> FunctionModel:
    """A model that makes these tool calls in turn, then answers with every tool's return."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered = {tool.name for tool in info.function_tools}
        returned = [
            part.model_response_str()
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        ]
        if len(returned) < len(calls):
            name, arguments = calls[len(returned)]
            assert name in offered, (name, sorted(offered))
            return ModelResponse(parts=[ToolCallPart(name, json.dumps(arguments))])
        return ModelResponse(parts=[TextPart("\n".join(returned))])

    return FunctionModel(model)


def operator_answers_from_the_cli(server: LiveServer, agent_id: str, text: str) -> None:
    """The operator, seconds later, replies in the terminal to the agent's notification."""
    env = {"RELAY_URL": server.url, "RELAY_DATA_DIR": str(server.data_dir)}
    with RelayClient(server.url, token=server.operator_token) as op:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            asked = [n for n in op.notify.list().notifications if n.agent_id == agent_id]
            if asked and asked[0].platform_message_id:
                platform_id = asked[0].platform_message_id
                break
            time.sleep(0.2)
        else:
            raise AssertionError("the agent never asked")
    time.sleep(1)  # the operator takes a moment
    result = CliRunner().invoke(app, ["notifications", "reply", platform_id, text], env=env)
    assert result.exit_code == 0, result.output


async def test_pydantic_ai_agents_ask_the_operator_and_work_a_task(server: LiveServer) -> None:
    bob = relay_tools(server, "bob")  # registered, so a task may be assigned to it
    asker = Agent(
        scripted(
            [
                ("create_task", {"title": "rotate the logs", "assignee": "bob"}),
                ("ask_operator", {"text": "may bob rotate the logs?", "wait_seconds": 30}),
            ]
        ),
        toolsets=[relay_tools(server, "ada")],
    )
    operator = threading.Thread(
        target=operator_answers_from_the_cli, args=(server, "ada", "yes, rotate them")
    )
    operator.start()
    asked = await asker.run("Ask the operator before rotating the logs.")
    operator.join()
    # pydantic-ai hands the model a tool's structured content: the answer, with what to do next
    task, answer = [json.loads(line) for line in asked.output.splitlines()]
    assert task["status"] == "open" and task["task_id"] > 0
    assert task["next"].startswith("wait_for_events")
    assert answer["reply"] == "yes, rotate them" and answer["pending"] is False

    worker = Agent(
        scripted(
            [
                ("claim_task", {}),
                ("complete_task", {"task_id": task["task_id"], "result": {"rotated": 3}}),
            ]
        ),
        toolsets=[bob],
    )
    worked = await worker.run("Take the next task and finish it.")
    claimed, completed = [json.loads(line) for line in worked.output.splitlines()]
    assert claimed["task_id"] == task["task_id"] and completed["status"] == "completed"
    assert claimed["next"].startswith("report_progress")
    with RelayClient(server.url, token=server.operator_token) as op:
        done = op.tasks.get(task["task_id"])
    assert done.status == "completed" and done.claimed_by == "bob"
    assert done.result == {"rotated": 3}


async def test_a_pydantic_ai_agent_finds_a_conversation_and_reads_it(server: LiveServer) -> None:
    """Search, then the thread of what it found, as a model would chain them; another agent
    finds nothing of a conversation it has no part in."""
    tools = relay_tools(server, "cleo")  # registered here, before anything is sent to it
    with RelayClient(server.url, token=server.operator_token) as op:
        first = op.messages.send("the staging TLS certificate expires Friday", to="cleo")
        op.messages.send("renewal ordered", to="cleo", reply_to=first.message_id)
    calls = [
        ("search", {"q": "staging certificate"}),
        ("read_thread", {"message_id": first.message_id}),
    ]
    asked = await Agent(scripted(calls), toolsets=[tools]).run("What about staging's cert?")
    found, thread = [json.loads(line) for line in asked.output.splitlines()]
    assert [hit["id"] for hit in found["hits"]] == [first.message_id]
    assert "[staging]" in found["hits"][0]["snippet"]
    assert [m["text"] for m in thread["messages"]] == [
        "the staging TLS certificate expires Friday",
        "renewal ordered",
    ]
    other = Agent(scripted(calls[:1]), toolsets=[relay_tools(server, "dan")])
    nothing = json.loads((await other.run("What about staging's cert?")).output)
    assert nothing["hits"] == []
