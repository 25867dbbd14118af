"""Hardening findings that need the real server process: its log, its sockets, its files."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.live import live_server


def test_a_path_cannot_forge_a_log_line(tmp_path: Path) -> None:
    forged = "2026-11-23 16:00:00,000 CRITICAL relay.server: FAKE"
    with live_server(tmp_path) as server:
        path = "/v1/agents/x%0A" + forged.replace(" ", "%20") + "/inbox"
        assert httpx.get(server.url + path).status_code == 401
        server.process.terminate()
        server.process.wait(timeout=15)
    lines = server.log.read_text().splitlines()
    assert not [line for line in lines if line.startswith(forged)]
    (access,) = [line for line in lines if "FAKE" in line]
    assert "/v1/agents/x\\n2026-11-23" in access and " 401 " in access
