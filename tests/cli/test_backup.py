"""``relay backup`` against a running server, and a restore from its copy."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from relay_cli.main import app
from relay_client import RelayClient
from tests.live import live_server


def test_a_backup_taken_while_writing_restores_to_a_working_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "relay-backup.db"
    (tmp_path / "live").mkdir()
    with live_server(tmp_path / "live") as server:
        with RelayClient(server.url, token=server.operator_token) as op:
            token = op.agents.register("keeper").token
            for n in range(50):
                op.messages.send(f"before {n}", to="keeper")
            stop = threading.Event()

            def keep_writing() -> None:  # the server is busy while the copy is taken
                with RelayClient(server.url, token=server.operator_token) as writer:
                    while not stop.is_set():
                        writer.messages.send("during", to="keeper")

            writing = threading.Thread(target=keep_writing)
            writing.start()
            try:
                monkeypatch.setenv("RELAY_DATA_DIR", str(server.data_dir))
                done = CliRunner().invoke(app, ["backup", str(copy)])
            finally:
                stop.set()
                writing.join()
        assert done.exit_code == 0, done.output
        assert done.stdout.startswith(f"backed up {server.data_dir / 'relay.db'} to {copy}")
        again = CliRunner().invoke(app, ["backup", str(copy)])
        assert again.exit_code == 2 and "never overwrites" in again.stderr

    # Restore as docs/operations.md says: the copy in place of relay.db, then start.
    restored = tmp_path / "restored"
    (restored / "data").mkdir(parents=True)
    shutil.copy(copy, restored / "data" / "relay.db")
    with live_server(restored) as server:
        with RelayClient(server.url, token=token, agent_id="keeper") as keeper:
            texts = [m.text for m in keeper.agents.inbox(limit=1000).messages]
    assert texts[:50] == [f"before {n}" for n in range(50)]
    assert set(texts[50:]) <= {"during"}


def test_backup_of_postgresql_points_to_pg_dump(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RELAY_DATABASE_URL", "postgresql+asyncpg://127.0.0.1/relay")
    done = CliRunner().invoke(app, ["backup", "anywhere.db"])
    assert done.exit_code == 2 and "pg_dump" in done.stderr
