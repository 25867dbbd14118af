"""Hardening findings that need the real server process: its log, its sockets, its files."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.live import live_server


def test_a_path_cannot_forge_a_log_line(tmp_path: Path) -> None:
    forged = "2026-11-23 16:00:00,000 CRITICAL relay.server: FAKE"
    with live_server(tmp_path, RELAY_TRUSTED_PROXIES="127.0.0.1/32") as server:
        path = "/v1/agents/x%0A" + forged.replace(" ", "%20") + "/inbox"
        through_proxy = {"X-Forwarded-For": "203.0.113.5"}
        assert httpx.get(server.url + path, headers=through_proxy).status_code == 401
        server.process.terminate()
        server.process.wait(timeout=15)
    lines = server.log.read_text().splitlines()
    assert not [line for line in lines if line.startswith(forged)]
    (access,) = [line for line in lines if "FAKE" in line]
    assert "/v1/agents/x\\n2026-11-23" in access and " 401 " in access
    assert 'relay.access: 203.0.113.5 "GET' in access  # the client's address, not the proxy's
