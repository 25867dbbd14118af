"""Hardening findings that need the real server process: its log, its sockets, its files."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from tests.live import LiveServer, free_port, live_server, relay_command


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


def _file_size_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:  # in the server's process, before it starts
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails, no kill
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    return apply


def test_a_full_disk_is_503_with_retry_after_and_recovers_without_a_restart(
    tmp_path: Path,
) -> None:
    # RLIMIT_FSIZE makes every file of the server stop growing at 3 MB: to SQLite, a full disk.
    with live_server(tmp_path, preexec_fn=_file_size_limit(3 * 1024 * 1024)) as server:
        op = {"Authorization": f"Bearer {server.operator_token}"}
        with httpx.Client(base_url=server.url, headers=op, timeout=10) as client:
            client.post("/v1/agents/register", json={"agent_id": "bob"}).raise_for_status()
            big = {"to": "bob", "text": "x" * 60_000}
            statuses = []
            for _ in range(200):
                response = client.post("/v1/messages", json=big)
                statuses.append(response.status_code)
                if response.status_code != 201:
                    break
            assert statuses[-1] == 503, statuses
            assert response.json()["code"] == "storage_unavailable"
            assert str(tmp_path) not in response.text  # the log names the file, not the answer
            assert int(response.headers["Retry-After"]) >= 1
            for _ in range(20):  # every further write is a 503 too, never a 500
                assert client.post("/v1/messages", json=big).status_code == 503
            inbox = client.get("/v1/agents/bob/inbox", params={"limit": 5})
            assert inbox.status_code in (200, 503), inbox.text
            # Space again: the same server takes writes, no restart.
            resource.prlimit(
                server.process.pid,
                resource.RLIMIT_FSIZE,
                (resource.RLIM_INFINITY, resource.RLIM_INFINITY),
            )
            assert client.post("/v1/messages", json=big).status_code == 201
            assert client.get("/v1/agents/bob/inbox", params={"limit": 5}).status_code == 200
        server.process.terminate()
        server.process.wait(timeout=15)
    log = server.log.read_text()
    assert log.count("storage unavailable") == 1, log
    assert "Traceback" not in log and "never retrieved" not in log, log


def _serve(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
    env["RELAY_DATA_DIR"] = str(data_dir)
    return subprocess.run(
        [*relay_command(), "serve", "--port", str(free_port()), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_a_database_that_cannot_be_opened_is_one_line_and_a_failing_exit(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / "relay.db").write_bytes(b"this is no database, " * 500)
    unopenable = tmp_path / "unopenable"
    (unopenable / "relay.db").mkdir(parents=True)  # a directory where the file should be
    for data_dir, cause in ((garbage, "file is not a database"), (unopenable, "unable to open")):
        result = _serve(data_dir)
        assert result.returncode == 1
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert str(data_dir / "relay.db") in lines[0] and cause in lines[0]


def test_a_second_server_on_one_sqlite_file_is_refused_naming_the_first(tmp_path: Path) -> None:
    with live_server(tmp_path) as first:
        result = _serve(first.data_dir)
        assert result.returncode == 1
        (line,) = result.stderr.strip().splitlines()
        assert f"already served by process {first.process.pid}" in line
        assert httpx.get(first.url + "/health").status_code == 200  # the first one serves on


def _connect(server: LiveServer) -> socket.socket:
    host, port = server.url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def _closed_within(sock: socket.socket, seconds: float) -> bytes | None:
    """What the server sent before closing, if it closed within ``seconds``; else None."""
    sock.settimeout(seconds)
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return received


def test_slow_request_heads_and_stalled_bodies_are_cut_off(tmp_path: Path) -> None:
    timeouts = {"RELAY_HEADER_TIMEOUT_SECONDS": "1", "RELAY_BODY_TIMEOUT_SECONDS": "1"}
    with live_server(tmp_path, **timeouts) as server:
        # Slowloris: twenty connections sending their head a byte at a time.
        slow = [_connect(server) for _ in range(20)]
        head = b"GET /health HTTP/1.1\r\nHost: relay\r\n"
        started = time.monotonic()
        for i in range(4):
            for sock in slow:
                with contextlib.suppress(OSError):
                    sock.send(head[i : i + 1])
            time.sleep(0.3)
        for sock in slow:
            assert _closed_within(sock, 3) == b""
            sock.close()
        assert time.monotonic() - started < 4
        # A body that stops coming: 408, and the connection is closed.
        stalled = _connect(server)
        stalled.send(
            b"POST /v1/enroll HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\n"
            b'Content-Length: 100\r\n\r\n{"agent_id"'
        )
        stalled.settimeout(5)
        answer = stalled.recv(65536)
        assert answer.startswith(b"HTTP/1.1 408") and b"Connection: close" in answer
        assert b'"code": "request_timeout"' in answer
        stalled.close()
        # An idle keep-alive connection between requests is not a slow head.
        kept = _connect(server)
        for _ in range(2):
            kept.send(b"GET /health HTTP/1.1\r\nHost: relay\r\n\r\n")
            assert kept.recv(65536).startswith(b"HTTP/1.1 200")
            time.sleep(1.5)
        kept.close()
        assert httpx.get(server.url + "/health").status_code == 200


def test_an_unreadable_request_is_a_declared_400_that_echoes_nothing(tmp_path: Path) -> None:
    """A request line or header past aiohttp's 8190 bytes is 400 in Relay's error body (as
    every operation declares), without the bytes that were sent: they may hold a credential."""
    with live_server(tmp_path) as server:
        secret = "rly_op_" + "s" * 9000
        for request in (
            f"GET /v1/agents?limit={'9' * 9000} HTTP/1.1\r\nHost: relay\r\n\r\n",
            f"GET /v1/agents HTTP/1.1\r\nHost: relay\r\nAuthorization: Bearer {secret}\r\n\r\n",
        ):
            sock = _connect(server)
            sock.sendall(request.encode())
            answer = _closed_within(sock, 5)
            sock.close()
            assert answer is not None and answer.split(b" ", 2)[1] == b"400", answer
            assert b"application/json" in answer and b'"code": "bad_request"' in answer
            assert b"sssssss" not in answer and b"9999999" not in answer
        declared = httpx.get(server.url + "/openapi.json").json()["paths"]["/v1/agents"]["get"]
        assert "400" in declared["responses"]


def test_past_the_connection_ceiling_a_client_gets_503_not_a_reset(tmp_path: Path) -> None:
    limits = {
        "RELAY_MAX_CONNECTIONS": "5",
        "RELAY_MAX_CONNECTIONS_PER_ADDRESS": "10",
        "RELAY_HEADER_TIMEOUT_SECONDS": "30",
    }
    with live_server(tmp_path, **limits) as server:
        idle = [_connect(server) for _ in range(5)]
        time.sleep(0.2)
        refused = httpx.get(server.url + "/health")
        assert refused.status_code == 503
        assert refused.json()["code"] == "unavailable"
        assert refused.headers["Retry-After"] == "1"
        for sock in idle:
            sock.close()
        time.sleep(0.2)
        assert httpx.get(server.url + "/health").status_code == 200


def _connect_from(server: LiveServer, source: str) -> socket.socket:
    host, port = server.url.removeprefix("http://").split(":")
    sock = socket.socket()
    sock.settimeout(10)
    sock.bind((source, 0))
    sock.connect((host, int(port)))
    return sock


def test_a_body_trickled_a_byte_at_a_time_is_cut_at_the_whole_body_deadline(
    tmp_path: Path,
) -> None:
    with live_server(tmp_path, RELAY_BODY_TIMEOUT_SECONDS="2") as server:
        sock = _connect(server)
        sock.sendall(
            b"POST /v1/enroll HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n{"
        )
        started = time.monotonic()
        answer = b""
        sock.settimeout(0.4)
        while time.monotonic() - started < 10 and not answer:
            with contextlib.suppress(OSError):
                sock.send(b" ")  # never silent for more than 0.4 s
            with contextlib.suppress(TimeoutError):
                answer = sock.recv(65536)
        sock.close()
        assert answer.startswith(b"HTTP/1.1 408"), answer
        assert b'"code": "request_timeout"' in answer
        assert time.monotonic() - started < 4


def _median_health_latency(server: LiveServer, count: int = 15) -> float:
    latencies = []
    for _ in range(count):
        started = time.perf_counter()
        # A new connection each time: the attack is on connections, not on a kept one.
        assert httpx.get(server.url + "/health", timeout=10).status_code == 200
        latencies.append(time.perf_counter() - started)
    return sorted(latencies)[len(latencies) // 2]


def test_one_address_trickling_bodies_cannot_take_every_connection(tmp_path: Path) -> None:
    """The issue's slowloris: 300 bodies trickling from one address against a ceiling of 200.
    That address holds its share (a tenth of the ceiling); another address is answered as
    fast as before the attack."""
    with live_server(tmp_path, RELAY_MAX_CONNECTIONS="200") as server:
        before = _median_health_latency(server)
        attackers: list[socket.socket] = []
        head = (
            b"POST /v1/enroll HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100000\r\n\r\n{"
        )
        try:
            for _ in range(300):
                sock = _connect_from(server, "127.0.0.2")
                with contextlib.suppress(OSError):
                    sock.sendall(head)
                attackers.append(sock)
            time.sleep(1.5)  # the refused ones are answered; the admitted ones trickle on
            for sock in attackers:
                with contextlib.suppress(OSError):
                    sock.send(b" ")
            during = _median_health_latency(server)
            refused = 0
            for sock in attackers:
                sock.settimeout(0.01)
                with contextlib.suppress(OSError):
                    refused += sock.recv(65536).startswith(b"HTTP/1.1 503")
            assert refused >= 300 - 20, refused  # past its share of 20, each was answered 503
        finally:
            for sock in attackers:
                sock.close()
        assert during < before + 0.1, (before, during)


def test_a_second_server_on_the_same_file_by_another_path_is_refused(tmp_path: Path) -> None:
    with live_server(tmp_path) as first:
        database = first.data_dir / "relay.db"
        linked = tmp_path / "linked"
        linked.mkdir()
        os.link(database, linked / "relay.db")  # a hard link: another name, the same file
        symlinked = tmp_path / "symlinked"
        symlinked.mkdir()
        (symlinked / "relay.db").symlink_to(database)
        for data_dir in (linked, symlinked):
            result = _serve(data_dir)
            assert result.returncode == 1, result.stderr
            (line,) = result.stderr.strip().splitlines()
            assert f"already served by process {first.process.pid}" in line
        assert httpx.get(first.url + "/health").status_code == 200


def _permissive_umask() -> None:
    os.umask(0)  # in the server's process: what it creates is private all the same


def test_the_database_its_wal_the_token_and_backups_are_private_whatever_the_umask(
    tmp_path: Path,
) -> None:
    with live_server(tmp_path, preexec_fn=_permissive_umask) as server:
        op = {"Authorization": f"Bearer {server.operator_token}"}
        httpx.post(server.url + "/v1/agents/register", json={"agent_id": "a"}, headers=op)
        data = server.data_dir
        assert (data.stat().st_mode & 0o777) == 0o700
        for name in ("relay.db", "relay.db-wal", "relay.db-shm", "operator_token"):
            assert ((data / name).stat().st_mode & 0o777) == 0o600, name
        env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
        copy = tmp_path / "copy.db"
        done = subprocess.run(
            [*relay_command(), "backup", str(copy)],
            env={**env, "RELAY_DATA_DIR": str(data)},
            capture_output=True,
            text=True,
            timeout=30,
            preexec_fn=_permissive_umask,
        )
        assert done.returncode == 0, done.stderr
        assert (copy.stat().st_mode & 0o777) == 0o600


def test_agents_filling_their_address_never_lock_the_operator_out(tmp_path: Path) -> None:
    """An agent holding every connection its address may (here 3 event streams) leaves other
    clients of that address 503; the operator's relay CLI on the same host still answers."""
    with live_server(tmp_path, RELAY_MAX_CONNECTIONS_PER_ADDRESS="3") as server:
        with httpx.Client(base_url=server.url) as op:
            op.headers["Authorization"] = f"Bearer {server.operator_token}"
            token = op.post("/v1/agents/register", json={"agent_id": "hog"}).json()["token"]
        with contextlib.ExitStack() as streams:
            for _ in range(3):
                client = streams.enter_context(httpx.Client(base_url=server.url, timeout=10))
                stream = streams.enter_context(
                    client.stream(
                        "GET", "/v1/events/stream", headers={"Authorization": f"Bearer {token}"}
                    )
                )
                assert stream.status_code == 200
            refused = httpx.get(
                server.url + "/v1/status", headers={"Authorization": f"Bearer {token}"}
            )
            assert refused.status_code == 503 and refused.json()["code"] == "unavailable"
            env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
            env |= {"RELAY_URL": server.url, "RELAY_DATA_DIR": str(server.data_dir)}
            env |= {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config")}
            said = subprocess.run(
                [*relay_command(), "whoami"], capture_output=True, text=True, env=env, timeout=30
            )
            assert said.returncode == 0 and "operator" in said.stdout, said.stderr
