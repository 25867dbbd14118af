"""The dependency direction holds: core knows no HTTP, the CLI loads no server or database."""

from __future__ import annotations

import subprocess
import sys

import pytest


def loaded_after(imports: str) -> set[str]:
    """Top-level modules loaded by a fresh interpreter after ``imports``."""
    code = (
        f"{imports}\nimport sys\nprint(' '.join(sorted({{n.split('.')[0] for n in sys.modules}})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


@pytest.mark.parametrize(
    "imports",
    [
        "import relay_core.models, relay_core.errors",
        "import relay_cli.main",
        "import relay_client",
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
        "relay_core.storage.memory, relay_core.bridges.local, relay_core.bridges.telegram, "
        "relay_core.storage.migrate"
    )
    assert "aiohttp" not in loaded_after(imports)
