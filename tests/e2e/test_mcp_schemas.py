"""What a model meets in ``tools/list`` and in a failed call, as the official SDK's client sees
``relay mcp`` over stdio: every argument described and held to the API's limits, every tool
titled and its hints set, every failure a ``code: detail`` tool error."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from mcp import Client
from mcp.types import CallToolResult, ListToolsResult, TextContent, Tool

from relay_api import models as m
from relay_client import RelayClient
from relay_mcp.arguments import limits_of
from tests.e2e.test_mcp_stdio import agent, operator_mcp
from tests.live import LiveServer, live_server

# What tools/list may weigh on the wire, titles, hints and output schemas included (the MCP
# issue's budget; docs/mcp.md says what each part costs).
AGENT_BUDGET, OPERATOR_BUDGET = 16_000, 8_000
# Tools that end something for good: a host may ask its user before running them.
DESTRUCTIVE = {"fail_task", "approve", "reject"}
# Writes a repeat changes nothing more by.
IDEMPOTENT = {
    "ack_messages",
    "join_room",
    "complete_task",
    "fail_task",
    "approve",
    "reject",
    "release_paths",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("relay-mcp-schemas")) as running:
        yield running


def unlimited(schema: dict[str, Any]) -> str | None:
    """What is missing from an argument's schema (None: nothing): a description, and for a
    string, number or list the bounds the API holds it to."""
    kinds = [k for k in schema.get("anyOf", [schema]) if k.get("type") != "null"]
    for kind in kinds:
        if kind.get("type") == "string" and not ({"maxLength", "pattern", "enum"} & kind.keys()):
            return "a string without maxLength, pattern or enum"
        if kind.get("type") in ("integer", "number") and not {"minimum", "maximum"} <= kind.keys():
            return "a number without minimum and maximum"
        if kind.get("type") == "array":
            if "maxItems" not in kind:
                return "a list without maxItems"
            if missing := unlimited({"description": "item", **kind["items"]}):
                return f"items: {missing}"
    return None if schema.get("description") else "no description"


def check_listing(tools: list[Tool]) -> None:
    """Every tool titled, its hints all set truthfully, every argument described and bounded."""
    for tool in tools:
        hints = tool.annotations
        assert tool.title and hints is not None, tool.name
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert hints.open_world_hint is False, tool.name  # its default, true, is wrong
        if not hints.read_only_hint:  # what the other two hints speak of (default: false, true)
            destructive = hints.destructive_hint is not False
            assert destructive is (tool.name in DESTRUCTIVE), tool.name
            assert (hints.idempotent_hint is True) is (tool.name in IDEMPOTENT), tool.name
        for name, schema in tool.input_schema["properties"].items():
            assert "title" not in schema, (tool.name, name)  # pydantic's, made of the name
            assert unlimited(schema) is None, (tool.name, name, unlimited(schema))


def size(tools: list[Tool]) -> int:
    """The bytes of ``tools/list``'s answer as it goes over the wire."""
    return len(ListToolsResult(tools=tools).model_dump_json(by_alias=True, exclude_none=True))


def error(result: CallToolResult) -> tuple[str, str]:
    """A tool error's code and detail, the same in its text and its structured content."""
    assert result.is_error and result.structured_content is not None, result
    code, detail = result.structured_content["code"], result.structured_content["detail"]
    assert result.content[0].text == f"{code}: {detail}"  # type: ignore[union-attr]
    return code, detail


async def test_every_agent_tool_is_titled_hinted_described_and_bounded(
    server: LiveServer,
) -> None:
    async with Client(agent(server, "schema-reader")) as client:
        tools = (await client.list_tools()).tools
    check_listing(tools)
    assert size(tools) < AGENT_BUDGET, size(tools)
    send = next(t for t in tools if t.name == "send_message").input_schema["properties"]
    # The limits are the API's own, read from the contract.
    assert {"pattern": limits_of(m.MessageCreate, "to")["pattern"]}.items() <= send["to"].items()
    assert send["text"]["maxLength"] == limits_of(m.MessageCreate, "text")["maxLength"]
    create = next(t for t in tools if t.name == "create_task").input_schema["properties"]
    assert create["priority"]["maximum"] == 1_000_000  # optional: its type alone, no null
    assert "anyOf" not in create["priority"] and "default" not in create["priority"]


async def test_every_operator_tool_is_titled_hinted_described_and_bounded(
    server: LiveServer,
) -> None:
    async with Client(operator_mcp(server)) as client:
        tools = (await client.list_tools()).tools
    check_listing(tools)
    assert size(tools) < OPERATOR_BUDGET, size(tools)


async def test_failures_are_code_and_detail(server: LiveServer) -> None:
    async with Client(agent(server, "schema-breaker")) as client:
        code, detail = error(await client.call_tool("join_room", {"room_id": "x" * 1_000_000}))
        assert code == "validation_error" and detail.startswith("room_id: String should match")
        code, detail = error(await client.call_tool("report_progress", {"progress": 7}))
        assert code == "validation_error" and "task_id: Field required" in detail
        code, detail = error(await client.call_tool("check_operator_reply", {"notification_id": 9}))
        assert (code, detail) == ("not_found", "notification 9 does not exist")
        code, detail = error(await client.call_tool("wait_for_events", {"after": 10**12}))
        assert code == "validation_error" and detail.startswith(f"after: {10**12} is past")
        code, _ = error(await client.call_tool("complete_task", {"task_id": 424242}))
        assert code == "not_found"


async def test_a_reply_is_checked_for_an_ask_that_exists(server: LiveServer) -> None:
    async with Client(agent(server, "asker")) as client:
        asked = await client.call_tool("ask_operator", {"text": "may I?", "wait_seconds": 0})
        assert asked.structured_content is not None, asked
        waiting = asked.structured_content["notification_id"]
        checked = await client.call_tool("check_operator_reply", {"notification_id": waiting})
    assert not checked.is_error and checked.structured_content is not None
    assert checked.structured_content["pending"] is True


async def test_every_answer_is_its_schema_and_its_text_is_its_json(server: LiveServer) -> None:
    """Each agent tool, called as an agent would: its structured content validates against the
    outputSchema it lists, and its text is that same JSON (hosts show the model one or the
    other); a failure's ``{code, detail}`` validates too."""
    async with Client(agent(server, "every-a")) as a, Client(agent(server, "every-b")) as b:
        schemas = {tool.name: tool.output_schema for tool in (await a.list_tools()).tools}
        called: set[str] = set()

        async def call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            result = await client.call_tool(name, arguments)
            content = result.structured_content
            assert content is not None and schemas[name] is not None, name
            jsonschema.validate(content, schemas[name])
            text = result.content[0]
            assert isinstance(text, TextContent), name
            if not result.is_error:
                assert json.loads(text.text) == content, name
                called.add(name)
            return content

        await call(a, "whoami", {})
        sent = await call(a, "send_message", {"to": "every-b", "text": "hi", "subject": "s"})
        inbox = await call(b, "read_inbox", {})
        assert (
            inbox["next"] == f"ack_messages([{sent['message_id']}]) once handled, or they come back"
        )
        await call(b, "ack_messages", {"message_ids": [sent["message_id"]]})
        await call(a, "join_room", {"room_id": "every"})
        posted = await call(a, "post_to_room", {"room_id": "every", "text": "hello room"})
        await call(a, "read_room", {"room_id": "every"})
        # A reply is to what the replier may read: b joins the room it answers.
        await call(b, "join_room", {"room_id": "every"})
        answer = {"to": "every-a", "text": "seen", "reply_to": posted["message_id"]}
        replied = await call(b, "send_message", answer)
        thread = await call(a, "read_thread", {"message_id": replied["message_id"]})
        found = await call(a, "search", {"q": "hello room", "kinds": "room_post"})
        assert [hit["id"] for hit in found["hits"]] == [posted["message_id"]]
        assert [m["message_id"] for m in thread["messages"]] == [
            posted["message_id"],
            replied["message_id"],
        ]
        await call(a, "list_rooms", {})
        created = await call(a, "create_task", {"title": "every task", "assignee": "every-b"})
        await call(a, "list_tasks", {})
        await call(b, "claim_task", {"task_id": created["task_id"]})
        await call(b, "report_progress", {"task_id": created["task_id"], "progress": 50})
        await call(b, "complete_task", {"task_id": created["task_id"], "result": {"ok": True}})
        other = await call(a, "create_task", {"title": "every other", "assignee": "every-b"})
        await call(b, "claim_task", {})
        await call(b, "fail_task", {"task_id": other["task_id"], "error": "no"})
        await call(a, "record_action", {"action": "checked"})
        asked = await call(a, "ask_operator", {"text": "ok?", "wait_seconds": 0})
        await call(a, "check_operator_reply", {"notification_id": asked["notification_id"]})
        await call(a, "upload_diagnostic", {"intervention_id": "every", "summary": "s"})
        approval = {"title": "t", "reason": "r", "proposed_action": "p"}
        asked_approval = await call(a, "request_approval", {"intervention_id": "every", **approval})
        with RelayClient(server.url, token=server.operator_token) as op:
            op.approvals.approve(asked_approval["approval_id"])
        await call(a, "check_approval", {"intervention_id": "every"})
        deadline = await call(a, "ask_approval", {"title": "t", "expires_in": 60})
        await call(a, "check_approval", {"approval_id": deadline["approval_id"]})
        remediation = {"action": "did", "status": "succeeded"}
        await call(a, "record_remediation", {"intervention_id": "every", **remediation})
        await call(a, "wait_for_events", {"wait_seconds": 0})
        failed = await call(a, "complete_task", {"task_id": 987654})
        assert failed["code"] == "not_found"
    assert called == set(schemas)
