"""The README's examples, run as written, so they never rot."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from relay_api.models import Agent
from relay_client import RelayClient
from tests.live import LiveServer, live_server

README = (Path(__file__).parents[2] / "README.md").read_text()


def block(section: str, language: str) -> str:
    """The first fenced ``language`` block after the heading ``section``."""
    after = README.split(f"## {section}\n", 1)[1]
    return after.split(f"```{language}\n", 1)[1].split("```", 1)[0]


def shell_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env | extra


def start_agent(code: str, url: str, home: Path, **env: str) -> subprocess.Popen[str]:
    """The README's agent as a user starts it: ``python agent.py``, with its own config dir."""
    environment = shell_env(
        RELAY_URL=url,
        RELAY_DATA_DIR=str(home / "agent-has-none"),
        XDG_CONFIG_HOME=str(home / "config"),
        **env,
    )
    return subprocess.Popen(
        [sys.executable, "-c", code],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def stopping_signal() -> signal.Signals:
    """Ctrl-C, as its user stops it; but a shell starts a background job (``nohup … &``) with
    SIGINT ignored, which the agent inherits from the tests, and then SIGTERM, as a service
    manager stops it."""
    return signal.SIGTERM if signal.getsignal(signal.SIGINT) == signal.SIG_IGN else signal.SIGINT


def finish(agent: subprocess.Popen[str], timeout: float = 30) -> str:
    """What the agent wrote until it ended; killed (and its pipe closed) if it does not end in
    ``timeout`` seconds."""
    try:
        output, _ = agent.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        agent.kill()
        output, _ = agent.communicate()
        raise AssertionError(f"the agent did not end:\n{output}") from None
    return output


def stop(agent: subprocess.Popen[str], how: signal.Signals | None = None) -> str:
    """Stop it as its user does: it returns from ``run`` and exits cleanly."""
    agent.send_signal(how or stopping_signal())
    output = finish(agent)
    assert agent.returncode == 0, output
    assert "summarizer: stopped" in output, output
    return output


def wait_for(condition: Callable[[], bool], agent: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert time.monotonic() < deadline and agent.poll() is None, "agent stopped or stuck"
        time.sleep(0.1)


@contextmanager
def running_agent(code: str, url: str, home: Path, **env: str) -> Iterator[subprocess.Popen[str]]:
    """The agent, killed (its pipe closed) however the block ends."""
    agent = start_agent(code, url, home, **env)
    try:
        yield agent
    finally:
        if agent.poll() is None:
            agent.kill()
        print(agent.communicate()[0])  # shown when the test fails


@pytest.mark.parametrize("operator_delay", [0, 3], ids=["operator-at-once", "operator-later"])
def test_the_agent_and_the_operator_commands(tmp_path: Path, operator_delay: float) -> None:
    """The operator types the commands at once, or one every few seconds, as a person does:
    the agent waits for each, however long, and runs until stopped. It leaves alone a task it
    cannot do."""
    agent_code, operator_commands = (
        block("Write an agent", "python"),
        block("Write an agent", "bash"),
    )
    with (
        live_server(tmp_path) as server,
        RelayClient(server.url, token=server.operator_token) as op,
    ):
        others = op.tasks.create("deploy the gateway", payload={"version": "1.2"})
        with running_agent(agent_code, server.url, tmp_path) as agent:
            wait_for(lambda: bool(op.approvals.list(status="pending").approvals), agent)
            for command in operator_commands.strip().splitlines():
                time.sleep(operator_delay)
                subprocess.run(
                    ["bash", "-e", "-c", command], env=operator_env(server), check=True,
                    capture_output=True,
                )  # fmt: skip
            [summarize] = [t for t in op.tasks.iterate() if t.title == "summarize"]
            wait_for(lambda: op.tasks.get(summarize.task_id).status == "completed", agent)
            task = op.tasks.get(summarize.task_id)
            assert task.claimed_by == "summarizer"
            assert task.result == {"summary": "Relay coordinates agents and their opera"}
            output = stop(agent)
            assert "operator: welcome aboard" in output
            for said in ("waiting for the operator to approve", "approved", "claimed task 2"):
                assert said in output, output
        # Not its kind of task: still open for the agent that can do it.
        assert op.tasks.get(others.task_id).status == "open"

        # A second run resumes as the same agent: no enrollment, no conflict.
        with running_agent(agent_code, server.url, tmp_path) as again:
            op.messages.send("welcome back", to="summarizer")
            wait_for(lambda: summarizer(op).pending_messages == 0, again)
            output = stop(again, signal.SIGTERM)  # as a service manager stops it
            assert "resuming with the token kept in" in output
            assert "operator: welcome back" in output
            assert len(op.approvals.list().approvals) == 1


def test_a_rotated_token_ends_the_agent_with_one_line_and_a_new_one_resumes_it(
    tmp_path: Path,
) -> None:
    """The operator rotates the token of a running agent: it stops with one line saying what
    to do, exit status 1, no traceback; a restart with the old token kept says the same; the
    new token in RELAY_TOKEN is kept and used."""
    agent_code = block("Write an agent", "python")
    with (
        live_server(tmp_path) as server,
        RelayClient(server.url, token=server.operator_token) as op,
    ):
        with running_agent(agent_code, server.url, tmp_path) as agent:
            wait_for(lambda: bool(op.approvals.list(status="pending").approvals), agent)
            op.approvals.approve(op.approvals.list(status="pending").approvals[0].approval_id)
            wait_for(lambda: summarizer(op).presence == "online", agent)
            time.sleep(1)  # it is waiting for something to happen
            new_token = op.agents.register("summarizer", rotate_token=True).token
            ended = finish(agent)
        assert agent.returncode == 1, ended
        assert "Traceback" not in ended
        assert ended.splitlines()[-1] == (
            "summarizer: the server refused this agent's token while it ran (rotated or "
            "revoked): ask the operator for a new one (relay agents register summarizer "
            "--rotate-token) and start the agent again with it in RELAY_TOKEN"
        )

        with running_agent(agent_code, server.url, tmp_path) as restarted:
            ended = finish(restarted)
        assert restarted.returncode == 1 and "Traceback" not in ended, ended
        assert ended.splitlines()[-1].startswith("summarizer: the token kept in ")
        assert "start the agent again with it in RELAY_TOKEN" in ended

        with running_agent(agent_code, server.url, tmp_path, RELAY_TOKEN=new_token) as renewed:
            op.messages.send("with the new token", to="summarizer")
            wait_for(lambda: summarizer(op).pending_messages == 0, renewed)
            assert "operator: with the new token" in stop(renewed)
        # Kept: the next start needs no RELAY_TOKEN.
        with running_agent(agent_code, server.url, tmp_path) as resumed:
            op.messages.send("and again", to="summarizer")
            wait_for(lambda: summarizer(op).pending_messages == 0, resumed)
            assert "resuming with the token kept in" in stop(resumed)


def test_the_readme_test_command_passes_in_the_background(tmp_path: Path) -> None:
    """As CI or a user runs it with ``nohup … &``: the shell starts the job with SIGINT
    ignored, which every process it starts inherits; the README agent's test still stops its
    agent and passes."""
    log = tmp_path / "nohup.out"
    job = (
        f"nohup {sys.executable} -m pytest -q -p no:cacheprovider --basetemp {tmp_path / 'runs'}"
        f" 'tests/e2e/test_readme.py::test_the_agent_and_the_operator_commands[operator-at-once]'"
        f" > {log} 2>&1 &\nwait $!"
    )
    done = subprocess.run(
        ["bash", "-c", job], cwd=Path(__file__).parents[2], env=shell_env(), timeout=300
    )
    assert done.returncode == 0, log.read_text()
    assert "1 passed" in log.read_text()


def summarizer(op: RelayClient) -> Agent:
    return next(a for a in op.agents.iterate() if a.agent_id == "summarizer")


def operator_env(server: LiveServer) -> dict[str, str]:
    return shell_env(RELAY_URL=server.url, RELAY_DATA_DIR=str(server.data_dir))


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
        # Each answer on a line of its own, and nothing left behind in the directory.
        answers = done.stdout.splitlines()
        assert len(answers) == 6 and all(json.loads(line) for line in answers), done.stdout
        assert not (tmp_path / "enroll.json").exists()


def test_every_install_command_names_this_distribution() -> None:
    """``pip install relay`` is someone else's project: every install command in the README,
    the docs and the CLI's help installs this one (by its name, or from a clone), with extras
    it has."""
    root = Path(__file__).parents[2]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    extras = set(project["optional-dependencies"])
    # `pip download --no-deps relay` fetches "relay 0.0.8: Meta-magical SSH tunnels" (2013).
    assert project["name"] not in {"relay"}
    texts = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    texts += [root / "relay_cli" / "commands" / "mcp.py", root / "relay_mcp" / "__init__.py"]
    found = 0
    for text in texts:
        for command in re.findall(r"pip install ((?:-\S+ )*)['\"]?([^\s'\"`]+)", text.read_text()):
            requirement = command[1]
            name, _, rest = requirement.partition("[")
            wanted = set(rest.rstrip("]").split(",")) - {""}
            assert wanted <= extras, (text.name, requirement)
            if not name.startswith((".", "/")):
                assert name == project["name"], (text.name, requirement)
            found += 1
    assert found >= 8


def test_write_an_agent_says_which_python_runs_it() -> None:
    """The quick start installs into .venv; the agent runs with that Python."""
    section = README.split("## Write an agent\n", 1)[1].split("```python", 1)[0]
    assert "source .venv/bin/activate" in section and "python agent.py" in section
