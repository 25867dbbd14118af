"""Both MCP doors through the TypeScript SDK's client, the one Claude Code, Cursor and Gemini CLI
are built on (``mcp_ts/handshake.mjs``): its handshake, tool list, output-schema checks, a tool
error, and the inbox subscription where the door offers one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from relay_client import RelayClient
from tests.e2e.test_mcp_stdio import AGENT_TOOLS
from tests.live import LiveServer, live_server, relay_command
from tests.npm import npm_packages

SCRIPT = Path(__file__).parent / "mcp_ts" / "handshake.mjs"
TS_SDK = {"@modelcontextprotocol/sdk": "1.32.2"}


@pytest.fixture(scope="module")
def node_modules() -> Path:
    return npm_packages(TS_SDK, why="the TypeScript MCP client cannot be installed")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("relay-mcp-ts")) as running:
        yield running


def handshake(
    server: LiveServer, node_modules: Path, tmp_path: Path, door: str, agent_id: str
) -> dict[str, Any]:
    """Run the script as a host would, for an agent registered now; what it saw."""
    with RelayClient(server.url, token=server.operator_token) as op:
        token = op.agents.register(agent_id).token
    assert token is not None
    # Node resolves an ES module's imports from the module's own directory.
    shutil.copy(SCRIPT, tmp_path / "handshake.mjs")
    (tmp_path / "node_modules").symlink_to(node_modules)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")} | {
        "MCP_DOOR": door,
        "MCP_COMMAND": json.dumps([*relay_command(), "mcp"]),
        "RELAY_URL": server.url,
        "RELAY_TOKEN": token,
        "RELAY_AGENT_ID": agent_id,
        "RELAY_OPERATOR_TOKEN": server.operator_token,
    }
    done = subprocess.run(
        ["node", "handshake.mjs"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=90
    )
    assert done.returncode == 0, done.stdout + done.stderr
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return seen


def test_the_typescript_client_over_stdio(
    server: LiveServer, node_modules: Path, tmp_path: Path
) -> None:
    seen = handshake(server, node_modules, tmp_path, "stdio", "tess")
    assert set(seen["tools"]) == AGENT_TOOLS
    assert seen["agent"] == "tess" and not seen["whoami_error"]
    assert seen["refused"] == "not_found"
    assert seen["subscribe"] and seen["update"] == "relay://inbox"
    assert seen["inbox"] == ["hello from typescript"]


def test_the_typescript_client_over_http(
    server: LiveServer, node_modules: Path, tmp_path: Path
) -> None:
    seen = handshake(server, node_modules, tmp_path, "http", "uma")
    assert set(seen["tools"]) == AGENT_TOOLS
    assert seen["agent"] == "uma" and not seen["whoami_error"]
    assert seen["refused"] == "not_found"
    assert not seen["subscribe"] and seen["inbox"] == []
