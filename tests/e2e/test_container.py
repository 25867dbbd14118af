"""The container as its files describe it. The image is not built here (no Docker on these
machines; docs/deploy.md says so): the test reads the Dockerfile and compose.yaml and runs their
entry point with their environment, as the container would, then their health check."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.live import free_port, relay_command, wait_until_answering

ROOT = Path(__file__).parents[2]


def dockerfile() -> dict[str, Any]:
    """The Dockerfile's instructions that matter to running it (continuations joined)."""
    text = re.sub(r"\\\n\s*", " ", (ROOT / "Dockerfile").read_text())
    found: dict[str, Any] = {"ENV": {}}
    for line in text.splitlines():
        word, _, rest = line.strip().partition(" ")
        if word == "ENV":
            found["ENV"] |= dict(pair.split("=", 1) for pair in shlex.split(rest))
        elif word in ("ENTRYPOINT", "USER", "VOLUME", "EXPOSE", "FROM"):
            found[word] = rest.strip()
        elif word == "HEALTHCHECK":
            found[word] = json.loads(rest.split(" CMD ", 1)[1])
    return found


@contextmanager
def container(env: dict[str, str], root: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """The image's entry point, run with the image's environment (and ``env`` on top, as
    ``docker run -e`` would), until the test is done with it."""
    image = dockerfile()
    command = json.loads(image["ENTRYPOINT"])
    assert command[:2] == ["relay", "serve"]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
    environment |= image["ENV"] | env
    log = root / "container.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*relay_command(), *command[1:]], env=environment, stdout=out, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{environment['RELAY_PORT']}"
    try:
        wait_until_answering(f"{url}/health", process, log)
        yield url, process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()


def test_the_image_runs_as_a_user_on_its_volume_with_a_health_check(tmp_path: Path) -> None:
    image = dockerfile()
    assert image["FROM"].startswith("python:") and image["FROM"].endswith("-slim")
    assert image["USER"] not in ("root", "0")
    assert image["VOLUME"] == image["ENV"]["RELAY_DATA_DIR"]
    assert image["EXPOSE"] == image["ENV"]["RELAY_PORT"]
    volume = tmp_path / "volume"  # what -v relay-data:/data mounts
    port = str(free_port())  # -p PORT:8765, seen from inside as RELAY_PORT
    with container({"RELAY_DATA_DIR": str(volume), "RELAY_PORT": port}, tmp_path) as (url, proc):
        token = (volume / "operator_token").read_text().strip()
        assert (volume / "operator_token").stat().st_mode & 0o777 == 0o600
        assert (volume / "relay.db").exists()
        status = httpx.get(f"{url}/v1/status", headers={"Authorization": f"Bearer {token}"})
        assert status.json()["storage"] == "sqlite"
        health = subprocess.run(
            image["HEALTHCHECK"], env={**os.environ, "RELAY_PORT": port}, timeout=10
        )
        assert health.returncode == 0
        proc.send_signal(signal.SIGTERM)  # docker stop
        assert proc.wait(timeout=20) == 0
    lines = (tmp_path / "container.log").read_text().splitlines()
    logged = [json.loads(line) for line in lines if line.startswith("{")]
    assert logged and any(entry.get("operation") == "status" for entry in logged)
    assert token not in "\n".join(lines)


@pytest.mark.postgres
def test_compose_runs_two_instances_over_postgresql(tmp_path: Path, database: str) -> None:
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    relays = [name for name, service in services.items() if service.get("build") == "."]
    assert relays == ["relay-1", "relay-2"] and "postgres" in services
    token = "rly_op_compose-test-0123456789abcdef"
    urls = []
    with ExitStack() as stack:
        for name in relays:
            env = {
                key: str(value).replace("${RELAY_OPERATOR_TOKEN:?", "").split("}")[0]
                for key, value in services[name]["environment"].items()
            }
            assert env["RELAY_DATABASE_URL"].startswith("postgresql+asyncpg://")
            env |= {
                "RELAY_DATABASE_URL": database,  # this machine's PostgreSQL, not the service's
                "RELAY_OPERATOR_TOKEN": token,
                "RELAY_PORT": str(free_port()),
                "RELAY_DATA_DIR": str(tmp_path / name),
            }
            (tmp_path / name).mkdir()
            url, _ = stack.enter_context(container(env, tmp_path / name))
            urls.append(url)
        op = {"Authorization": f"Bearer {token}"}
        registered = httpx.post(f"{urls[0]}/v1/agents/register", json={"agent_id": "x"}, headers=op)
        assert registered.status_code == 201
        listed = httpx.get(f"{urls[1]}/v1/agents", headers=op).json()["agents"]
        assert [a["agent_id"] for a in listed] == ["x"]
