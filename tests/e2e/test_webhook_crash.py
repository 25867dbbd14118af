"""kill -9 during a burst of events loses no webhook delivery: every event is delivered at least
once, and a delivery made again carries the same ``webhook-id``.

Messages are sent (with retry keys, retried across the crash) while the server delivers each
``message.created`` to a receiver that verifies every request with the ``standardwebhooks``
package; the server is killed with SIGKILL mid-burst and started again on the same database.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import httpx
from standardwebhooks.webhooks import Webhook

from tests.e2e.test_crash import Restartable
from tests.webhook_receiver import Receiver, receiving

MESSAGES = 300


def send(server: Restartable, token: str, number: int) -> int:
    """A message sent with a retry key, through any crash; its id."""
    key = f"burst-message-{number:08d}"
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": key}
    body = {"to": "sink", "text": f"event {number}"}
    while True:
        try:
            answer = httpx.post(f"{server.url}/v1/messages", json=body, headers=headers, timeout=5)
        except httpx.TransportError:
            time.sleep(0.05)
            continue
        if answer.status_code == 201:
            return int(answer.json()["message_id"])
        assert answer.status_code >= 500, answer.text
        time.sleep(0.05)


def test_sigkill_mid_burst_loses_no_delivery(tmp_path: Path) -> None:
    server = Restartable(tmp_path, RELAY_WEBHOOKS_ALLOW_PRIVATE="true")
    with receiving() as receiver:
        deliver_a_burst(server, receiver)


def deliver_a_burst(server: Restartable, receiver: Receiver) -> None:
    """Send ``MESSAGES`` messages, the server killed and started again at a random one of them,
    and check that ``receiver`` got each one's event, always with its delivery's webhook-id."""
    server.start()
    try:
        operator = (server.data_dir / "operator_token").read_text().strip()
        op = {"Authorization": f"Bearer {operator}"}
        made = httpx.post(
            f"{server.url}/v1/webhooks",
            json={"url": receiver.url, "events": ["message.created"]},
            headers=op,
        ).json()
        receiver.verifier = Webhook(made["secret"])
        tokens = {
            name: httpx.post(
                f"{server.url}/v1/agents/register", json={"agent_id": name}, headers=op
            ).json()["token"]
            for name in ("source", "sink")
        }
        killed_at = random.randrange(MESSAGES // 4, 3 * MESSAGES // 4)
        sent = []
        for number in range(MESSAGES):
            if number == killed_at:
                server.kill()
                server.start()
            sent.append(send(server, tokens["source"], number))

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(receiver.seen) < len(set(sent)):
            time.sleep(0.1)
        listed = httpx.get(
            f"{server.url}/v1/webhooks/{made['webhook_id']}/deliveries",
            params={"limit": 1000},
            headers=op,
        ).json()["deliveries"]
    finally:
        server.stop()
    assert receiver.forged == 0
    assert set(receiver.seen) == set(sent), sorted(set(sent) - set(receiver.seen))[:10]
    # Sent again or not, each event came with one webhook-id: its delivery's.
    assert all(len(ids) == 1 for ids in receiver.seen.values())
    assert len(listed) == len(set(sent))
    assert {d["message_id"] for d in listed} == {next(iter(i)) for i in receiver.seen.values()}
