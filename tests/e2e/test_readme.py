"""The README's examples, run as written, so they never rot."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from relay_client import RelayClient
from tests.live import live_server

README = (Path(__file__).parents[2] / "README.md").read_text()


def block(section: str, language: str) -> str:
    """The first fenced ``language`` block after the heading ``section``."""
    after = README.split(f"## {section}\n", 1)[1]
    return after.split(f"```{language}\n", 1)[1].split("```", 1)[0]


def shell_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env | extra


def test_the_agent_and_the_operator_commands(tmp_path: Path) -> None:
    agent_code, operator_commands = (
        block("Write an agent", "python"),
        block("Write an agent", "bash"),
    )
    with live_server(tmp_path) as server:
        agent = subprocess.Popen(
            [sys.executable, "-c", agent_code],
            env=shell_env(RELAY_URL=server.url, RELAY_DATA_DIR=str(tmp_path / "agent-has-none")),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        with RelayClient(server.url, token=server.operator_token) as op:
            deadline = time.monotonic() + 30
            while not op.approvals.list(status="pending").approvals:
                assert time.monotonic() < deadline and agent.poll() is None, agent.stdout
                time.sleep(0.1)
            subprocess.run(
                ["bash", "-e", "-c", operator_commands],
                env=shell_env(RELAY_URL=server.url, RELAY_DATA_DIR=str(server.data_dir)),
                check=True,
                capture_output=True,
            )
            output, _ = agent.communicate(timeout=120)
            assert agent.returncode == 0, output
            assert "operator: welcome aboard" in output
            [task] = op.tasks.list().tasks
            assert task.status == "completed" and task.claimed_by == "summarizer"
            assert task.result == {"summary": "Relay coordinates agents and their opera"}


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_curl_walkthrough(tmp_path: Path) -> None:
    data_dir = tmp_path / ".local" / "share" / "relay"
    with live_server(tmp_path, HOME=str(tmp_path), RELAY_DATA_DIR=str(data_dir)) as server:
        script = block("A walkthrough with curl", "bash").replace(
            "http://127.0.0.1:8765", server.url
        )
        done = subprocess.run(
            ["bash", "-e", "-c", script],
            env=shell_env(HOME=str(tmp_path)),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert '"status":"acked"' in done.stdout
        assert '"status":"completed"' in done.stdout
        assert '"token":"rly_agent_' in done.stdout  # carol's first poll after approval
