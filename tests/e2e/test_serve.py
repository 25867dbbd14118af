"""The server as a user runs it: ``relay serve`` in its own process, with no configuration."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from pathlib import Path

import httpx

from tests.live import live_server, relay_command


def test_relay_serve_runs_the_walkthrough_and_stops_gracefully(tmp_path: Path) -> None:
    with live_server(tmp_path) as server:
        token_file = server.data_dir / "operator_token"
        assert token_file.stat().st_mode & 0o777 == 0o600
        assert (server.data_dir / "relay.db").exists()
        op = {"Authorization": f"Bearer {server.operator_token}"}
        with httpx.Client(base_url=server.url, timeout=10) as http:
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

        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=20) == 0
        log = server.log.read_text()
        assert "operator token in" in log
        assert server.operator_token not in log  # the token itself is never printed


def test_a_port_in_use_is_one_line_and_nothing_written(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
        env["RELAY_DATA_DIR"] = str(tmp_path / "data")
        done = subprocess.run(
            [*relay_command(), "serve", "--port", str(port)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        f"relay: port {port} is in use; pass --port or stop the other server"
    ]
    assert not (tmp_path / "data").exists()  # no data dir, no database, no token
