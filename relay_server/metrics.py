"""``/metrics``: what the server is doing, in Prometheus' text format (``prometheus-client``).

Counted as it happens: requests by operation and status with their latency, the waits held open
(long-polls, event streams), SQLite's group commits (units per commit and the COMMIT's time,
fsync included). Read at scrape time from the database: pending approvals, open tasks,
unacknowledged messages, agents online, and the notifications the operator's bridge sent and
failed to send (each kept as a row, so these count across restarts and processes).

A process serving alone counts requests in plain tallies read at scrape time (``Answered``).
With several worker processes (``relay serve --workers N``) each process writes its figures to
files in ``PROMETHEUS_MULTIPROC_DIR`` (set by the parent before it starts them) and a scrape,
whichever process answers it, adds them up.
"""

from __future__ import annotations

import bisect
import functools
import os
import time
from collections.abc import Iterator

from aiohttp import web
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.metrics_core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.utils import floatToGoString

from relay_api import models as m
from relay_server import pressure
from relay_server.app_keys import SERVICES
from relay_server.authentication import authenticate

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"

REQUESTS_HELP = "Requests answered, by operation and status"
LATENCY_HELP = "Time to answer, by operation (a stream: how long it stayed open)"
BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 30, 60)
MULTIPROCESS = MULTIPROCESS_DIR in os.environ
# With several workers their counts meet in prometheus-client's shared files; alone, a process
# counts in plain tallies (``Answered``). Unregistered: the files are read whatever registers.
REQUESTS = Counter("relay_requests", REQUESTS_HELP, ["operation", "status"], registry=None)
LATENCY = Histogram(
    "relay_request_duration_seconds", LATENCY_HELP, ["operation"], buckets=BUCKETS, registry=None
)
OPEN_WAITS = Gauge(
    "relay_open_waits",
    "Requests held open now: long-polls (wait > 0) and event streams",
    ["kind"],
    multiprocess_mode="livesum",
)
COMMIT_UNITS = Histogram(
    "relay_commit_batch_units",
    "Writes in one group commit (SQLite)",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512),
)
COMMIT_SECONDS = Histogram(
    "relay_commit_seconds",
    "Time of one group commit's COMMIT, fsync included (SQLite)",
    buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1),
)


def observe_commit(units: int, seconds: float) -> None:
    """Count one group commit of ``units`` writes that took ``seconds``."""
    COMMIT_UNITS.observe(units)
    COMMIT_SECONDS.observe(seconds)


class Count:
    """One request's place in the figures: begun as it arrives, ``done`` once answered (with
    ``status`` set by then; 500 if it never was). Under its operation, or ``other`` for a path
    outside the table, so a scan of random paths adds no series."""

    __slots__ = ("operation", "held", "started", "status")

    def __init__(self, request: web.Request, operation: str | None) -> None:
        self.operation: str = operation or "other"
        self.held = _held_open(request)
        if self.held is not None:
            OPEN_WAITS.labels(self.held).inc()
        self.started = time.perf_counter()
        self.status = 500

    def done(self) -> None:
        if self.held is not None:
            OPEN_WAITS.labels(self.held).dec()
        else:
            pressure.API.answered += 1
        seconds = time.perf_counter() - self.started
        if MULTIPROCESS:
            _counter(self.operation, self.status).inc()
            _latency(self.operation).observe(seconds)
        else:
            ANSWERED.count(self.operation, self.status, seconds)


def count_unreadable() -> None:
    """Count a request aiohttp could not read (it reaches no route): ``unreadable``, 400."""
    if MULTIPROCESS:
        _counter("unreadable", 400).inc()
    else:
        ANSWERED.count("unreadable", 400, 0.0)


class Answered:
    """Requests answered and their latency, as tallies kept on the event loop's thread and
    turned into Prometheus' families when scraped (on that thread too). prometheus-client takes
    a lock for each count and each of a histogram's sums: a fiftieth of a small request."""

    def __init__(self) -> None:
        self.requests: dict[tuple[str, int], int] = {}
        self.buckets: dict[str, list[int]] = {}  # per operation: answers in each bucket, +Inf last
        self.seconds: dict[str, float] = {}

    def count(self, operation: str, status: int, seconds: float) -> None:
        key = (operation, status)
        self.requests[key] = self.requests.get(key, 0) + 1
        buckets = self.buckets.get(operation)
        if buckets is None:
            buckets = self.buckets[operation] = [0] * (len(BUCKETS) + 1)
            self.seconds[operation] = 0.0
        buckets[bisect.bisect_left(BUCKETS, seconds)] += 1
        self.seconds[operation] += seconds

    def collect(self) -> Iterator[Metric]:
        """The families, as ``Counter`` and ``Histogram`` would expose them."""
        requests = CounterMetricFamily(
            "relay_requests", REQUESTS_HELP, labels=["operation", "status"]
        )
        for (operation, status), answered in self.requests.items():
            requests.add_metric([operation, str(status)], answered)
        yield requests
        latency = HistogramMetricFamily(
            "relay_request_duration_seconds", LATENCY_HELP, labels=["operation"]
        )
        for operation, buckets in self.buckets.items():
            total, cumulative = 0, []
            bounds = (*map(floatToGoString, BUCKETS), "+Inf")  # as Histogram writes ``le``
            for bound, answered in zip(bounds, buckets, strict=True):
                total += answered
                cumulative.append((bound, total))
            latency.add_metric([operation], cumulative, self.seconds[operation])
        yield latency


ANSWERED = Answered()
REGISTRY.register(ANSWERED)


# A labelled series is looked up under a lock on every call; these remember each one found
# (operations and statuses are bounded sets: paths outside the table count as ``other``).
@functools.cache
def _counter(operation: str, status: int) -> Counter:
    return REQUESTS.labels(operation, str(status))


@functools.cache
def _latency(operation: str) -> Histogram:
    return LATENCY.labels(operation)


def _held_open(request: web.Request) -> str | None:
    if request.path == "/v1/events/stream":
        return "stream"
    if "wait=" not in request.query_string:  # most requests: no query to parse
        return None
    wait = request.query.get("wait")
    try:
        return "long_poll" if wait is not None and float(wait) > 0 else None
    except ValueError:
        return None


async def scrape(request: web.Request) -> web.Response:
    """The figures, for the operator's token only (a scraper sends it as a bearer token)."""
    services = request.app[SERVICES]
    caller = await authenticate(request, services)
    caller.require_operator()
    counts = (await services.system.status(caller)).counts
    body = generate_latest(_counted()) + generate_latest(_depths(counts))
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})


def _counted() -> CollectorRegistry:
    if not MULTIPROCESS:
        return REGISTRY
    registry = CollectorRegistry()
    MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    return registry


def _depths(counts: m.StatusCounts) -> CollectorRegistry:
    """The database's figures now, read by whichever process answers the scrape."""
    registry = CollectorRegistry()
    for name, help_text, value in (
        ("relay_pending_approvals", "Approvals waiting for the operator", counts.pending_approvals),
        ("relay_open_tasks", "Tasks open to claim", counts.open_tasks),
        ("relay_unacked_messages", "Direct messages not acknowledged", counts.pending_messages),
        ("relay_agents", "Registered agents", counts.agents),
        ("relay_agents_online", "Agents seen within the presence window", counts.online_agents),
    ):
        Gauge(name, help_text, registry=registry).set(value)
    sent = Counter(
        "relay_bridge_notifications",
        "Notifications to the operator's platform, by outcome",
        ["outcome"],
        registry=registry,
    )
    sent.labels("sent").inc(counts.sent_notifications)
    sent.labels("failed").inc(counts.failed_notifications)
    return registry


def add_metrics(app: web.Application) -> None:
    """Route ``/metrics``."""
    app.router.add_get("/metrics", scrape, name="metrics")
