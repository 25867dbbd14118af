"""The README's examples, run as written, so they never rot."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
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


def start_agent(code: str, url: str, home: Path) -> subprocess.Popen[str]:
    """The README's agent as a user starts it: ``python agent.py``, with its own config dir."""
    env = shell_env(
        RELAY_URL=url,
        RELAY_DATA_DIR=str(home / "agent-has-none"),
        XDG_CONFIG_HOME=str(home / "config"),
    )
    return subprocess.Popen(
        [sys.executable, "-c", code],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def stop(agent: subprocess.Popen[str]) -> str:
    """Ctrl-C, as its user stops it: it returns from ``run`` and exits cleanly."""
    agent.send_signal(signal.SIGINT)
    output, _ = agent.communicate(timeout=30)
    assert agent.returncode == 0, output
    return output


def wait_for(condition: Callable[[], bool], agent: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline and agent.poll() is None, "agent stopped or stuck"
        time.sleep(0.1)


@pytest.mark.parametrize("operator_delay", [0, 3], ids=["operator-at-once", "operator-later"])
def test_the_agent_and_the_operator_commands(tmp_path: Path, operator_delay: float) -> None:
    """The operator types the commands at once, or one every few seconds, as a person does:
    the agent waits for each, however long, and runs until stopped."""
    agent_code, operator_commands = (
        block("Write an agent", "python"),
        block("Write an agent", "bash"),
    )
    with live_server(tmp_path) as server:
        agent = start_agent(agent_code, server.url, tmp_path)
        operator_env = shell_env(RELAY_URL=server.url, RELAY_DATA_DIR=str(server.data_dir))
        with RelayClient(server.url, token=server.operator_token) as op:
            wait_for(lambda: bool(op.approvals.list(status="pending").approvals), agent)
            for command in operator_commands.strip().splitlines():
                time.sleep(operator_delay)
                subprocess.run(
                    ["bash", "-e", "-c", command], env=operator_env, check=True, capture_output=True
                )
            wait_for(lambda: op.tasks.list().tasks[0].status == "completed", agent)
            [task] = op.tasks.list().tasks
            assert task.claimed_by == "summarizer"
            assert task.result == {"summary": "Relay coordinates agents and their opera"}
            output = stop(agent)
            assert "operator: welcome aboard" in output
            for said in ("waiting for the operator to approve", "approved", "claimed task 1"):
                assert said in output, output

            # A second run resumes as the same agent: no enrollment, no conflict.
            again = start_agent(agent_code, server.url, tmp_path)
            op.messages.send("welcome back", to="summarizer")
            wait_for(lambda: op.agents.list().agents[0].pending_messages == 0, again)
            output = stop(again)
            assert "resuming with the token kept in" in output
            assert "operator: welcome back" in output
            assert len(op.approvals.list().approvals) == 1


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
