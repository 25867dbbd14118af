"""``python -m bench --live``: live agents holding event streams, and direct messages to them.

N agents registered through the API, each with its own token, each holding ``GET
/v1/events/stream`` open as a Claude Code channel or an SDK agent does; one sender posting
direct messages to recipients drawn at random, at a fixed rate. Every message is followed
from its POST's answer to its arrival on its recipient's stream (``message.created``) and
accounted for. Then the server restarts on its store, messages are sent while every stream is
away, and every stream comes back at once with its ``Last-Event-ID`` while the sender goes on
(the reconnect storm). Reported: delivery p50, p99 and maximum, messages lost and duplicated,
the server's resident memory before the streams, with a tenth of them and with all of them
open (per stream: the slope between the last two), idle and under load, its CPU with every
stream idle (keep-alives only), and how long the storm took and what the POSTs waited during
it. With ``--database``, the same on two instances sharing a scratch PostgreSQL database. The
streams are opened by this process, which raises its own file-descriptor limit to what it
needs (and says so); the servers' connection ceilings are raised by settings for the run.
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
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from bench.__main__ import OPERATOR, Process, cpu_us, relay, rss_mb, scratch_database

TEXT = "the build of the payments service is green again; merge when you are ready"


@dataclass
class Plan:
    """What one live run does."""

    streams: int
    rate: float  # messages a second
    seconds: float
    idle_seconds: float
    away_seconds: float  # sending while the server restarts and every stream is away
    storm_seconds: float  # sending while every stream comes back at once


@dataclass
class Stream:
    """One agent's stream: its token, the instance it is held on, and its cursor."""

    token: str
    instance: int
    last_id: int | None = None


@dataclass
class Deliveries:
    """When each message was answered, to whom, and when it reached its recipient's stream."""

    answered: dict[int, float] = field(default_factory=dict)
    recipient: dict[int, int] = field(default_factory=dict)
    arrived: dict[int, float] = field(default_factory=dict)
    duplicates: int = 0


@dataclass
class Sent:
    """One phase's messages: their ids and how long each POST took to be answered."""

    ids: list[int] = field(default_factory=list)
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
    session: aiohttp.ClientSession,
    url: str,
    stream: Stream,
    seen: Deliveries,
    opened: asyncio.Event,
) -> None:
    """One agent's event stream, resumed from its cursor (``Last-Event-ID``) when it has one:
    each message that reaches it noted as it arrives, until the server goes away. A refused
    or failed connection is tried again after a pause of up to a second, as a client does."""
    headers = {"Authorization": f"Bearer {stream.token}", "Accept": "text/event-stream"}
    if stream.last_id is not None:
        headers["Last-Event-ID"] = str(stream.last_id)
    while not opened.is_set():
        try:
            async with session.get(f"{url}/v1/events/stream", headers=headers) as response:
                if response.status != 200:
                    assert response.status in (502, 503), await response.text()
                    await asyncio.sleep(random.random())
                    continue
                opened.set()
                async for line in response.content:
                    if line.startswith(b"id: "):
                        stream.last_id = int(line[4:])
                    elif line.startswith(b"data: "):
                        event = json.loads(line[6:])
                        if event["kind"] == "message.created":
                            arrived(seen, int(event["subject_id"]))
        except aiohttp.ClientError:
            if opened.is_set():
                return  # the server went away
            await asyncio.sleep(random.random())


def arrived(seen: Deliveries, message_id: int) -> None:
    if message_id in seen.arrived:
        seen.duplicates += 1
    else:
        seen.arrived[message_id] = time.monotonic()


async def send(
    session: aiohttp.ClientSession,
    url: str,
    token: str,
    recipients: int,
    rate: float,
    seconds: float,
    seen: Deliveries,
) -> Sent:
    """Direct messages to recipients at random at ``rate`` for ``seconds``."""
    headers = {"Authorization": f"Bearer {token}"}
    start = time.monotonic()
    gate = asyncio.Semaphore(64)
    sent = Sent()

    async def one(n: int) -> None:
        await asyncio.sleep(max(0.0, start + n / rate - time.monotonic()))
        recipient = random.randrange(recipients)
        body = {"to": f"live-{recipient:05d}", "text": TEXT}
        async with gate:
            began = time.monotonic()
            async with session.post(f"{url}/v1/messages", json=body, headers=headers) as r:
                assert r.status == 201, await r.text()
                message_id = int((await r.json())["message_id"])
            answered = time.monotonic()
        seen.answered[message_id] = answered
        seen.recipient[message_id] = recipient
        sent.ids.append(message_id)
        sent.post_ms.append((answered - began) * 1000)

    await asyncio.gather(*(one(n) for n in range(int(rate * seconds))))
    return sent


async def arrival(seen: Deliveries, ids: list[int], within: float) -> None:
    """Wait until every one of ``ids`` has arrived, or ``within`` seconds (what has not arrived
    by then is lost). Only those still awaited are looked at again: this process also holds
    every stream, and its time is the measurement's."""
    deadline = time.monotonic() + within
    awaited = ids
    while awaited and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        awaited = [m for m in awaited if m not in seen.arrived]


def percentile(values: list[float], share: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def delivery(seen: Deliveries, sent: Sent, streams: list[Stream]) -> dict[str, Any]:
    """A phase's deliveries: how many arrived, and their times from answer to arrival, over all
    and on each instance."""
    delays: dict[int, list[float]] = {}
    for m in sent.ids:
        if m in seen.arrived:
            where = streams[seen.recipient[m]].instance
            delays.setdefault(where, []).append(max(0.0, seen.arrived[m] - seen.answered[m]) * 1e3)
    every = [d for on in delays.values() for d in on]
    figures: dict[str, Any] = {
        "sent": len(sent.ids),
        "arrived": len(every),
        "lost": len(sent.ids) - len(every),
        "delivery_p50_ms": percentile(every, 0.50),
        "delivery_p99_ms": percentile(every, 0.99),
        "delivery_max_ms": max(every, default=0.0),
        "post_median_ms": statistics.median(sent.post_ms) if sent.post_ms else 0.0,
        "post_p99_ms": percentile(sent.post_ms, 0.99),
    }
    if len(delays) > 1:
        for instance, on in sorted(delays.items()):
            figures[f"delivery_p99_ms_on_{INSTANCES[instance]}"] = percentile(on, 0.99)
    return figures


INSTANCES = "AB"


class Fleet:
    """The Relay instances the streams are held on, started (and restarted) on one store."""

    def __init__(self, start: Callable[[], list[Process]], postgresql: bool) -> None:
        self._start = start
        self.postgresql = postgresql
        self.servers = start()

    def restart(self) -> None:
        for server in self.servers:
            server.stop()
        self.servers = self._start()

    def stop(self) -> None:
        for server in self.servers:
            server.stop()

    def url(self, instance: int) -> str:
        return self.servers[instance].url

    def rss_mb(self) -> float:
        return sum(rss_mb(server.process.pid) for server in self.servers)

    def cpu_seconds(self) -> tuple[float, float]:
        """The instances' CPU time so far, and PostgreSQL's on this machine."""
        used = [cpu_us(server.process.pid) for server in self.servers]
        return sum(u[0] for u in used) / 1e6, used[0][1] / 1e6


async def measure(fleet: Fleet, plan: Plan) -> dict[str, Any]:
    """Open the streams, stay idle, send; then restart the server and let every stream come
    back at once while sending. Every figure of the run."""
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
    seen = Deliveries()
    result: dict[str, Any] = {"streams": plan.streams, "rate": plan.rate, "seconds": plan.seconds}
    instances = len(fleet.servers)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        tokens = await register(session, fleet.url(0), plan.streams + 1)
        sender = tokens[-1]
        streams = [Stream(token, n % instances) for n, token in enumerate(tokens[:-1])]
        tasks: list[asyncio.Task[None]] = []

        def open_streams(chosen: list[Stream]) -> list[asyncio.Event]:
            events = [asyncio.Event() for _ in chosen]
            tasks.extend(
                asyncio.create_task(hold(session, fleet.url(s.instance), s, seen, opened))
                for s, opened in zip(chosen, events, strict=True)
            )
            return events

        async def opening(chosen: list[Stream]) -> float:
            began = time.monotonic()
            await asyncio.wait_for(gather_set(open_streams(chosen)), 600)
            return time.monotonic() - began

        result["rss_before_mb"] = fleet.rss_mb()
        first = max(1, plan.streams // 10)
        result["opening_seconds"] = await opening(streams[:first])
        await asyncio.sleep(2)
        rss_tenth = fleet.rss_mb()
        result["opening_seconds"] += await opening(streams[first:])
        await asyncio.sleep(2)
        result["rss_idle_mb"] = fleet.rss_mb()
        result["rss_per_idle_stream_kb"] = (
            (result["rss_idle_mb"] - rss_tenth) / max(1, plan.streams - first) * 1024
        )
        cpu_before, db_before = fleet.cpu_seconds()
        await asyncio.sleep(plan.idle_seconds)
        cpu_after, db_after = fleet.cpu_seconds()
        result["idle_cpu_share_of_a_core"] = (cpu_after - cpu_before) / plan.idle_seconds
        if fleet.postgresql:
            result["idle_postgresql_share_of_a_core"] = (db_after - db_before) / plan.idle_seconds
        began = time.monotonic()
        load = await send(
            session, fleet.url(0), sender, plan.streams, plan.rate, plan.seconds, seen
        )
        result["sent_per_second"] = len(load.ids) / (time.monotonic() - began)
        result["rss_load_mb"] = fleet.rss_mb()
        await arrival(seen, load.ids, 10)
        result |= delivery(seen, load, streams)

        # The reconnect storm: the server restarts; messages are sent while every stream is
        # away; then every stream comes back at once with its Last-Event-ID while the sender
        # goes on. A stream that has heard nothing yet resumes from the newest id any heard.
        await asyncio.to_thread(fleet.restart)
        await asyncio.gather(*tasks, return_exceptions=True)
        tasks.clear()
        newest = max((s.last_id for s in streams if s.last_id is not None), default=0)
        for s in streams:
            s.last_id = newest if s.last_id is None else s.last_id
        away = await send(
            session, fleet.url(0), sender, plan.streams, plan.rate, plan.away_seconds, seen
        )
        began = time.monotonic()

        async def resume() -> tuple[float, float]:
            """Seconds until every stream is back, and until every message sent while they
            were away has arrived too."""
            await gather_set(open_streams(streams))
            back = time.monotonic() - began
            await arrival(seen, away.ids, 60)
            return back, time.monotonic() - began

        resuming = asyncio.create_task(resume())
        during = await send(
            session, fleet.url(0), sender, plan.streams, plan.rate, plan.storm_seconds, seen
        )
        back, resumed = await asyncio.wait_for(resuming, 600)
        result["storm_streams_back_seconds"] = back
        result["storm_resumed_seconds"] = resumed
        await arrival(seen, during.ids, 10)
        storm = delivery(seen, Sent(away.ids + during.ids, during.post_ms), streams)
        result |= {
            "storm_sent": storm["sent"],
            "storm_lost": storm["lost"],
            "storm_post_p99_ms": storm["post_p99_ms"],
        }
        result["duplicates"] = seen.duplicates
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return result


async def gather_set(events: list[asyncio.Event]) -> None:
    await asyncio.gather(*(e.wait() for e in events))


def _within(key: str, bound: float) -> Callable[[dict[str, Any]], bool]:
    return lambda r: key in r and r[key] <= bound


# (figure, what it is, whether it is met, the target), SQLite's; PostgreSQL's two instances
# are held to POSTGRESQL_TARGETS.
TARGETS: tuple[tuple[str, str, Callable[[dict[str, Any]], bool], str], ...] = (
    ("lost", "messages lost", lambda r: r["lost"] == 0 and r["duplicates"] == 0, "0"),
    ("delivery_p50_ms", "delivery p50", _within("delivery_p50_ms", 20), "≤ 20 ms"),
    ("delivery_p99_ms", "delivery p99", _within("delivery_p99_ms", 250), "≤ 250 ms"),
    ("rss_idle_mb", "resident memory, streams open", _within("rss_idle_mb", 1024), "≤ 1 GB"),
    (
        "rss_per_idle_stream_kb",
        "memory per idle stream",
        _within("rss_per_idle_stream_kb", 64),
        "≤ 64 KB",
    ),
    (
        "idle_cpu_share_of_a_core",
        "CPU, every stream idle",
        _within("idle_cpu_share_of_a_core", 0.02),
        "≤ 2% of a core",
    ),
    (
        "storm_resumed_seconds",
        "reconnect storm: every stream resumed, nothing missed,",
        lambda r: r["storm_lost"] == 0 and r["storm_resumed_seconds"] <= 60,
        "within 60 s",
    ),
    ("storm_post_p99_ms", "POST p99 during the storm", _within("storm_post_p99_ms", 1000), "≤ 1 s"),
)
POSTGRESQL_TARGETS: tuple[tuple[str, str, Callable[[dict[str, Any]], bool], str], ...] = (
    TARGETS[0],
    (
        "delivery_p99_ms_on_B",
        "delivery p99 to streams on instance B",
        _within("delivery_p99_ms_on_B", 500),
        "≤ 500 ms",
    ),
    TARGETS[-2],
    TARGETS[-1],
)


def main(
    smoke: bool,
    streams: int | None,
    rate: float | None,
    seconds: float | None,
    output: Path | None,
    database: str | None = None,
) -> int:
    """Run the live scenario on SQLite, or on two instances sharing a scratch database on the
    PostgreSQL server ``database`` names; print its figures against the targets."""
    plan = Plan(
        streams=streams or (100 if smoke else 10_000),
        rate=rate or (50.0 if smoke else 1000.0),
        seconds=seconds or (2.0 if smoke else 30.0),
        idle_seconds=2.0 if smoke else 30.0,  # two keep-alive intervals
        away_seconds=1.0 if smoke else 5.0,
        storm_seconds=1.0 if smoke else 10.0,
    )
    enough_files(plan.streams)
    ceiling = str(plan.streams + 1000)

    def instance(data_dir: Path, scratch: str | None = None) -> Process:
        # The shipped defaults (an access line a request), but for the connection ceilings.
        return relay(
            data_dir,
            scratch,
            RELAY_MAX_CONNECTIONS=ceiling,
            RELAY_MAX_CONNECTIONS_PER_ADDRESS=ceiling,
        )

    with tempfile.TemporaryDirectory(prefix="relay-live-") as tmp, ExitStack() as stack:
        work = Path(tmp)
        if database is None:
            targets = TARGETS
            fleet = Fleet(lambda: [instance(work / "sqlite")], postgresql=False)
        else:
            targets = POSTGRESQL_TARGETS
            scratch = stack.enter_context(scratch_database(database))
            fleet = Fleet(
                lambda: [instance(work / name, scratch) for name in INSTANCES.lower()],
                postgresql=True,
            )
        try:
            result = asyncio.run(measure(fleet, plan))
        finally:
            fleet.stop()
    result["backend"] = "sqlite" if database is None else "postgresql, two instances"
    checks = [
        {"target": f"{name} {bound}", "value": result.get(key), "met": bool(met(result))}
        for key, name, met, bound in targets
    ]
    for key, value in result.items():
        shown = (
            f"{value:,.2f}"
            if isinstance(value, float)
            else f"{value:,}"
            if isinstance(value, int)
            else value
        )
        print(f"{key:36} {shown}")
    for check in checks:
        print(f"{'met' if check['met'] else 'NOT MET':8} {check['target']}")
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps({"live": result, "targets": checks}, indent=1))
    return 0
