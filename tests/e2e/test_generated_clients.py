"""The served /openapi.json through the tools people point at it, with their default settings:
Redocly's recommended lint finds no error, and the clients openapi-python-client and
openapi-typescript (with openapi-fetch) generate compile strictly and run the README's curl
walkthrough against a live server.

The npm tools are installed once, pinned, under the temp dir (``tests.npm``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.live import LiveServer, live_server
from tests.npm import npm_packages

HERE = Path(__file__).parent / "generated"
NPM_TOOLS = {
    "@redocly/cli": "2.77.0",
    "openapi-typescript": "7.13.0",
    "openapi-fetch": "0.17.0",
    "typescript": "5.9.3",
    "@types/node": "20.19.43",
    "standardwebhooks": "1.1.1",
}
WALKED = {
    "inbox": ["build 7 is green"],
    "acked": "acked",
    "claimed_by": "bob",
    "completed": "completed",
    "approval": "approved",
    "enrollment": "approved",
    "carol_has_token": True,
}


@pytest.fixture(scope="module")
def npm_tools() -> Path:
    return npm_packages(NPM_TOOLS, why="the generated TypeScript client cannot be built")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("relay-generated")) as running:
        yield running


@pytest.fixture
def document(server: LiveServer, tmp_path: Path) -> Path:
    """The document as the server serves it."""
    path = tmp_path / "openapi.json"
    path.write_bytes(httpx.get(f"{server.url}/openapi.json").content)
    return path


def walk(command: list[str], cwd: Path, tmp_path: Path, **settings: str) -> dict[str, object]:
    """Run a walkthrough against a server of its own (the names it registers are fixed), set
    with ``settings`` (``RELAY_…`` variables)."""
    (tmp_path / "walk").mkdir()
    with live_server(tmp_path / "walk", **settings) as walked:
        environment = os.environ | {"RELAY_URL": walked.url}
        environment["RELAY_TOKEN"] = walked.operator_token
        done = subprocess.run(
            command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=120
        )
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_redocly_recommended_lint_finds_no_error(npm_tools: Path, document: Path) -> None:
    lint = subprocess.run(
        [str(npm_tools / ".bin" / "redocly"), "lint", str(document), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(lint.stdout)
    errors = [p for p in report["problems"] if p["severity"] == "error"]
    assert lint.returncode == 0 and not errors, errors


def test_openapi_python_client_compiles_strictly_and_walks_the_readme(
    document: Path, tmp_path: Path
) -> None:
    config = tmp_path / "generator.yaml"
    # Its default name, relay-client, is our SDK's: only the names change, nothing else.
    config.write_text(
        "project_name_override: relay-generated\n"
        "package_name_override: relay_generated\n"
        "post_hooks: []\n"
    )
    out = tmp_path / "generated"
    generator = Path(sys.executable).with_name("openapi-python-client")
    subprocess.run(
        [str(generator), "generate", "--path", str(document), "--output-path", str(out)]
        + ["--config", str(config)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    shutil.copy(HERE / "walkthrough.py", out)
    mypy = Path(sys.executable).with_name("mypy")
    checked = subprocess.run(
        [str(mypy), "--strict", "--no-incremental", "walkthrough.py", "relay_generated"],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert checked.returncode == 0, checked.stdout
    assert walk([sys.executable, "walkthrough.py"], out, tmp_path) == WALKED


def typescript(npm_tools: Path, document: Path, work: Path, program: str) -> None:
    """``program`` (of ``generated/``) compiled strictly in ``work`` beside the client types
    openapi-typescript generates from ``document``."""
    work.mkdir()
    (work / "node_modules").symlink_to(npm_tools)
    (work / "package.json").write_text('{"type": "module"}')
    shutil.copy(HERE / program, work)
    bin_ = npm_tools / ".bin"
    subprocess.run(
        [str(bin_ / "openapi-typescript"), str(document), "-o", "schema.d.ts"],
        cwd=work,
        check=True,
        capture_output=True,
        timeout=300,
    )
    compiled = subprocess.run(
        [str(bin_ / "tsc"), "--strict", "--target", "es2022", "--module", "nodenext"]
        + ["--outDir", "out", program, "schema.d.ts"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert compiled.returncode == 0, compiled.stdout


def test_openapi_typescript_compiles_strictly_and_walks_the_readme(
    npm_tools: Path, document: Path, tmp_path: Path
) -> None:
    typescript(npm_tools, document, tmp_path / "ts", "walkthrough.ts")
    assert walk(["node", "out/walkthrough.js"], tmp_path / "ts", tmp_path) == WALKED


def test_a_typescript_receiver_verifies_deliveries_with_the_npm_standardwebhooks(
    npm_tools: Path, document: Path, tmp_path: Path
) -> None:
    """The endpoint made and rotated through the generated client; every request verified by
    the npm package, with the secret in force (both during the rotation's window)."""
    typescript(npm_tools, document, tmp_path / "ts", "webhooks.ts")
    seen = walk(
        ["node", "out/webhooks.js"], tmp_path / "ts", tmp_path, RELAY_WEBHOOKS_ALLOW_PRIVATE="true"
    )
    assert seen["message"] == "message.created" and seen["forged"] is None
    assert seen["test_with_old"] == seen["test_with_new"] == "webhook.test"
    assert seen["shown"] is None
    assert seen["deliveries"] == [
        ["webhook.test", seen["webhook_ids"][0]],  # type: ignore[index]
        ["message.created", seen["webhook_ids"][1]],  # type: ignore[index]
    ]
