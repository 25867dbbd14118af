"""What a model meets in ``tools/list`` and in a failed call, as the official SDK's client sees
``relay mcp`` over stdio: every argument described and held to the API's limits, every tool
titled and its hints set, every failure a ``code: detail`` tool error."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult, Tool

from relay_api import models as m
from relay_mcp.arguments import limits_of
from tests.e2e.test_mcp_stdio import agent, operator_mcp
from tests.live import LiveServer, live_server

AGENT_BUDGET = 16 * 1024
OPERATOR_BUDGET = 8 * 1024
# Tools that end something for good: a host may ask its user before running them.
DESTRUCTIVE = {"fail_task", "approve", "reject"}


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
        assert tool.title and hints is not None and hints.title == tool.title, tool.name
        assert hints.open_world_hint is False, tool.name
        assert hints.read_only_hint is not None and hints.idempotent_hint is not None, tool.name
        if not hints.read_only_hint:
            assert hints.destructive_hint is (tool.name in DESTRUCTIVE), tool.name
        for name, schema in tool.input_schema["properties"].items():
            assert "title" not in schema, (tool.name, name)  # pydantic's, made of the name
            assert unlimited(schema) is None, (tool.name, name, unlimited(schema))


def size(tools: list[Tool]) -> int:
    return len(json.dumps([t.model_dump(mode="json", exclude_none=True) for t in tools]))


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
