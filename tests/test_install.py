"""The agent's install stays light: what ``pip install relay-agents`` brings is the list below
and nothing more (a new dependency there is a decision, made here), and every client-side
part (the SDK, every ``relay`` command but the server's, the hooks, ``relay mcp``) loads with
none of the server extra's packages importable. ``.ci/wheel`` installs both from the built
wheel and runs one against the other."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

# What runs beside an agent: the wire models, the HTTP client, the CLI and its tables, the host
# settings' TOML, the MCP SDK, the URL parser of the hooks' titles, the shell grammar of the
# edit hook. docs/deploy.md says what each install holds.
AGENT_DEPENDENCIES = {
    "pydantic",
    "platformdirs",
    "httpx",
    "typer",
    "rich",
    "tomlkit",
    "mcp",
    "ada-url",
    "tree-sitter",
    "tree-sitter-bash",
}
# The import names of the server extra's packages (and the extras built on it).
SERVER_MODULES = (
    "pydantic_settings sqlalchemy alembic aiohttp orjson prometheus_client aiohttp_cors"
    " slack_sdk uvloop pysqlite3 tzdata re2 aiohttp_asgi aiosmtplib itsdangerous pathspec"
    " openapi_ui_bundles google.protobuf google.api asyncpg opentelemetry.sdk"
).split()


def named(requirement: str) -> str:
    return re.split(r"[\s\[<>=!;~]", requirement, maxsplit=1)[0].lower()


def test_the_agents_install_brings_only_what_is_listed() -> None:
    assert {named(r) for r in PROJECT["dependencies"]} == AGENT_DEPENDENCIES


def test_the_server_extra_names_no_package_the_agent_has_already() -> None:
    server = {named(r) for r in PROJECT["optional-dependencies"]["server"]}
    assert server and not server & AGENT_DEPENDENCIES


# Loaded with every server package made unimportable, as in the agent's install: the SDK, the
# whole CLI (what `relay --help` lists), the hooks' path and relay mcp's server and channel.
WITHOUT_THE_SERVER = f"""
import importlib.abc, sys

class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if any(name == m or name.startswith(m + ".") for m in {SERVER_MODULES!r}):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Absent())
from relay_client import Agent, AsyncRelayClient, RelayClient, enroll_and_wait
import relay_cli.hook_answers, relay_cli.handover, relay_cli.edits, relay_core.shell_commands
import relay_mcp.server, relay_mcp.channel
from relay_cli.root import build
build()
from typer.testing import CliRunner
said = CliRunner().invoke(build("serve"), ["serve", "--port", "1"])
print(said.exit_code, said.output)
"""


def test_every_client_side_part_loads_without_the_server() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_THE_SERVER], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    # The server's command says, in one line, what adds it.
    code, _, said = done.stdout.partition(" ")
    assert code == "2"
    assert "relay serve runs the server, which this install of Relay leaves out" in said
    assert "pip install -e" in said and "[server]" in said
