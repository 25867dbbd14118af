"""``relay backup`` against a running server, and a restore from its copy."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from relay_cli.main import app
from relay_client import RelayClient
from tests.live import live_server, relay_command


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
        assert stat.S_IMODE(copy.stat().st_mode) == 0o600  # it holds every message
        again = CliRunner().invoke(app, ["backup", str(copy)])
        assert again.exit_code == 1 and "never overwrites" in again.stderr

    # Restore as docs/operations.md says: the copy in place of relay.db, then start.
    restored = tmp_path / "restored"
    (restored / "data").mkdir(parents=True)
    shutil.copy(copy, restored / "data" / "relay.db")
    with live_server(restored) as server:
        with RelayClient(server.url, token=token, agent_id="keeper") as keeper:
            texts = [m.text for m in keeper.agents.inbox(limit=1000).messages]
    assert texts[:50] == [f"before {n}" for n in range(50)]
    assert set(texts[50:]) <= {"during"}


def test_a_backup_that_cannot_be_written_is_one_line_and_exit_1(tmp_path: Path) -> None:
    """As the user runs it, in its own process: no traceback, nothing half-written."""
    (tmp_path / "live").mkdir()
    with live_server(tmp_path / "live") as server:
        env = {**os.environ, "RELAY_DATA_DIR": str(server.data_dir)}
        for target, says in [
            (
                tmp_path / "no-such-folder" / "copy.db",
                f"error: no folder {tmp_path}/no-such-folder",
            ),
            (tmp_path / "live", "exists; a backup never overwrites"),
        ]:
            done = subprocess.run(
                [*relay_command(), "backup", str(target)], env=env, capture_output=True, text=True
            )
            assert done.returncode == 1, done
            assert done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
            assert says in done.stderr and "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["live"]


def test_backup_of_postgresql_points_to_pg_dump(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RELAY_DATABASE_URL", "postgresql+asyncpg://127.0.0.1/relay")
    done = CliRunner().invoke(app, ["backup", "anywhere.db"])
    assert done.exit_code == 1 and "pg_dump" in done.stderr
