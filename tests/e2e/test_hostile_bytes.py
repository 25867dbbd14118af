"""What a stranger's bytes do to the real server's log and figures: no header byte is ever
logged (so no token), nothing a client sends or fails to send makes a traceback, unreadable
requests are one line a minute per address, and a client that leaves mid-body is a 499."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.live import LiveServer, live_server
from tests.postgres_cluster import private_cluster


def _send(server: LiveServer, raw: bytes, *, read: bool = True) -> bytes:
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(raw)
        if not read:
            return b""
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except (TimeoutError, ConnectionResetError):
            pass
        return answer


def _figure(server: LiveServer, operation: str, status: int) -> float:
    op = {"Authorization": f"Bearer {server.operator_token}"}
    scraped = httpx.get(server.url + "/metrics", headers=op).text
    wanted = f'relay_requests_total{{operation="{operation}",status="{status}"}} '
    lines = [line for line in scraped.splitlines() if line.startswith(wanted)]
    return float(lines[0].split()[-1]) if lines else 0.0


def _stopped_log(server: LiveServer) -> str:
    server.process.terminate()
    server.process.wait(timeout=15)
    return server.log.read_text()


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_a_token_with_a_stray_byte_is_never_logged(tmp_path: Path, log_format: str) -> None:
    with live_server(tmp_path, RELAY_LOG_FORMAT=log_format) as server:
        token = server.operator_token.encode()
        # A token file with Windows line endings, a control byte, DEL after a real token.
        for stray in (b"\r", b"\x01", b"\x7f"):
            raw = b"GET /v1/agents HTTP/1.1\r\nHost: relay\r\nAuthorization: Bearer "
            answer = _send(server, raw + token + stray + b"\r\n\r\n")
            assert answer.startswith((b"HTTP/1.1 400", b"HTTP/1.0 400"))
            assert token not in answer
        log = _stopped_log(server)
    assert server.operator_token not in log
    assert "Traceback" not in log and "traceback" not in log
    (line,) = [line for line in log.splitlines() if "bad request" in line]
    assert "400 bad request from 127.0.0.1: a malformed line or header" in line
    assert "(2 more" not in line  # the two after it fall in the same minute: held back


def test_unreadable_requests_are_counted_and_logged_once_a_minute_per_address(
    tmp_path: Path,
) -> None:
    with live_server(tmp_path) as server:
        for _ in range(300):
            _send(server, b"GET /\x01 HTTP/1.1\r\nHost: relay\r\n\r\n")
        assert _figure(server, "unreadable", 400) == 300
        assert httpx.get(server.url + "/health").status_code == 200
        log = _stopped_log(server)
    assert "Traceback" not in log and "AssertionError" not in log, log[:3000]
    bad = [line for line in log.splitlines() if "bad request" in line]
    assert len(bad) == 1 and "a malformed URL" in bad[0], bad
    assert "\\x01" not in log and "GET /" not in "".join(bad)


def test_a_client_that_leaves_mid_body_is_a_499_without_a_traceback(tmp_path: Path) -> None:
    with live_server(tmp_path) as server:
        head = (
            b"POST /v1/enroll HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000\r\n\r\n"
        )
        for _ in range(3):
            _send(server, head + b'{"agent_id": "a', read=False)  # then closes
        deadline = time.monotonic() + 5
        while _figure(server, "enroll.request", 499) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _figure(server, "enroll.request", 499) == 3
        assert _figure(server, "enroll.request", 500) == 0
        log = _stopped_log(server)
    assert "Traceback" not in log and "internal error" not in log, log
    assert log.count('"POST /v1/enroll" 499') == 3


def test_postgresql_going_down_mid_request_is_503_and_one_warning(tmp_path: Path) -> None:
    with private_cluster() as cluster:
        with live_server(tmp_path, RELAY_DATABASE_URL=cluster.url, RELAY_RATE_LIMIT="0") as server:
            op = {"Authorization": f"Bearer {server.operator_token}"}
            with httpx.Client(base_url=server.url, headers=op, timeout=15) as client:
                client.post("/v1/agents/register", json={"agent_id": "bob"}).raise_for_status()
                statuses: list[int] = []

                def write_on() -> None:
                    with httpx.Client(base_url=server.url, headers=op, timeout=15) as writer:
                        for _ in range(150):
                            answer = writer.post("/v1/messages", json={"to": "bob", "text": "x"})
                            statuses.append(answer.status_code)
                            if answer.status_code == 503:
                                assert answer.headers["Retry-After"] == "1"
                                assert answer.json()["code"] == "storage_unavailable"

                writers = [threading.Thread(target=write_on) for _ in range(4)]
                for thread in writers:
                    thread.start()
                time.sleep(0.3)  # writes in flight, then a fast shutdown under them
                cluster.stop_fast()
                for thread in writers:
                    thread.join()
                assert set(statuses) <= {201, 503}, statuses
                assert 503 in statuses
                cluster.start()
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline:
                    again = client.post("/v1/messages", json={"to": "bob", "text": "back"})
                    if again.status_code == 201:
                        break
                    time.sleep(0.2)
                assert again.status_code == 201
            log = _stopped_log(server)
    assert "Traceback" not in log, log[:5000]
    assert log.count("storage unavailable") == 1, log[:5000]


def _open_waits(server: LiveServer) -> float:
    op = {"Authorization": f"Bearer {server.operator_token}"}
    scraped = httpx.get(server.url + "/metrics", headers=op).text
    return sum(
        float(line.split()[-1])
        for line in scraped.splitlines()
        if line.startswith("relay_open_waits{")
    )


def test_a_wait_ends_within_a_second_of_its_client_leaving(tmp_path: Path) -> None:
    with live_server(tmp_path) as server:
        op = {"Authorization": f"Bearer {server.operator_token}"}
        token = httpx.post(
            server.url + "/v1/agents/register", json={"agent_id": "waiter"}, headers=op
        ).json()["token"]
        agent = {"Authorization": f"Bearer {token}"}
        waits = [
            ("/v1/events?wait=50", op),  # the operator: no token rotation to watch
            ("/v1/events?wait=50", agent),
            ("/v1/agents/waiter/inbox?wait=50", agent),
            ("/v1/events/stream", agent),
        ]
        for path, headers in waits:
            with pytest.raises(httpx.TimeoutException):  # the client gives up after a second
                with httpx.stream("GET", server.url + path, headers=headers, timeout=1) as held:
                    for _ in held.iter_bytes():
                        pass
        deadline = time.monotonic() + 1.5
        while _open_waits(server) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _open_waits(server) == 0
        log = _stopped_log(server)
    assert "Traceback" not in log, log
    assert log.count(" 499 ") == 3, log  # the stream had answered 200 before it was left
    assert '"GET /v1/events/stream" 200 1' in log
