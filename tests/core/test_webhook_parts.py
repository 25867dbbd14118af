"""The parts of a webhook delivery that need no server: the body's bound, which events an
endpoint takes, the retry delays, the refused addresses, the sealed secret."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from relay_api import models as m
from relay_core import webhooks as hooks

AT = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)


def test_an_event_body_is_the_feed_event_with_its_id() -> None:
    event = m.Event(
        event_id=7, kind="task.created", subject_id="3", data={"task_id": 3}, created_at=AT
    )
    assert json.loads(hooks.event_body(event)) == {
        "type": "task.created",
        "timestamp": "2026-11-26T12:00:00Z",
        "data": {"event_id": 7, "task_id": 3},
    }


def test_a_body_past_its_bound_is_cut_and_says_so() -> None:
    cut = json.loads(hooks.body("x.y", AT, {"id": 1, "text": "a" * 50_000}))["data"]
    assert cut["id"] == 1 and cut["truncated"] is True
    assert cut["text"].endswith("… (cut)") and len(cut["text"]) < 1_100
    many = {f"k{n}": "b" * 900 for n in range(40)} | {"id": 2}
    kept = json.loads(hooks.body("x.y", AT, many))["data"]
    assert kept == {"id": 2, "truncated": True}
    assert len(hooks.body("x.y", AT, many)) < hooks.MAX_DATA_BYTES


@pytest.mark.parametrize(
    ("patterns", "event_type", "taken"),
    [
        (["*"], "message.created", True),
        (["approval.*"], "approval.decided", True),
        (["approval.*"], "approvals.decided", False),
        (["task.created"], "task.completed", False),
        (["task.*", "message.created"], "message.created", True),
    ],
)
def test_an_endpoint_takes_the_events_it_names(
    patterns: list[str], event_type: str, taken: bool
) -> None:
    assert hooks.subscribed(patterns, event_type) is taken


def test_retries_follow_the_schedule_with_jitter_then_retry_after_capped() -> None:
    schedule = hooks.retry_schedule("5,300,1800")
    assert schedule == (5.0, 300.0, 1800.0)
    for attempts, base in ((1, 5.0), (2, 300.0), (3, 1800.0)):
        delay = hooks.next_delay(schedule, attempts, None)
        assert delay is not None and base * 0.9 <= delay <= base * 1.1
    assert hooks.next_delay(schedule, 4, None) is None  # four attempts made: failed
    assert hooks.next_delay(schedule, 1, 7200) == hooks.MAX_RETRY_AFTER
    assert hooks.next_delay(schedule, 1, 2) == 2


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://[::ffff:169.254.169.254]/",
        "http://100.64.0.1/",
        "http://224.0.0.1/",
        "http://[fc00::1]/",
        "http://no-such-host.invalid/",
    ],
)
async def test_non_public_addresses_are_refused(url: str) -> None:
    assert await hooks.address_refusal(url) is not None


async def test_a_public_address_passes() -> None:
    assert await hooks.address_refusal("http://93.184.215.14/") is None


def test_a_sealed_secret_opens_only_under_the_same_server_secret() -> None:
    secret = hooks.new_secret()
    sealed = hooks.SecretSeal(b"server one").seal(secret)
    assert secret not in sealed and secret.removeprefix("whsec_") not in sealed
    assert hooks.SecretSeal(b"server one").open(sealed) == secret
    assert hooks.SecretSeal(b"server two").open(sealed) is None
