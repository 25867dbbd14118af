"""Schemathesis against the served /openapi.json: no server errors, no status the document does
not declare, every response as documented.

Run with the operator token and with an agent token, each with the fixed seed (the same cases
every run) and a fresh random one (new cases every run; a failure prints its seed to replay).
Long-poll waits are capped at a second on this server (RELAY_MAX_WAIT_SECONDS), well under the
request timeout, so generated ``wait`` values stay cheap and never time out.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.live import live_server

CHECKS = "not_a_server_error,status_code_conformance,response_schema_conformance"
FIXED_SEED = 20261122
MAX_WAIT_SECONDS = 1
REQUEST_TIMEOUT_SECONDS = 20  # above every wait the server will honour


def schemathesis(
    url: str, token: str, agent: str | None, workdir: Path, seed: int
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
        str(REQUEST_TIMEOUT_SECONDS),
        "--no-color",
        "--seed",
        str(seed),
        "-H",
        f"Authorization: Bearer {token}",
    ]
    if agent:
        command += ["-H", f"X-Agent-ID: {agent}"]
    return subprocess.run(command, capture_output=True, text=True, cwd=workdir, timeout=600)


@pytest.mark.parametrize("seed", [FIXED_SEED, random.randrange(2**32)], ids=["fixed", "random"])
@pytest.mark.parametrize("who", ["operator", "agent"])
def test_no_server_errors_and_conforming_responses(tmp_path: Path, who: str, seed: int) -> None:
    with live_server(tmp_path, RELAY_MAX_WAIT_SECONDS=str(MAX_WAIT_SECONDS)) as server:
        token, agent = server.operator_token, None
        if who == "agent":
            registered = httpx.post(
                f"{server.url}/v1/agents/register",
                json={"agent_id": "fuzzer"},
                headers={"Authorization": f"Bearer {token}"},
            ).json()
            token, agent = registered["token"], "fuzzer"
        result = schemathesis(server.url, token, agent, tmp_path, seed)
        assert result.returncode == 0, f"seed {seed}:\n{result.stdout[-6000:]}"
        assert "internal error in" not in server.log.read_text()  # no 500 was logged
