"""``relay mcp --reservations`` in a real repository made by the test: the official client
reserves, meets another agent's reservation, asks who holds a file and releases, and what the
model reserved is what the commit guard of the same repository enforces."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, Tool

from relay_client import RelayClient
from tests.cli.test_guard import WORKSPACE, Repo, git_env
from tests.e2e.test_mcp_schemas import check_listing, error, size
from tests.e2e.test_mcp_stdio import AGENT_TOOLS, agent_process, data
from tests.live import LiveServer, live_server

RESERVATION_TOOLS = {"reserve_paths", "release_paths", "who_holds"}
# What the three tools add to the agent's listing (docs/mcp.md): listed only where asked for.
RESERVATIONS_BUDGET = 2_000


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("relay-mcp-reserve")) as running:
        yield running


def in_repo(server: LiveServer, agent_id: str, repo: Path) -> StdioServerParameters:
    """``relay mcp --reservations`` for a new agent, started in ``repo`` as a host starts it
    in its project's directory."""
    command, args, env = agent_process(server, agent_id)
    env |= git_env(repo.parent)
    return StdioServerParameters(command=command, args=[*args, "--reservations"], env=env, cwd=repo)


def checked(tools: list[Tool], name: str, result: CallToolResult) -> CallToolResult:
    """``result``, its structured content (a failure's too) valid against the tool's schema."""
    schema = next(tool.output_schema for tool in tools if tool.name == name)
    assert schema is not None
    jsonschema.validate(result.structured_content, schema)
    return result


async def test_reserve_meet_the_holder_and_release_in_one_repository(
    server: LiveServer, tmp_path: Path
) -> None:
    with RelayClient(server.url, token=server.operator_token) as op:
        bob_token = op.agents.register("mcp-bob").token
    assert bob_token is not None
    repo = Repo(tmp_path / "shop", server, bob_token)
    async with (
        Client(in_repo(server, "mcp-ada", repo.root)) as ada,
        Client(in_repo(server, "mcp-eve", repo.root)) as eve,
    ):
        tools = (await ada.list_tools()).tools
        assert {tool.name for tool in tools} == AGENT_TOOLS | RESERVATION_TOOLS
        check_listing(tools)

        async def call(client: Client, name: str, arguments: dict[str, Any]) -> CallToolResult:
            return checked(tools, name, await client.call_tool(name, arguments))

        assert "workspace" not in next(t for t in tools if t.name == "reserve_paths").input_schema
        arguments = {"paths": ["src/api/**"], "reason": "auth refactor", "ttl_seconds": 600}
        reserved = data(await call(ada, "reserve_paths", arguments))
        held = reserved["reservation_id"]
        assert reserved["next"] == f"release_paths({held}) when done"

        # Another agent's overlapping request: nothing granted, the holder named.
        code, detail = error(await call(eve, "reserve_paths", {"paths": ["src/api/app.py"]}))
        assert code == "conflict"
        assert detail.startswith("nothing reserved: mcp-ada holds src/api/** for auth refactor")
        assert f"(#{held}); message them or pick other work" in detail
        # A model's absolute path inside the repository is the same file; a '..' is refused.
        absolute = str(repo.root.resolve() / "src" / "api" / "app.py")
        code, detail = error(await call(eve, "reserve_paths", {"paths": [absolute]}))
        assert code == "conflict" and "mcp-ada holds src/api/**" in detail
        found = data(await call(eve, "who_holds", {"path": absolute}))
        assert [line["holder"] for line in found["reservations"]] == ["mcp-ada"]
        code, detail = error(await call(eve, "reserve_paths", {"paths": ["src/../src/api/x"]}))
        assert code == "validation_error" and "'..'" in detail
        shared = await call(eve, "reserve_paths", {"paths": ["docs/**"], "exclusive": False})
        assert not shared.is_error

        found = data(await call(eve, "who_holds", {"path": "src/api/app.py"}))
        [line] = found["reservations"]
        assert (line["holder"], line["paths"], line["reason"]) == (
            "mcp-ada",
            ["src/api/**"],
            "auth refactor",
        )
        everyone = data(await call(eve, "who_holds", {}))["reservations"]
        assert {r["holder"] for r in everyone} == {"mcp-ada", "mcp-eve"}

        # What the model reserved is in the repository's workspace: the guard enforces it.
        with RelayClient(server.url, token=server.operator_token) as op:
            assert op.reservations.show(held).workspace == WORKSPACE
        guarded = repo.relay("guard", "check", "src/api/app.py")
        assert guarded.returncode != 0 and "reserved by mcp-ada" in guarded.stderr

        assert data(await call(ada, "release_paths", {"reservation_id": held})) == {
            "status": "released",
            "waiting": "0 unread messages",
        }
        again = await call(ada, "release_paths", {"reservation_id": held})  # twice is fine
        assert data(again)["status"] == "released"
        assert data(await call(eve, "who_holds", {"path": "src/api/app.py"})) == {
            "reservations": [],
            "waiting": "0 unread messages",
        }
        assert repo.relay("guard", "check", "src/api/app.py").returncode == 0


async def test_the_listing_says_what_the_reservation_tools_cost(
    server: LiveServer, tmp_path: Path
) -> None:
    repo = Repo(tmp_path / "shop", server, server.operator_token)
    command, args, env = agent_process(server, "mcp-plain")
    async with (
        Client(StdioServerParameters(command=command, args=args, env=env)) as plain,
        Client(in_repo(server, "mcp-repo", repo.root)) as reserving,
    ):
        without = size((await plain.list_tools()).tools)
        added = size((await reserving.list_tools()).tools) - without
    assert 0 < added < RESERVATIONS_BUDGET, added


@pytest.mark.parametrize("who", ["operator", "agent outside a repository"])
def test_reservations_need_an_agent_in_a_repository(
    server: LiveServer, tmp_path: Path, who: str
) -> None:
    """``relay mcp --reservations`` stops at once with one line rather than list tools that
    could not work."""
    command, args, env = agent_process(server, f"mcp-nowhere-{len(who)}")
    if who == "operator":
        env |= {"RELAY_TOKEN": server.operator_token}
        env.pop("RELAY_AGENT_ID")
        Repo(tmp_path / "repo", server, server.operator_token)
        where = tmp_path / "repo"
    else:
        where = tmp_path
    env |= git_env(tmp_path)
    done = subprocess.run(
        [command, *args, "--reservations"],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    said = {
        "operator": "Error: --reservations: it needs an agent's token\n",
        "agent outside a repository": "Error: --reservations: not in a git repository with an"
        " origin remote: set git config relay.workspace\n",
    }
    assert (done.returncode, done.stdout, done.stderr) == (2, "", said[who])
