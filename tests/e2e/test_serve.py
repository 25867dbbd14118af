"""The server as a user runs it: ``relay serve`` in its own process, with no configuration."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
from pathlib import Path

import httpx
import pytest

from relay_core.storage.sqlite.driver import sqlite3
from tests.live import live_server, registered, relay_command
from tests.migrated import sqlite_store


def test_relay_serve_runs_the_walkthrough_and_stops_gracefully(tmp_path: Path) -> None:
    with live_server(tmp_path) as server:
        token_file = server.data_dir / "operator_token"
        assert token_file.stat().st_mode & 0o777 == 0o600
        assert (server.data_dir / "relay.db").exists()
        with httpx.Client(base_url=server.url, timeout=10) as http:
            as_alice = registered(http, server.operator_token, "alice")
            as_bob = registered(http, server.operator_token, "bob")
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


def test_json_logs_are_one_object_a_line_with_the_request_and_no_secret(tmp_path: Path) -> None:
    with live_server(tmp_path, RELAY_LOG_FORMAT="json") as server:
        op = {"Authorization": f"Bearer {server.operator_token}"}
        with httpx.Client(base_url=server.url, timeout=10) as http:
            token = http.post("/v1/agents/register", json={"agent_id": "ann"}, headers=op).json()[
                "token"
            ]
            sent = http.post(
                "/v1/messages",
                json={"to": "ann", "text": "hi"},
                headers={"Authorization": f"Bearer {token}"},
            )
            http.get("/v1/tasks", headers={"Authorization": "Bearer rly_agent_wrong"})
            scraped = http.get("/metrics", headers=op)
            for _ in range(5):
                http.get("/health")
        # A second server on the same port is refused in JSON too.
        refused_start = subprocess.run(
            [*relay_command(), "serve", "--port", str(server.url.rsplit(":", 1)[1])],
            env={**os.environ, "RELAY_LOG_FORMAT": "json", "RELAY_DATA_DIR": str(tmp_path / "2")},
            capture_output=True,
            text=True,
            timeout=60,
        )
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=20)
        text = server.log.read_text()
    # Every line is JSON, the first (where the server listens) too.
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0]["message"].startswith(f"Relay 0.1.0 on {server.url}")
    assert len(lines) >= 4 and all({"time", "level", "logger", "message"} <= set(x) for x in lines)
    [refusal] = [json.loads(line) for line in refused_start.stderr.splitlines()]
    assert refusal["level"] == "ERROR" and "is in use" in refusal["message"]
    [metrics] = [x for x in lines if x.get("request_id") == scraped.headers["X-Request-ID"]]
    assert metrics["caller"] == "operator"
    # Durations are the request's own, to the microsecond, not the event loop's milliseconds.
    durations = [x["duration_ms"] for x in lines if "duration_ms" in x]
    assert len(durations) >= 8 and any(d != int(d) for d in durations), durations
    [access] = [x for x in lines if x.get("request_id") == sent.headers["X-Request-ID"]]
    assert access["operation"] == "messages.send" and access["status"] == 201
    assert access["caller"] == "ann" and access["method"] == "POST"
    assert access["duration_ms"] == round(access["duration_ms"], 3) > 0
    refused = [x for x in lines if x.get("status") == 401]
    assert refused and refused[0]["caller"] == "-"
    assert token not in text and server.operator_token not in text and "rly_agent_wrong" not in text


def test_a_sqlite_only_install_serves_without_asyncpg(tmp_path: Path) -> None:
    """``pip install relay-agents`` without the ``postgres`` extra has no asyncpg: ``relay
    serve`` still starts on SQLite and answers (here asyncpg is made unimportable)."""
    hidden = tmp_path / "no-asyncpg"
    hidden.mkdir()
    (hidden / "asyncpg.py").write_text("raise ImportError('asyncpg is not installed')\n")
    path = os.pathsep.join([str(hidden), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    with live_server(tmp_path, PYTHONPATH=path) as server:
        with httpx.Client(base_url=server.url, timeout=10) as http:
            as_alice = registered(http, server.operator_token, "alice")
            sent = http.post("/v1/messages", json={"to": "alice", "text": "hi"}, headers=as_alice)
            assert sent.status_code == 201
        assert "storage sqlite" in server.log.read_text()


@pytest.mark.parametrize(
    ("hidden_module", "given", "said"),
    [
        (
            "asyncpg",
            {"RELAY_DATABASE_URL": "postgresql+asyncpg://relay@127.0.0.1:9/relay"},
            "RELAY_DATABASE_URL names PostgreSQL, and this install has no asyncpg: ",
        ),
        (
            "greenlet",
            {"RELAY_DATABASE_URL": "postgresql+asyncpg://relay@127.0.0.1:9/relay"},
            "RELAY_DATABASE_URL names PostgreSQL, and this install has no greenlet: ",
        ),
        (
            "opentelemetry",
            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"},
            "the OTEL_* variables ask for traces, and this install has no opentelemetry: ",
        ),
    ],
)
def test_a_configured_integration_without_its_extra_is_one_line_naming_the_install(
    tmp_path: Path, hidden_module: str, given: dict[str, str], said: str
) -> None:
    """PostgreSQL without asyncpg or greenlet, traces without the OpenTelemetry SDK (each made
    unimportable here): relay serve stops before it starts, naming the pip command."""
    hidden = tmp_path / "hidden"
    (hidden / hidden_module).mkdir(parents=True)
    (hidden / hidden_module / "__init__.py").write_text(
        f"raise ImportError('{hidden_module} is not installed')\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RELAY_", "OTEL_"))}
    env |= given | {
        "PYTHONPATH": str(hidden),
        "HOME": str(tmp_path),
        "RELAY_DATA_DIR": str(tmp_path / "data"),
    }
    done = subprocess.run(
        [*relay_command(), "serve", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    [line] = [x for x in done.stderr.splitlines() if said in x]
    extra = "otel" if hidden_module == "opentelemetry" else "postgres"
    assert line.endswith(f"[{extra}]'") and "pip install" in line, line
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "data" / "relay.db").exists()  # nothing written


@pytest.mark.parametrize(
    ("revision", "said"),
    [
        ("9999_from_the_future", "docs/upgrading.md"),  # a rollback without a restore
        ("0030", "a development checkout of Relay before its first release"),  # folded
    ],
)
async def test_a_database_of_an_unknown_revision_is_one_line_naming_what_to_do(
    tmp_path: Path, revision: str, said: str
) -> None:
    """A schema this Relay does not know (a newer release's, or one of the revisions the
    baseline folded) is said in one line, and nothing is changed, rather than a traceback from
    the migration tool."""
    data = tmp_path / "data"
    data.mkdir()
    await sqlite_store(data / "relay.db")
    with sqlite3.connect(data / "relay.db") as db:
        db.execute("UPDATE alembic_version SET version_num = ?", (revision,))
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
    done = subprocess.run(
        [*relay_command(), "serve", "--port", "0", "--data-dir", str(data)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("relay: cannot start: the database's schema is at revision ")
    assert revision in line and said in line
    with sqlite3.connect(data / "relay.db") as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [(revision,)]
