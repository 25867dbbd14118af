"""A real Relay server in its own process on a free port, for the SDK, CLI and e2e tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def relay_command() -> list[str]:
    """The installed ``relay`` console script beside this interpreter."""
    script = Path(sys.executable).with_name("relay")
    return [str(script)] if script.exists() else [sys.executable, "-m", "relay_cli"]


class PortTaken(Exception):
    """The port a test chose was taken by another process before its server bound it."""


def wait_until_answering(
    probe: str,
    process: subprocess.Popen[bytes],
    log: Path,
    timeout: float = 30,
    announced: str | None = None,
    since: int = 0,
) -> None:
    """Return once ``probe`` (a URL) answers 200 from ``process`` (its log from byte ``since``
    on, if ``announced`` is given, saying so: another server's answer on a port taken
    meanwhile is not its); fail with the log if the process ends or ``timeout`` seconds pass
    first (``PortTaken`` when it ended because its port was taken)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            answered = httpx.get(probe, timeout=1).status_code == 200
        except httpx.TransportError:
            answered = False
        said = log.read_bytes()[since:].decode(errors="replace")
        if answered and (announced is None or announced in said) and process.poll() is None:
            return
        if process.poll() is not None and "is in use" in said:
            raise PortTaken(said)
        if time.monotonic() > deadline or process.poll() is not None:
            raise AssertionError(f"{probe} never answered:\n{said}")
        time.sleep(0.1)


def start_relay(
    env: dict[str, str],
    log: Path,
    port: int | None = None,
    preexec_fn: Callable[[], None] | None = None,
) -> tuple[subprocess.Popen[bytes], int]:
    """``relay serve`` with ``env`` on ``port`` (None: a free one, and another if it is taken
    before the server binds it), its output appended to ``log``; once it answers, the process
    and its port. ``relay serve`` checks its port before anything else, then says it is "on
    http://127.0.0.1:PORT" (a line, or a JSON record's message): that tells its answers from
    another server's on a port taken meanwhile."""
    for tries_left in reversed(range(3 if port is None else 1)):
        chosen = port or free_port()
        since = log.stat().st_size if log.exists() else 0
        with log.open("ab") as out:
            process = subprocess.Popen(
                [*relay_command(), "serve", "--port", str(chosen)],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                preexec_fn=preexec_fn,
            )
        probe, ours = f"http://127.0.0.1:{chosen}/health", f"on http://127.0.0.1:{chosen} "
        try:
            wait_until_answering(probe, process, log, announced=ours, since=since)
            return process, chosen
        except PortTaken:
            process.wait()
            if not tries_left:
                raise
        except BaseException:
            process.kill()
            process.wait()
            raise
    raise AssertionError("unreachable: the last try returns or raises")


def registered(http: httpx.Client, operator_token: str, agent_id: str) -> dict[str, str]:
    """The headers of an agent the operator registers."""
    op = {"Authorization": f"Bearer {operator_token}"}
    agent = http.post("/v1/agents/register", json={"agent_id": agent_id}, headers=op).json()
    return {"Authorization": f"Bearer {agent['token']}"}


@dataclass
class LiveServer:
    url: str
    data_dir: Path
    log: Path
    process: subprocess.Popen[bytes]

    @property
    def operator_token(self) -> str:
        return (self.data_dir / "operator_token").read_text().strip()


def agent_token(server: LiveServer, agent_id: str) -> str:
    """The token of an agent the operator registers now on ``server``."""
    from relay_client import RelayClient

    with RelayClient(server.url, token=server.operator_token) as op:
        token = op.agents.register(agent_id).token
    assert token is not None
    return token


@contextmanager
def live_server(
    root: Path, preexec_fn: Callable[[], None] | None = None, **env_overrides: str
) -> Iterator[LiveServer]:
    """``relay serve`` with no configuration but its data directory under ``root``
    (``preexec_fn`` runs in the child before it starts, e.g. to set its resource limits)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
    env |= {"RELAY_DATA_DIR": str(root / "data"), **env_overrides}
    log = root / "server.log"
    process, port = start_relay(env, log, preexec_fn=preexec_fn)
    try:
        yield LiveServer(f"http://127.0.0.1:{port}", root / "data", log, process)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
