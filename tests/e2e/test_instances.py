"""Several server processes over one PostgreSQL, as a deployment runs them; and shutdown."""

from __future__ import annotations

import asyncio
import itertools
import random
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourceUpdated
from standardwebhooks.webhooks import Webhook

from tests.live import LiveServer, free_port, live_server, relay_command
from tests.webhook_receiver import receiving

OPERATOR = "rly_op_shared-by-every-instance-0123456789"
pytestmark = pytest.mark.postgres


def instance(root: Path, database: str, **env: str) -> Any:
    root.mkdir(exist_ok=True)
    return live_server(root, RELAY_DATABASE_URL=database, RELAY_OPERATOR_TOKEN=OPERATOR, **env)


def http(server: LiveServer, token: str = OPERATOR) -> httpx.Client:
    return httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
    )


def register(server: LiveServer, agent_id: str) -> str:
    with http(server) as op:
        response = op.post("/v1/agents/register", json={"agent_id": agent_id})
        response.raise_for_status()
        return str(response.json()["token"])


def test_a_message_through_a_wakes_a_long_poll_on_b(tmp_path: Path, database: str) -> None:
    with instance(tmp_path / "a", database) as a, instance(tmp_path / "b", database) as b:
        bob = register(a, "bob")
        answer: dict[str, Any] = {}

        def poll() -> None:
            with http(b, bob) as client:
                response = client.get("/v1/agents/bob/inbox", params={"wait": 20})
                answer["body"], answer["at"] = response.json(), time.monotonic()

        poller = threading.Thread(target=poll)
        poller.start()
        time.sleep(1.0)  # the long-poll is waiting on B
        sent_at = time.monotonic()
        with http(a) as op:
            op.post("/v1/messages", json={"to": "bob", "text": "across"}).raise_for_status()
        poller.join(timeout=25)
        assert [m["text"] for m in answer["body"]["messages"]] == ["across"]
        assert answer["at"] - sent_at < 1.0


def test_a_token_rotated_on_a_is_refused_on_b_within_a_second(
    tmp_path: Path, database: str
) -> None:
    # B remembers bob's token after its first use; A's rotation must make B forget it.
    with instance(tmp_path / "a", database) as a, instance(tmp_path / "b", database) as b:
        old = register(a, "bob")
        with http(b, old) as client:
            assert client.get("/v1/agents").status_code == 200
        with http(a) as op:
            rotated = op.post("/v1/agents/register", json={"agent_id": "bob", "rotate_token": True})
            rotated.raise_for_status()
        rotated_at = time.monotonic()
        with http(b, old) as client:
            while client.get("/v1/agents").status_code != 401:
                assert time.monotonic() - rotated_at < 1.0, "B still accepts the rotated token"
                time.sleep(0.01)
        with http(b, rotated.json()["token"]) as client:
            assert client.get("/v1/agents").status_code == 200


def test_a_rotation_on_a_ends_the_old_tokens_long_poll_and_stream_on_b(
    tmp_path: Path, database: str
) -> None:
    with instance(tmp_path / "a", database) as a, instance(tmp_path / "b", database) as b:
        old = register(a, "bob")
        ended: dict[str, tuple[float, str]] = {}

        def poll() -> None:
            with http(b, old) as client:
                response = client.get("/v1/agents/bob/inbox", params={"wait": 20})
                ended["poll"] = (time.monotonic(), str(response.status_code))

        def stream() -> None:
            with http(b, old) as client, client.stream("GET", "/v1/events/stream") as response:
                last = "".join(response.iter_text())  # until the server ends it
                ended["stream"] = (time.monotonic(), last)

        waiting = [threading.Thread(target=poll), threading.Thread(target=stream)]
        for thread in waiting:
            thread.start()
        time.sleep(1.0)  # both wait on B
        with http(a) as op:
            op.post(
                "/v1/agents/register", json={"agent_id": "bob", "rotate_token": True}
            ).raise_for_status()
        rotated_at = time.monotonic()
        for thread in waiting:
            thread.join(timeout=25)
        assert ended["poll"][1] == "401"
        assert "event: unauthenticated" in ended["stream"][1]
        assert max(at for at, _ in ended.values()) - rotated_at < 1.0


def test_two_processes_of_sixteen_claimers_claim_each_task_once(
    tmp_path: Path, database: str
) -> None:
    with instance(tmp_path / "a", database) as a, instance(tmp_path / "b", database) as b:
        agents = [f"w{i}" for i in range(32)]
        tokens = {agent: register(a, agent) for agent in agents}
        with http(a) as op:
            task_ids = [
                op.post("/v1/tasks", json={"title": f"t{i}"}).json()["task_id"] for i in range(200)
            ]

        async def claimer(agent: str, server: LiveServer) -> list[int]:
            won: list[int] = []
            headers = {"Authorization": f"Bearer {tokens[agent]}"}
            async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=60) as c:
                while True:
                    listing = await c.get("/v1/tasks", params={"status": "open", "limit": 40})
                    open_ids = [t["task_id"] for t in listing.json()["tasks"]]
                    if not open_ids:
                        return won
                    task_id = random.choice(open_ids)
                    claim = await c.post(f"/v1/tasks/{task_id}/claim", json={"agent_id": agent})
                    assert claim.status_code in (200, 409), claim.text
                    if claim.status_code == 200:
                        won.append(task_id)

        async def everyone() -> list[list[int]]:
            return await asyncio.gather(
                *(claimer(agent, a if n < 16 else b) for n, agent in enumerate(agents))
            )

        claims = [task for won in asyncio.run(everyone()) for task in won]
        assert sorted(claims) == sorted(task_ids)  # every task once, none twice
        with http(b) as op:
            tasks = op.get("/v1/tasks").json()["tasks"]
        assert {t["status"] for t in tasks} == {"claimed"}
        assert {t["attempts"] for t in tasks} == {1}


def test_the_event_cursor_survives_a_restart_and_concurrent_writers(
    tmp_path: Path, database: str
) -> None:
    with instance(tmp_path / "b", database) as b:
        with instance(tmp_path / "a", database) as a, http(a) as op:
            for i in range(5):
                op.post("/v1/tasks", json={"title": f"before {i}"}).raise_for_status()
        with http(b) as reader:
            first = reader.get("/v1/events", params={"after": 0}).json()
        assert len(first["events"]) == 5

        # A restarts; meanwhile writers on both instances race while B's reader follows.
        with instance(tmp_path / "a", database) as a:
            stop = threading.Event()
            seen: list[int] = []

            def follow() -> None:
                cursor = first["cursor"]
                with http(b) as reader:
                    while True:
                        page = reader.get("/v1/events", params={"after": cursor, "wait": 1}).json()
                        seen.extend(e["event_id"] for e in page["events"])
                        cursor = page["cursor"]
                        if stop.is_set() and not page["events"]:
                            return

            follower = threading.Thread(target=follow)
            follower.start()

            async def write(server: LiveServer, n: int) -> None:
                async with httpx.AsyncClient(
                    base_url=server.url, headers={"Authorization": f"Bearer {OPERATOR}"}
                ) as c:
                    for i in range(n):
                        (await c.post("/v1/tasks", json={"title": f"t{i}"})).raise_for_status()

            async def writers() -> None:
                await asyncio.gather(*(write(s, 15) for s in (a, b, a, b)))

            asyncio.run(writers())
            stop.set()
            follower.join(timeout=30)

        with http(b) as reader:
            everything = reader.get("/v1/events", params={"after": first["cursor"], "limit": 1000})
        expected = [e["event_id"] for e in everything.json()["events"]]
        assert len(expected) == 60
        assert seen == expected  # no gap, no repeat, in order


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(lambda port: [*relay_command(), "serve", "--port", port], id="relay serve"),
        pytest.param(
            lambda port: [sys.executable, "-m", "relay_server", "--port", port],
            id="python -m relay_server",
        ),
    ],
)
def test_workers_share_one_port_and_stop_together(
    tmp_path: Path, database: str, command: Callable[[str], list[str]]
) -> None:
    import os
    import subprocess

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
    env |= {"RELAY_DATABASE_URL": database, "RELAY_DATA_DIR": str(tmp_path / "data")}
    log = tmp_path / "workers.log"
    with log.open("wb") as out:
        parent = subprocess.Popen(
            [*command(str(port)), "--workers", "2"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 30
        pids: set[str] = set()
        while len(pids) < 2 and time.monotonic() < deadline:
            try:
                httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
            except httpx.TransportError:
                time.sleep(0.2)
                continue
            pids = {
                line.split()[3]
                for line in log.read_text().splitlines()
                if "relay.server: storage postgresql" in line
            }
        assert len(pids) == 2, log.read_text()
        token = (tmp_path / "data" / "operator_token").read_text().strip()
        with httpx.Client(
            base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {token}"}
        ) as op:
            for _ in range(10):  # whichever worker answers knows the same token and database
                assert op.get("/v1/agents").status_code == 200
        # Metrics add up every worker's counts, whichever answers the scrape: requests on new
        # connections go to either worker, and every scrape counts all of them.
        auth = {"Authorization": f"Bearer {token}"}
        for _ in range(20):
            httpx.get(f"http://127.0.0.1:{port}/v1/tasks", headers=auth).raise_for_status()
        for _ in range(6):
            scraped = httpx.get(f"http://127.0.0.1:{port}/metrics", headers=auth).text
            assert 'relay_requests_total{operation="tasks.list",status="200"} 20.0' in scraped
        parent.send_signal(signal.SIGTERM)
        assert parent.wait(timeout=30) == 0
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


class _RoundRobin(httpx2.AsyncHTTPTransport):
    """A load balancer in the client: each request to the next instance in turn."""

    def __init__(self, ports: list[int]) -> None:
        super().__init__()
        self._ports = itertools.cycle(ports)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.url = request.url.copy_with(port=next(self._ports))
        return await super().handle_async_request(request)


async def test_an_mcp_session_goes_on_across_instances(tmp_path: Path, database: str) -> None:
    """/mcp keeps nothing in one process: one client's requests alternate between two
    instances, and the conversation goes on."""
    with (
        instance(tmp_path / "a", database) as a,
        instance(tmp_path / "b", database) as b,
    ):
        token = register(a, "mona")
        ports = [int(server.url.rsplit(":", 1)[1]) for server in (a, b)]
        http2 = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {token}"}, transport=_RoundRobin(ports)
        )
        async with http2, Client(streamable_http_client(f"{a.url}/mcp", http_client=http2)) as mcp:
            tools = {tool.name for tool in (await mcp.list_tools()).tools}
            assert "send_message" in tools
            for n in range(4):
                sent = await mcp.call_tool("send_message", {"to": "mona", "text": f"note {n}"})
                assert not sent.is_error, sent.content
            inbox = await mcp.call_tool("read_inbox", {})
            assert inbox.structured_content is not None
            texts = [m["text"] for m in inbox.structured_content["messages"]]
            assert texts == [f"note {n}" for n in range(4)]
        for server in (a, b):
            assert '"POST /mcp" 200' in server.log.read_text(), server.log


async def test_an_mcp_listener_on_one_instance_hears_of_mail_sent_through_another(
    tmp_path: Path, database: str
) -> None:
    with (
        instance(tmp_path / "a", database) as a,
        instance(tmp_path / "b", database) as b,
    ):
        token = register(a, "nora")
        headers = {"Authorization": f"Bearer {token}"}
        timeout = httpx2.Timeout(30, read=300)
        async with (
            httpx2.AsyncClient(headers=headers, timeout=timeout) as http2,
            Client(streamable_http_client(f"{a.url}/mcp", http_client=http2)) as mcp,
            mcp.listen(resource_subscriptions=["relay://inbox"]) as inbox,
        ):
            with http(b) as op:
                op.post("/v1/messages", json={"to": "nora", "text": "via b"}).raise_for_status()
            async with asyncio.timeout(20):
                event = await anext(aiter(inbox))
        assert isinstance(event, ResourceUpdated) and event.uri == "relay://inbox"


def test_two_instances_hold_a_policy_limit_and_expire_a_request_once(
    tmp_path: Path, database: str
) -> None:
    """A limit of 5 against 50 concurrent requests spread over two processes: exactly 5 are
    decided by it. A deadline passing with both sweeping: one expiry, one event. A wait on B
    wakes at a decision made on A."""
    with instance(tmp_path / "a", database) as a, instance(tmp_path / "b", database) as b:
        token = register(a, "ci-1")
        with http(a) as op:
            rule = {
                "name": "five",
                "decision": "approve",
                "limit": {"count": 5, "per_seconds": 600},
            }
            op.post("/v1/policies", json=rule).raise_for_status()

        def ask(n: int) -> str:
            with http(a if n % 2 else b, token) as agent:
                answer = agent.post("/v1/approvals", json={"title": f"t{n}"})
                assert answer.status_code == 201, answer.text
                return str(answer.json()["status"])

        with ThreadPoolExecutor(16) as pool:
            statuses = list(pool.map(ask, range(50)))
        assert statuses.count("approved") == 5 and statuses.count("pending") == 45

        with http(a, token) as agent:
            short = agent.post("/v1/approvals", json={"title": "soon", "expires_in": 1}).json()
            waiting = agent.post("/v1/approvals", json={"title": "wait"}).json()
        path = f"/v1/approvals/{short['approval_id']}"
        with http(b, token) as agent:
            expired = agent.get(path, params={"wait": 10}).json()
        assert expired["status"] == "expired" and expired["decided_by"] == "deadline"
        time.sleep(2.5)  # both instances' sweeps have had their turns
        with http(a) as op:
            feed = op.get("/v1/events", params={"after": 0, "limit": 1000}).json()["events"]
        decided = [
            e
            for e in feed
            if e["kind"] == "approval.decided" and e["subject_id"] == str(short["approval_id"])
        ]
        assert len(decided) == 1

        answer: dict[str, Any] = {}

        def wait_on_b() -> None:
            with http(b, token) as agent:
                started = time.monotonic()
                path = f"/v1/approvals/{waiting['approval_id']}"
                answer["body"] = agent.get(path, params={"wait": 20}).json()
                answer["waited"] = time.monotonic() - started

        waiter = threading.Thread(target=wait_on_b)
        waiter.start()
        time.sleep(1.0)
        with http(a) as op:
            op.post(f"/v1/approvals/{waiting['approval_id']}/approve", json={}).raise_for_status()
        waiter.join()
        assert answer["body"]["status"] == "approved"
        assert answer["waited"] < 3  # woken by A's decision, not by the end of the wait


def test_two_instances_make_each_webhook_attempt_once(tmp_path: Path, database: str) -> None:
    """Events written through both instances reach the receiver, each attempt made by one
    instance only: the receiver fails each delivery's first attempt, so every webhook-id comes
    exactly twice (a doubled attempt would come three or four times)."""
    fast = {"RELAY_WEBHOOKS_ALLOW_PRIVATE": "true", "RELAY_WEBHOOK_RETRY_SCHEDULE": "1,1"}
    with (
        receiving(fail_first=True) as receiver,
        instance(tmp_path / "a", database, **fast) as a,
        instance(tmp_path / "b", database, **fast) as b,
    ):
        with http(a) as op:
            made = op.post("/v1/webhooks", json={"url": receiver.url, "events": ["message.*"]})
        receiver.verifier = Webhook(made.json()["secret"])
        source = register(a, "source")
        register(b, "sink")
        sent = []
        for number in range(100):
            with http(a if number % 2 else b, source) as client:
                answer = client.post("/v1/messages", json={"to": "sink", "text": f"{number}"})
                sent.append(answer.json()["message_id"])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (
            len(receiver.seen) < len(sent) or min(receiver.attempts.values()) < 2
        ):
            time.sleep(0.1)
        time.sleep(1.5)  # a doubled attempt would have come by now
    assert receiver.forged == 0 and sorted(receiver.seen) == sorted(sent)
    assert set(receiver.attempts.values()) == {2}, receiver.attempts


def test_a_delivery_on_b_is_a_receipt_on_a(tmp_path: Path, database: str) -> None:
    """A session on B reads a message sent through A (as the channel does): its sender, on A,
    sees when it was delivered, in the message and on its feed."""
    with instance(tmp_path / "a", database) as a, instance(tmp_path / "b", database) as b:
        ann, bob = register(a, "ann"), register(a, "bob")
        with http(a, ann) as sender, http(b, bob) as session:
            head = sender.get("/v1/events").json()["cursor"]
            sent = sender.post("/v1/messages", json={"to": "bob", "text": "x"}).json()
            path = f"/v1/messages/{sent['message_id']}"
            assert session.get(path).json()["status"] == "delivered"
            receipt = sender.get(path).json()
            assert receipt["delivered_at"] is not None
            told = sender.get("/v1/events", params={"after": head, "wait": 5}).json()["events"]
            assert [e["kind"] for e in told] == ["message.delivered"]


def test_twenty_agents_on_two_instances_leave_one_holder_of_a_path(
    tmp_path: Path, database: str
) -> None:
    with instance(tmp_path / "a", database) as a, instance(tmp_path / "b", database) as b:
        agents = [f"editor-{i}" for i in range(20)]
        tokens = {agent: register(a, agent) for agent in agents}

        async def reserve(agent: str, server: LiveServer) -> int:
            headers = {"Authorization": f"Bearer {tokens[agent]}"}
            async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=60) as c:
                body = {"workspace": "github.com/acme/race", "paths": ["src/app.py"]}
                return (await c.post("/v1/reservations", json=body)).status_code

        async def everyone() -> list[int]:
            return await asyncio.gather(
                *(reserve(agent, a if n % 2 else b) for n, agent in enumerate(agents))
            )

        assert sorted(asyncio.run(everyone())) == [201] + [409] * 19
        with http(b) as op:
            held = op.get("/v1/reservations", params={"path": "src/app.py"}).json()
        assert len(held["reservations"]) == 1
