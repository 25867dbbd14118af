"""The MCP Inspector's CLI (pinned), run by the test against ``relay mcp`` and ``/mcp``: a client
nobody here wrote sees described, bounded tools, ``code: detail`` errors, the listed inbox and
the agent-loop prompt, an operator decision it cannot confirm refused, and a refused token
reported as such."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.types import Tool

from relay_client import RelayClient
from tests.e2e.test_mcp_schemas import check_listing
from tests.e2e.test_mcp_stdio import AGENT_TOOLS, OPERATOR_TOOLS, agent_process
from tests.live import LiveServer, live_server, relay_command
from tests.npm import npm_packages

INSPECTOR = {"@modelcontextprotocol/inspector": "2.12.0"}


@pytest.fixture(scope="module")
def inspector() -> Path:
    return npm_packages(INSPECTOR, why="the MCP Inspector CLI") / ".bin" / "mcp-inspector"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("relay-mcp-inspector")) as running:
        yield running


def run(inspector: Path, target: list[str], *method: str) -> tuple[int, Any]:
    """The Inspector's CLI on ``target`` (a command or a URL and its options): its exit code
    and the JSON it printed (on stdout, or its error envelope on stderr)."""
    done = subprocess.run(
        [str(inspector), "--cli", *target, "--method", *method],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    return done.returncode, json.loads(done.stdout or done.stderr)


def stdio(server: LiveServer, token: str) -> list[str]:
    """``relay mcp`` as the Inspector launches it, with the token alone."""
    command, *args = relay_command()
    return ["-e", f"RELAY_URL={server.url}", "-e", f"RELAY_TOKEN={token}", command, *args, "mcp"]


def agent_token(server: LiveServer, agent_id: str) -> str:
    return agent_process(server, agent_id)[2]["RELAY_TOKEN"]


def test_the_inspector_sees_described_bounded_tools_the_inbox_and_the_prompt(
    server: LiveServer, inspector: Path
) -> None:
    target = stdio(server, agent_token(server, "inspected"))
    code, listed = run(inspector, target, "tools/list")
    assert code == 0
    check_listing([Tool.model_validate(tool) for tool in listed["tools"]])
    code, resources = run(inspector, target, "resources/list")
    assert [r["uri"] for r in resources["resources"]] == ["relay://inbox"]
    code, prompts = run(inspector, target, "prompts/list")
    assert [p["name"] for p in prompts["prompts"]] == ["relay-agent-loop"]


def test_the_inspector_reads_failures_as_code_and_detail(
    server: LiveServer, inspector: Path
) -> None:
    target = stdio(server, agent_token(server, "misused"))
    too_long = "room_id=" + "x" * 300
    _, joined = run(
        inspector, target, "tools/call", "--tool-name", "join_room", "--tool-arg", too_long
    )
    assert joined["isError"] and joined["structuredContent"]["code"] == "validation_error"
    assert joined["content"][0]["text"].startswith("validation_error: room_id: String should")
    _, checked = run(
        inspector,
        target,
        *("tools/call", "--tool-name", "check_operator_reply"),
        *("--tool-arg", "notification_id=424242"),
    )
    assert checked["structuredContent"] == {
        "code": "not_found",
        "detail": "notification 424242 does not exist",
    }


def test_the_inspector_cannot_confirm_a_decision_and_is_refused(
    server: LiveServer, inspector: Path
) -> None:
    with RelayClient(server.url, token=agent_token(server, "asking")) as asking:
        approval_id = asking.approvals.request("rotate the keys").approval_id
    target = stdio(server, server.operator_token)
    _, listed = run(inspector, target, "tools/list")
    assert {tool["name"] for tool in listed["tools"]} == OPERATOR_TOOLS
    _, refused = run(
        inspector,
        target,
        *("tools/call", "--tool-name", "approve", "--tool-arg", f"approval_id={approval_id}"),
    )
    assert refused["structuredContent"]["code"] == "confirmation_required"
    with RelayClient(server.url, token=server.operator_token) as op:
        assert op.approvals.show(approval_id).status == "pending"


def test_over_http_a_token_works_and_a_refused_one_says_so(
    server: LiveServer, inspector: Path
) -> None:
    url = f"{server.url}/mcp"
    bearer = f"Authorization: Bearer {agent_token(server, 'remote')}"
    code, listed = run(inspector, [url, "--header", bearer], "tools/list")
    assert code == 0 and {tool["name"] for tool in listed["tools"]} == AGENT_TOOLS
    wrong = [url, "--stored-auth-only", "--header", "Authorization: Bearer rly_agent_wrong"]
    code, refused = run(inspector, wrong, "tools/list")
    assert code != 0 and refused["error"]["code"] == "auth_required"
    assert "the bearer token is unknown or was rotated" in refused["error"]["message"]
