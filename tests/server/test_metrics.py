"""``/metrics``: Prometheus' text format, for the operator's token, with what was counted and
what the database holds now. Counters are the process's, so each test reads differences."""

from __future__ import annotations

import asyncio
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from tests.server.conftest import OPERATOR_TOKEN, Api


async def scrape(api: Api) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = await api.client.get(
        "/metrics", headers={"Authorization": f"Bearer {OPERATOR_TOKEN}"}
    )
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/plain; version=")
    text = await response.text()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def requests(seen: dict[Any, float], operation: str, status: str) -> float:
    return seen.get(("relay_requests_total", (("operation", operation), ("status", status))), 0)


async def test_only_the_operator_reads_metrics(api: Api) -> None:
    await api.agent("ada")
    assert (await api.client.get("/metrics")).status == 401
    as_ada = {"Authorization": f"Bearer {api.tokens['ada']}"}
    assert (await api.client.get("/metrics", headers=as_ada)).status == 403


async def test_requests_latency_commits_and_queue_depths(api: Api) -> None:
    await api.agent("bea")
    before = await scrape(api)
    for n in range(3):
        await api.post("/v1/messages", {"to": "bea", "text": f"m{n}"}, expect=201)
    await api.post("/v1/tasks", {"title": "open one"}, expect=201)
    await api.post("/v1/enroll", {"agent_id": "newcomer"}, token="", expect=201)
    await api.get("/v1/nowhere", expect=404)
    after = await scrape(api)
    assert requests(after, "messages.send", "201") - requests(before, "messages.send", "201") == 3
    assert requests(after, "other", "404") - requests(before, "other", "404") == 1
    sends = ("relay_request_duration_seconds_count", (("operation", "messages.send"),))
    assert after[sends] - before.get(sends, 0) == 3
    # The buckets as prometheus-client's Histogram writes them: cumulative, ``le`` as it spells.
    bucket_counts = [
        value
        for (name, labels), value in after.items()
        if name == "relay_request_duration_seconds_bucket"
        and ("operation", "messages.send") in labels
    ]
    bounds = {
        dict(labels)["le"]
        for name, labels in after
        if name == "relay_request_duration_seconds_bucket"
    }
    assert bounds == {"0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1"} | {
        "0.25",
        "0.5",
        "1.0",
        "2.5",
        "5.0",
        "30.0",
        "60.0",
        "+Inf",
    }
    assert bucket_counts == sorted(bucket_counts) and max(bucket_counts) == after[sends]
    assert after[("relay_unacked_messages", ())] == 3
    assert after[("relay_open_tasks", ())] == 1
    assert after[("relay_pending_approvals", ())] == 1
    assert after[("relay_agents", ())] == 1
    if api.db_path.exists():  # SQLite: its group commits are counted
        units = ("relay_commit_batch_units_sum", ())
        assert after[units] - before.get(units, 0) >= 5
        assert after[("relay_commit_seconds_count", ())] > before.get(
            ("relay_commit_seconds_count", ()), 0
        )


async def test_open_long_polls_are_counted_while_they_wait(api: Api) -> None:
    await api.agent("cid")
    waiting = ("relay_open_waits", (("kind", "long_poll"),))
    before = (await scrape(api)).get(waiting, 0)
    poll = asyncio.create_task(api.get("/v1/agents/cid/inbox", as_="cid", wait=10))
    for _ in range(100):
        if (await scrape(api)).get(waiting, 0) == before + 1:
            break
        await asyncio.sleep(0.02)
    else:
        raise AssertionError("the long-poll was never counted as open")
    await api.post("/v1/messages", {"to": "cid", "text": "wake"}, expect=201)
    assert [m["text"] for m in (await poll)["messages"]] == ["wake"]
    assert (await scrape(api)).get(waiting, 0) == before


async def test_notifications_sent_and_failed(api: Api) -> None:
    await api.agent("dot")
    await api.post("/v1/notify", {"text": "hello"}, as_="dot", expect=201)
    seen = await scrape(api)
    sent = ("relay_bridge_notifications_total", (("outcome", "sent"),))
    assert seen[sent] == 1
    assert seen[("relay_bridge_notifications_total", (("outcome", "failed"),))] == 0
