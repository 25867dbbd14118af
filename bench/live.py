"""``python -m bench --live``: live agents holding event streams, and direct messages to them.

N agents registered through the API, each with its own token, each holding ``GET
/v1/events/stream`` open as a Claude Code channel or an SDK agent does; one sender posting
direct messages to recipients drawn at random, at a fixed rate. Every message is followed
from its POST's answer to its arrival on its recipient's stream (``message.created``) and
accounted for. Reported: delivery p50, p99 and maximum, messages lost and duplicated, the
server's resident memory before the streams, with a tenth of them and with all of them open
(per stream: the slope between the last two), idle and under load, and the server's CPU with
every stream idle (keep-alives only). The streams are opened by this process, which raises its
own file-descriptor limit to what it needs (and says so); the server's connection ceilings are
raised by settings for the run.
"""

from __future__ import annotations

import asyncio
import json
import random
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from bench.__main__ import OPERATOR, Process, cpu_us, relay, rss_mb

TEXT = "the build of the payments service is green again; merge when you are ready"


@dataclass
class Plan:
    """What one live run does."""

    streams: int
    rate: float  # messages a second
    seconds: float
    idle_seconds: float


@dataclass
class Deliveries:
    """When each message was answered and when it reached its recipient's stream."""

    answered: dict[int, float] = field(default_factory=dict)
    arrived: dict[int, float] = field(default_factory=dict)
    duplicates: int = 0
    post_ms: list[float] = field(default_factory=list)


def enough_files(streams: int) -> int:
    """Raise this process's open-file limit to what ``streams`` connections need (up to the
    hard limit); the limit it now has."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = streams + 1024
    if soft < wanted:
        raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
        print(f"live: open-file limit raised from {soft} to {raised}", file=sys.stderr)
        soft = raised
    return soft


async def register(session: aiohttp.ClientSession, url: str, count: int) -> list[str]:
    """``count`` agents registered through the API; their tokens."""
    operator = {"Authorization": f"Bearer {OPERATOR}"}
    tokens: list[str] = [""] * count
    gate = asyncio.Semaphore(32)

    async def one(n: int) -> None:
        async with gate:
            body = {"agent_id": f"live-{n:05d}"}
            async with session.post(f"{url}/v1/agents/register", json=body, headers=operator) as r:
                assert r.status == 201, await r.text()
                tokens[n] = (await r.json())["token"]

    await asyncio.gather(*(one(n) for n in range(count)))
    return tokens


async def hold(
    session: aiohttp.ClientSession, url: str, token: str, seen: Deliveries, opened: asyncio.Event
) -> None:
    """One agent's event stream: each message that reaches it noted as it arrives."""
    headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
    async with session.get(f"{url}/v1/events/stream", headers=headers) as response:
        assert response.status == 200, await response.text()
        opened.set()
        async for line in response.content:
            if not line.startswith(b"data: "):
                continue
            event = json.loads(line[6:])
            if event["kind"] != "message.created":
                continue
            message_id = int(event["subject_id"])
            if message_id in seen.arrived:
                seen.duplicates += 1
            else:
                seen.arrived[message_id] = time.monotonic()


async def send(
    session: aiohttp.ClientSession,
    url: str,
    token: str,
    recipients: int,
    plan: Plan,
    seen: Deliveries,
) -> int:
    """Direct messages to recipients at random at ``plan.rate`` for ``plan.seconds``; how many
    were sent."""
    headers = {"Authorization": f"Bearer {token}"}
    count = int(plan.rate * plan.seconds)
    start = time.monotonic()
    gate = asyncio.Semaphore(64)

    async def one(n: int) -> None:
        await asyncio.sleep(max(0.0, start + n / plan.rate - time.monotonic()))
        body = {"to": f"live-{random.randrange(recipients):05d}", "text": TEXT}
        async with gate:
            began = time.monotonic()
            async with session.post(f"{url}/v1/messages", json=body, headers=headers) as r:
                assert r.status == 201, await r.text()
                message_id = int((await r.json())["message_id"])
            answered = time.monotonic()
        seen.answered[message_id] = answered
        seen.post_ms.append((answered - began) * 1000)

    await asyncio.gather(*(one(n) for n in range(count)))
    return count


def percentile(values: list[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def measure(server: Process, plan: Plan) -> dict[str, Any]:
    """Open the streams, stay idle, then send; every figure of the run."""
    pid = server.process.pid
    url = server.url
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
    seen = Deliveries()
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        tokens = await register(session, url, plan.streams + 1)
        sender, holders = tokens[-1], tokens[:-1]
        rss_before = rss_mb(pid)
        first = max(1, plan.streams // 10)
        tasks: list[asyncio.Task[None]] = []

        async def open_streams(chosen: list[str]) -> float:
            began = time.monotonic()
            events = [asyncio.Event() for _ in chosen]
            tasks.extend(
                asyncio.create_task(hold(session, url, token, seen, opened))
                for token, opened in zip(chosen, events, strict=True)
            )
            await asyncio.wait_for(asyncio.gather(*(e.wait() for e in events)), 600)
            return time.monotonic() - began

        opening = await open_streams(holders[:first])
        await asyncio.sleep(2)
        rss_tenth = rss_mb(pid)
        opening += await open_streams(holders[first:])
        await asyncio.sleep(2)
        rss_idle = rss_mb(pid)
        cpu_before, _ = cpu_us(pid)
        await asyncio.sleep(plan.idle_seconds)
        cpu_after, _ = cpu_us(pid)
        idle_core = (cpu_after - cpu_before) / 1e6 / plan.idle_seconds
        began = time.monotonic()
        sent = await send(session, url, sender, plan.streams, plan, seen)
        sending = time.monotonic() - began
        rss_load = rss_mb(pid)
        deadline = time.monotonic() + 10  # what has not arrived by then is lost
        while (
            len(seen.arrived.keys() & seen.answered.keys()) < sent and time.monotonic() < deadline
        ):
            await asyncio.sleep(0.05)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    delays = [
        max(0.0, (seen.arrived[m] - answered) * 1000)
        for m, answered in seen.answered.items()
        if m in seen.arrived
    ]
    per_stream = (rss_idle - rss_tenth) / max(1, plan.streams - first) * 1024
    return {
        "streams": plan.streams,
        "rate": plan.rate,
        "seconds": plan.seconds,
        "sent": sent,
        "sent_per_second": sent / sending,
        "arrived": len(delays),
        "lost": sent - len(delays),
        "duplicates": seen.duplicates,
        "delivery_p50_ms": percentile(delays, 0.50),
        "delivery_p99_ms": percentile(delays, 0.99),
        "delivery_max_ms": max(delays, default=0.0),
        "post_p99_ms": percentile(seen.post_ms, 0.99),
        "post_median_ms": statistics.median(seen.post_ms) if seen.post_ms else 0.0,
        "opening_seconds": opening,
        "rss_before_mb": rss_before,
        "rss_idle_mb": rss_idle,
        "rss_load_mb": rss_load,
        "rss_per_idle_stream_kb": per_stream,
        "idle_cpu_share_of_a_core": idle_core,
    }


TARGETS = (
    ("lost", "messages lost", lambda r: r["lost"] == 0 and r["duplicates"] == 0, "0"),
    ("delivery_p50_ms", "delivery p50", lambda r: r["delivery_p50_ms"] <= 20, "≤ 20 ms"),
    ("delivery_p99_ms", "delivery p99", lambda r: r["delivery_p99_ms"] <= 250, "≤ 250 ms"),
    ("rss_idle_mb", "resident memory, streams open", lambda r: r["rss_idle_mb"] <= 1024, "≤ 1 GB"),
    (
        "rss_per_idle_stream_kb",
        "memory per idle stream",
        lambda r: r["rss_per_idle_stream_kb"] <= 64,
        "≤ 64 KB",
    ),
    (
        "idle_cpu_share_of_a_core",
        "CPU, every stream idle",
        lambda r: r["idle_cpu_share_of_a_core"] <= 0.02,
        "≤ 2% of a core",
    ),
)


def main(
    smoke: bool, streams: int | None, rate: float | None, seconds: float | None, output: Path | None
) -> int:
    """Run the live scenario on SQLite; print its figures against the targets."""
    plan = Plan(
        streams=streams or (100 if smoke else 10_000),
        rate=rate or (50.0 if smoke else 1000.0),
        seconds=seconds or (2.0 if smoke else 30.0),
        idle_seconds=2.0 if smoke else 10.0,
    )
    enough_files(plan.streams)
    ceiling = str(plan.streams + 1000)
    with tempfile.TemporaryDirectory(prefix="relay-live-") as tmp:
        # The shipped defaults (an access line a request), but for the connection ceilings.
        server = relay(
            Path(tmp) / "data",
            RELAY_MAX_CONNECTIONS=ceiling,
            RELAY_MAX_CONNECTIONS_PER_ADDRESS=ceiling,
        )
        try:
            result = asyncio.run(measure(server, plan))
        finally:
            server.stop()
    checks = [
        {"target": f"{name} {bound}", "value": result[key], "met": bool(met(result))}
        for key, name, met, bound in TARGETS
    ]
    for key, value in result.items():
        shown = f"{value:,.2f}" if isinstance(value, float) else f"{value:,}"
        print(f"{key:28} {shown}")
    for check in checks:
        print(f"{'met' if check['met'] else 'NOT MET':8} {check['target']}")
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps({"live": result, "targets": checks}, indent=1))
    return 0
