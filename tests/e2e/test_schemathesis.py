"""Schemathesis against the served /openapi.json: no server errors, every response as documented.

Run once with the operator token and once with an agent token, with bounded examples. Long-poll
waits are capped at a second on this server (RELAY_MAX_WAIT_SECONDS) so generated ``wait``
values stay cheap.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.live import live_server

CHECKS = "not_a_server_error,response_schema_conformance"


def schemathesis(
    url: str, token: str, agent: str | None, workdir: Path
) -> subprocess.CompletedProcess[str]:
    command = [
        str(Path(sys.executable).with_name("schemathesis")),
        "run",
        f"{url}/openapi.json",
        "--checks",
        CHECKS,
        "--max-examples",
        "5",
        # The SSE stream never ends by design; tests/server/test_realtime.py covers it.
        "--exclude-operation-id",
        "events.stream",
        "--request-timeout",
        "20",
        "--no-color",
        "--seed",
        "20261122",  # the same cases every run; change it to explore new ones
        "-H",
        f"Authorization: Bearer {token}",
    ]
    if agent:
        command += ["-H", f"X-Agent-ID: {agent}"]
    return subprocess.run(command, capture_output=True, text=True, cwd=workdir, timeout=600)


@pytest.mark.parametrize("who", ["operator", "agent"])
def test_no_server_errors_and_conforming_responses(tmp_path: Path, who: str) -> None:
    with live_server(tmp_path, RELAY_MAX_WAIT_SECONDS="1") as server:
        token, agent = server.operator_token, None
        if who == "agent":
            registered = httpx.post(
                f"{server.url}/v1/agents/register",
                json={"agent_id": "fuzzer"},
                headers={"Authorization": f"Bearer {token}"},
            ).json()
            token, agent = registered["token"], "fuzzer"
        result = schemathesis(server.url, token, agent, tmp_path)
        assert result.returncode == 0, result.stdout[-6000:]
        assert "internal error in" not in server.log.read_text()  # no 500 was logged
