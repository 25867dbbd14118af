"""What agents and the operator can do over MCP beyond the basics, through the official client
over stdio: the operator's shared tools, paging by cursor, ``relay://inbox`` listed and read
without delivering, decisions made before the first call reported, the agent-loop prompt."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import TextContent, TextResourceContents

from relay_client import RelayClient
from relay_mcp.agent_tools import PAGE
from relay_mcp.server import AGENT_LOOP
from tests.e2e.test_mcp_stdio import agent, agent_process, data, operator_mcp
from tests.live import LiveServer, live_server

DOCS = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("relay-mcp-reach")) as running:
        yield running


def delivery_counts(server: LiveServer, agent_id: str) -> list[int]:
    """The delivery counts of an agent's unacknowledged messages, read without delivering."""
    with RelayClient(server.url, token=server.operator_token, agent_id=agent_id) as op:
        return [m.delivery_count for m in op.agents.inbox(agent_id, peek=True).messages]


async def test_the_operator_writes_to_agents_and_hands_out_work(server: LiveServer) -> None:
    async with Client(operator_mcp(server)) as op, Client(agent(server, "kim")) as kim:
        sent = data(await op.call_tool("send_message", {"to": "kim", "text": "standup at 10"}))
        assert sent["message_id"] > 0
        titles = [f"triage #{n}" for n in range(PAGE + 2)]
        for title in titles:
            await op.call_tool("create_task", {"title": title, "assignee": "kim"})
        first = data(await op.call_tool("list_tasks", {}))
        assert [t["title"] for t in first["tasks"]] == titles[:PAGE]
        rest = data(await op.call_tool("list_tasks", {"cursor": first["next_cursor"]}))
        assert [t["title"] for t in rest["tasks"]] == titles[PAGE:]
        assert "next_cursor" not in rest  # the last page
        inbox = data(await kim.call_tool("read_inbox", {}))
        assert [(m["from_agent"], m["text"]) for m in inbox["messages"]] == [
            ("operator", "standup at 10")
        ]


async def test_the_inbox_resource_is_listed_and_read_without_delivering(
    server: LiveServer,
) -> None:
    async with Client(agent(server, "lee")) as lee, Client(agent(server, "max")) as max_:
        await max_.call_tool("send_message", {"to": "lee", "text": "ping"})
        listed = (await lee.list_resources()).resources
        assert [str(r.uri) for r in listed] == ["relay://inbox"]
        assert listed[0].description and "delivers nothing" in listed[0].description
        for _ in range(2):
            [read] = (await lee.read_resource("relay://inbox")).contents
            assert isinstance(read, TextResourceContents)
            assert [m["text"] for m in json.loads(read.text)["messages"]] == ["ping"]
        assert delivery_counts(server, "lee") == [0]


async def test_asking_the_operator_delivers_no_other_message(server: LiveServer) -> None:
    async with Client(agent(server, "ned")) as ned, Client(agent(server, "ora")) as ora:
        await ora.call_tool("send_message", {"to": "ned", "text": "unrelated"})
        asked = data(await ned.call_tool("ask_operator", {"text": "ok?", "wait_seconds": 0}))
        await ned.call_tool("check_operator_reply", {"notification_id": asked["notification_id"]})
    assert delivery_counts(server, "ned") == [0]


async def test_a_decision_before_the_first_call_is_reported(server: LiveServer) -> None:
    """The process starts, the operator decides, then the model makes its first call."""
    command, args, env = agent_process(server, "pia")
    with RelayClient(server.url, token=env["RELAY_TOKEN"]) as pia:
        asked = pia.approvals.request("restart the cache")
    pia_mcp = StdioServerParameters(command=command, args=args, env=env)
    async with Client(pia_mcp) as client:
        with RelayClient(server.url, token=server.operator_token) as op:
            op.approvals.approve(asked.approval_id)
        whoami = data(await client.call_tool("whoami", {}))
    assert whoami["waiting"] == "0 unread messages, 1 approval decided"


async def test_the_agent_loop_is_served_as_a_prompt_and_is_what_the_docs_say(
    server: LiveServer,
) -> None:
    async with Client(agent(server, "quinn")) as client:
        [prompt] = (await client.list_prompts()).prompts
        assert prompt.name == "relay-agent-loop" and prompt.title
        [message] = (await client.get_prompt("relay-agent-loop")).messages
    assert isinstance(message.content, TextContent) and message.content.text == AGENT_LOOP
    quoted = [line[2:] for line in DOCS.read_text().splitlines() if line.startswith("> ")]
    assert " ".join(quoted) == AGENT_LOOP


async def test_an_agent_asks_for_approval_with_a_deadline(server: LiveServer) -> None:
    """ask_approval: pending until the operator decides, waited for by id; a policy decides at
    once; unanswered by its deadline, it expires and says not to go ahead."""
    with RelayClient(server.url, token=server.operator_token) as op:
        rule = op.policies.create(
            "reads are fine", "approve", match={"agents": ["ray"], "title": "^Read: "}
        )
    async with Client(agent(server, "ray")) as ray:
        asked = data(
            await ray.call_tool(
                "ask_approval",
                {"title": "Drop table users", "detail": "a bad migration", "expires_in": 600},
            )
        )
        assert asked["status"] == "pending" and asked["expires_at"]
        assert asked["next"].startswith(f"check_approval(approval_id={asked['approval_id']}")
        with RelayClient(server.url, token=server.operator_token) as op:
            op.approvals.reject(asked["approval_id"], note="use a backup first")
        checked = data(
            await ray.call_tool(
                "check_approval", {"approval_id": asked["approval_id"], "wait_seconds": 5}
            )
        )
        assert (checked["status"], checked["note"]) == ("rejected", "use a backup first")
        assert checked["next"].startswith("do not")
        read = data(await ray.call_tool("ask_approval", {"title": "Read: notes.md"}))
        assert read["status"] == "approved" and read["next"] == "go ahead, as asked"
        with RelayClient(server.url, token=server.operator_token) as op:
            decided = op.approvals.show(read["approval_id"]).decided_by
        assert decided == f"policy:{rule.policy_id}@1"
        short = data(await ray.call_tool("ask_approval", {"title": "Wait", "expires_in": 1}))
        expired = data(
            await ray.call_tool(
                "check_approval", {"approval_id": short["approval_id"], "wait_seconds": 10}
            )
        )
        assert expired["status"] == "expired" and "expired unanswered" in expired["next"]
        both = await ray.call_tool("check_approval", {"approval_id": 1, "intervention_id": "x"})
        assert both.is_error and "not both" in both.content[0].text  # type: ignore[union-attr]
