"""The dependency direction holds: the contract (relay_api) stands alone, the client side stands
on it and on nothing of the core's machinery, the core knows no HTTP, the CLI loads no server or
database."""

from __future__ import annotations

import subprocess
import sys

import pytest


def loaded_after(imports: str, *, whole: bool = False) -> set[str]:
    """Top-level modules (``whole``: every module) loaded by a fresh interpreter after
    ``imports``."""
    name = "n" if whole else "n.split('.')[0]"
    code = f"{imports}\nimport sys\nprint(' '.join(sorted({{{name} for n in sys.modules}})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_the_contract_imports_nothing_of_relay() -> None:
    """relay_api is pure pydantic: neither the core nor anything heavier."""
    loaded = loaded_after("import relay_api.operations, relay_api.models, relay_api.errors")
    assert {"relay_core", "relay_server", "relay_client", "aiohttp", "sqlalchemy"}.isdisjoint(
        loaded
    )
    assert "cryptography" not in loaded


# The SDK as code uses it (the package itself loads its parts when they are first named).
SDK = "from relay_client import Agent, AsyncRelayClient, RelayClient, enroll_and_wait"


# What answers every hook event: the command's first step, the answers, the hand-over and the
# edit check (and the commit guard's lookups, run on every commit).
HOOK_PATH = (
    "import relay_cli.entry, relay_cli.hook_answers, relay_cli.handover, relay_cli.edits,"
    " relay_cli.reserved"
)


def test_every_hook_event_loads_no_http_client_nor_models_nor_typer() -> None:
    """A coding agent runs ``relay hook`` on every tool call, edit, prompt and stop: what
    answers it imports neither the SDK's HTTP client, nor pydantic, nor rich, nor the CLI's
    Typer (docs/performance.md says what that saves)."""
    loaded = loaded_after(HOOK_PATH, whole=True)
    assert {"httpx", "pydantic", "rich", "typer", "click", "relay_client._client"}.isdisjoint(
        loaded
    )
    assert {"aiohttp", "sqlalchemy"}.isdisjoint({name.split(".")[0] for name in loaded})


# What the client side may use of relay_core: where a local server keeps its files, and (for
# `relay serve`'s flags, read from the server's settings) the token maker and core settings.
CLIENT_SIDE_MAY_USE = {"relay_core", "relay_core.paths", "relay_core.auth", "relay_core.config"}


@pytest.mark.parametrize(
    "imports",
    [SDK, "import relay_cli.main", "import relay_mcp.agent_tools"],
)
def test_the_client_side_stands_on_the_contract(imports: str) -> None:
    """No service, storage, idempotency, hub or port is loaded by the client, the CLI or the
    MCP tools: they take operations, models and errors from relay_api."""
    core = {n for n in loaded_after(imports, whole=True) if n.split(".")[0] == "relay_core"}
    assert core <= CLIENT_SIDE_MAY_USE, core - CLIENT_SIDE_MAY_USE


def test_a_trace_handed_on_loads_no_opentelemetry() -> None:
    """``in_trace`` in a program that does not trace (a hook, ``relay serve`` with tracing off
    answering an MCP call with ``_meta``) imports nothing of OpenTelemetry, installed or not."""
    handed = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    program = f"from relay_client import in_trace\nwith in_trace({handed!r}):\n    pass"
    assert "opentelemetry" not in loaded_after(program)


def test_the_sdk_loads_no_sealing() -> None:
    """The idempotency sealing (cryptography) is the server's; the SDK never pays for it."""
    assert "cryptography" not in loaded_after(SDK)


@pytest.mark.parametrize(
    "imports",
    [
        "import relay_api.models, relay_api.errors",
        "import relay_cli.main",
        SDK,
    ],
)
def test_client_side_imports_load_neither_aiohttp_nor_sqlalchemy(imports: str) -> None:
    loaded = loaded_after(imports)
    assert "aiohttp" not in loaded
    assert "sqlalchemy" not in loaded
    assert "mcp" not in loaded  # an optional extra, loaded by `relay mcp` only


def test_the_server_loads_the_mcp_sdk_only_when_mcp_is_asked_for() -> None:
    """The SDK takes seconds to import: a server that nobody asks for /mcp never pays it."""
    assert "mcp" not in loaded_after("from relay_server import create_app; create_app()")


def test_core_never_imports_aiohttp() -> None:
    imports = (
        "import relay_core.services, relay_core.storage.sqlite, relay_core.storage.postgres, "
        "relay_core.storage.migrate"
    )
    assert "aiohttp" not in loaded_after(imports)
    # Nor do the sending sides of the platforms that speak plain HTTP (httpx); Slack's speaks
    # through slack-sdk, on aiohttp.
    senders = (
        "import relay_server.bridges.local, relay_server.bridges.telegram.sending, "
        "relay_server.bridges.matrix.sending"
    )
    assert "aiohttp" not in loaded_after(senders)


# What an integration loads: its platform's library, or its own module (which loads it).
INTEGRATIONS = {
    "slack_sdk",
    "aiosmtplib",
    "itsdangerous",
    "asyncpg",
    "opentelemetry",
    "relay_core.storage.postgres",
    "relay_server.bridges.slack",
    "relay_server.bridges.email",
    "relay_server.bridges.telegram",
    "relay_server.bridges.matrix",
    # What only a first A2A call or /docs request needs: A2A's protobuf types, and the
    # package holding Swagger UI's files.
    "relay_server.a2a.a2a_pb2",
    "google.protobuf",
    "openapi_ui_bundles",
}


def test_a_server_with_nothing_configured_loads_no_integration(tmp_path: object) -> None:
    """``relay serve`` on its defaults (SQLite, no platform, no traces) imports no integration's
    module or library: each loads when configured, or at its callback's first request."""
    made = (
        "import os; os.environ['RELAY_DATA_DIR'] = " + repr(str(tmp_path)) + "\n"
        "from relay_server.app import create_app\n"
        "from relay_server.settings import Settings\n"
        "create_app(Settings())\n"
        "import relay_server.serving"
    )
    loaded = loaded_after(made, whole=True)
    found = {m for m in INTEGRATIONS if any(n == m or n.startswith(m + ".") for n in loaded)}
    assert not found, found
