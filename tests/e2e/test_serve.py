"""The server as a user runs it: ``relay serve`` in its own process, with no configuration."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def relay_command() -> list[str]:
    script = Path(sys.executable).with_name("relay")
    return [str(script)] if script.exists() else [shutil.which("relay") or "relay"]


@dataclass
class Server:
    base: str
    data_dir: Path
    log: Path
    process: subprocess.Popen[bytes]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
    env["RELAY_DATA_DIR"] = str(tmp_path / "data")
    log = tmp_path / "server.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*relay_command(), "serve", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.1)
    else:
        process.kill()
        process.wait()
        raise AssertionError(log.read_text())
    yield Server(base, tmp_path / "data", log, process)
    if process.poll() is None:
        process.kill()
    process.wait()


def test_relay_serve_runs_the_walkthrough_and_stops_gracefully(server: Server) -> None:
    base, data_dir, process = server.base, server.data_dir, server.process
    token_file = data_dir / "operator_token"
    assert token_file.stat().st_mode & 0o777 == 0o600
    assert (data_dir / "relay.db").exists()
    op = {"Authorization": f"Bearer {token_file.read_text().strip()}"}
    with httpx.Client(base_url=base, timeout=10) as http:
        alice = http.post("/v1/agents/register", json={"agent_id": "alice"}, headers=op).json()
        bob = http.post("/v1/agents/register", json={"agent_id": "bob"}, headers=op).json()
        as_alice = {"Authorization": f"Bearer {alice['token']}"}
        as_bob = {"Authorization": f"Bearer {bob['token']}"}
        sent = http.post("/v1/messages", json={"to": "bob", "text": "hi"}, headers=as_alice)
        assert sent.status_code == 201
        inbox = http.get("/v1/agents/bob/inbox", headers=as_bob).json()
        assert [m["text"] for m in inbox["messages"]] == ["hi"]
        acked = http.post(
            f"/v1/messages/{sent.json()['message_id']}/ack",
            json={"agent_id": "bob"},
            headers=as_bob,
        )
        assert acked.json()["status"] == "acked"
        assert http.get("/openapi.json").json()["openapi"] == "3.1.0"

    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=20) == 0
    log = server.log.read_text()
    assert "operator token in" in log
    assert token_file.read_text().strip() not in log  # the token itself is never printed
