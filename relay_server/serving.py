"""Serving: one process, or ``--workers`` processes sharing a port over PostgreSQL.

Kept out of ``__main__`` so that worker processes, which ``multiprocessing`` starts by importing
the function they run, can import it: a package's ``__main__`` is not re-imported in a child.
"""

from __future__ import annotations

import asyncio
import errno
import gc
import importlib
import logging
import multiprocessing
import os
import signal
import socket
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from queue import SimpleQueue
from types import FrameType
from typing import BinaryIO, NoReturn

from aiohttp import web
from sqlalchemy.engine import make_url

from relay_api import __version__
from relay_api.errors import BridgeError, StorageUnavailable
from relay_core.paths import operator_token_path
from relay_core.storage.sqlite import SqliteStorage, serve_alone
from relay_server import connections
from relay_server.app import create_app, open_storage
from relay_server.logs import (
    TEXT,
    AccessLogger,
    Batches,
    EscapingFormatter,
    JsonFormatter,
    NoRequestBytes,
    Unformatted,
    log,
)
from relay_server.metrics import MULTIPROCESS_DIR
from relay_server.settings import MEMORY_URL, Settings, ensure_operator_token
from relay_server.tracing import Tracing

GC_THRESHOLD = 20_000  # allocations between young-generation collections (CPython's default: 700)


@contextmanager
def _logging(settings: Settings) -> Iterator[None]:
    """Log to stderr for the block; the lines are formatted and written off the request's path,
    in batches (``logs.Batches``), the last of them when the block ends."""
    handler = logging.StreamHandler(sys.stderr)
    if settings.log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(EscapingFormatter(TEXT))
    handler.addFilter(NoRequestBytes())
    # What no line shows, not looked up for every record (the logging HOWTO's "Optimization"):
    # the caller's file and line (a walk up the stack), the thread, the process's name.
    logging._srcfile = None
    logging.logThreads = False
    logging.logMultiprocessing = False
    queued = Unformatted(SimpleQueue())
    writer = Batches(queued, handler)
    logging.basicConfig(level=settings.log_level.upper(), handlers=[queued])
    logging.getLogger("alembic").setLevel(logging.WARNING)
    # httpx logs every request URL at INFO, and a Telegram URL carries the bot token.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    # asyncpg's pool logs each failed reconnection with a traceback; Relay says an outage once
    # a minute itself (logs.log_outage).
    logging.getLogger("asyncpg.pool").setLevel(logging.ERROR)
    writer.start()
    try:
        yield
    finally:
        writer.stop()


def _announce(settings: Settings, workers: int) -> None:
    url = settings.resolved_database_url
    shown = url if url == MEMORY_URL else make_url(url).render_as_string(hide_password=True)
    where = (
        "from RELAY_OPERATOR_TOKEN"
        if settings.operator_token is not None
        else f"in {operator_token_path(settings.data_dir)}"
    )
    processes = f"; {workers} worker processes" if workers > 1 else ""
    _say(
        settings,
        f"Relay {__version__} on http://{settings.host}:{settings.port} "
        f"(database {shown}; operator token {where}{processes})",
    )


def _say(settings: Settings, line: str, level: int = logging.INFO) -> None:
    """A line of the start's own: as written for a person reading a terminal, or a log record
    where the log is JSON, so that a shipper reads every line."""
    if settings.log_format == "json":
        log.log(level, line)
    else:
        print(line, file=sys.stderr, flush=True)


def new_event_loop() -> asyncio.AbstractEventLoop:
    """uvloop's event loop where it is installed (it is a dependency on Linux and macOS): its
    transports and timers cost a fraction of asyncio's; else asyncio's own."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


async def _settle_the_heap(app: web.Application) -> None:
    """Once started: what start-up built (modules, schemas, the route table) lives as long as
    the process, so the cyclic collector stops re-scanning it, and it runs less often. Request
    garbage is freed by reference counting; a full scan of a long-lived heap was a pause every
    few hundred requests."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_THRESHOLD, 10, 10)


def run_one(settings: Settings, *, reuse_port: bool = False) -> None:
    """One server process, until SIGINT/SIGTERM; then it answers long-polls, finishes in-flight
    requests (up to the shutdown timeout) and closes cleanly. Logging is configured by then."""
    app = create_app(settings, tracing=Tracing.from_environment())
    app.on_startup.append(_settle_the_heap)
    limits = connections.Limits(
        header_timeout=settings.http.header_timeout_seconds,
        max_connections=connections.fit_file_limit(settings.http.max_connections),
        per_address=settings.http.per_address,
        trusted_proxies=settings.http.trusted_proxies,
    )
    try:
        connections.run(
            app,
            limits,
            host=settings.host,
            port=settings.port,
            reuse_port=reuse_port,
            loop=new_event_loop(),
            access_log_class=AccessLogger,
            access_log=logging.getLogger("relay.access"),
            shutdown_timeout=settings.shutdown_timeout,
        )
    except BridgeError as exc:  # a platform refused at start (an encrypted Matrix room…)
        _refuse(settings, f"cannot start: {exc.detail}", 1)


def _worker(settings: Settings) -> None:
    with _logging(settings):  # a process of its own (spawned): nothing is inherited
        run_one(settings, reuse_port=True)


async def _prepare(settings: Settings) -> None:
    storage = await open_storage(settings)
    await storage.close()


def run_workers(settings: Settings, workers: int) -> int:
    """N processes sharing the port (SO_REUSEPORT) over one PostgreSQL; the exit status."""
    # Done once here rather than raced by every worker: the token file (the schema was
    # migrated by serve()).
    if settings.auth == "token":
        ensure_operator_token(settings)
    # Each worker writes its metrics to files here; a scrape of any of them adds all up.
    metrics_dir = tempfile.TemporaryDirectory(prefix="relay-metrics-")
    os.environ[MULTIPROCESS_DIR] = metrics_dir.name
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(target=_worker, args=(settings,), name=f"relay-worker-{n}")
        for n in range(workers)
    ]
    for process in processes:
        process.start()

    def forward(_signum: int, _frame: FrameType | None) -> None:
        for process in processes:
            if process.is_alive():
                process.terminate()  # SIGTERM: each worker shuts down gracefully

    signal.signal(signal.SIGTERM, forward)
    # Ctrl-C reaches every process of the terminal's group already; the parent just waits.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for process in processes:
        process.join()
    metrics_dir.cleanup()
    return max((process.exitcode or 0) for process in processes)


def _refuse(settings: Settings, message: str, status: int) -> NoReturn:
    _say(settings, f"relay: {message}", logging.ERROR)
    raise SystemExit(status)


def _extras_or_refuse(settings: Settings) -> None:
    """Refuse, in one line naming the install that brings it, an integration the settings or
    the environment turn on whose extra is not installed (PostgreSQL's driver, the
    OpenTelemetry SDK)."""
    from relay_server.tracing import wanted

    needed = []
    if settings.resolved_database_url.startswith("postgresql"):
        # Its driver, and the greenlet SQLAlchemy's asyncio runs it on.
        needed.append(("asyncpg", "postgres", "RELAY_DATABASE_URL names PostgreSQL"))
        needed.append(("greenlet", "postgres", "RELAY_DATABASE_URL names PostgreSQL"))
    if wanted(os.environ):
        needed.append(("opentelemetry.sdk.trace", "otel", "the OTEL_* variables ask for traces"))
    for module, extra, why in needed:
        try:
            importlib.import_module(module)
        except ImportError:
            # The distribution's installs are the CLI's to name (relay serve is its command).
            from relay_cli.install import install_command

            missing = f"{why}, and this install has no {module.split('.')[0]}"
            _refuse(settings, f"{missing}: {install_command(extra)}", 2)


def _port_or_refuse(settings: Settings) -> None:
    """Refuse, before anything is written, an address another process listens on."""
    try:
        infos = socket.getaddrinfo(settings.host, settings.port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        _refuse(settings, f"cannot listen on {settings.host}: {exc.strerror}", 1)
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        # As the server binds: a port left in TIME_WAIT by a server just stopped is free.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                _refuse(
                    settings,
                    f"port {settings.port} is in use; pass --port or stop the other server",
                    1,
                )
            _refuse(
                settings, f"cannot listen on {settings.host}:{settings.port}: {exc.strerror}", 1
            )


def _open_or_refuse(settings: Settings) -> BinaryIO | None:
    """Check that the database can be served before serving it: held alone (SQLite), opened
    and migrated. Whatever stops it is one line and a non-zero exit, not a traceback."""
    from relay_core.storage.migrate import UnknownRevision  # alembic: loaded to migrate anyway

    url = settings.resolved_database_url
    try:
        held = serve_alone(SqliteStorage.file_of(url)) if url.startswith("sqlite") else None
        asyncio.run(_prepare(settings))
    except StorageUnavailable as exc:
        _refuse(settings, f"cannot start: {exc.logged}", 1)
    except (OSError, UnknownRevision) as exc:
        _refuse(settings, f"cannot start: {exc}", 1)
    return held


def serve(settings: Settings, workers: int | None = None) -> None:
    """Run the server with the settings' number of workers (or ``workers``)."""
    with _logging(settings):
        _serve(settings, workers)


def _serve(settings: Settings, workers: int | None) -> None:
    count = workers or settings.workers
    if count > 1 and not settings.resolved_database_url.startswith("postgresql"):
        _refuse(
            settings,
            "--workers above 1 needs PostgreSQL (RELAY_DATABASE_URL=postgresql+asyncpg://…):"
            " SQLite and memory:// serve one process, so run one worker",
            2,
        )
    _extras_or_refuse(settings)
    _port_or_refuse(settings)
    held = _open_or_refuse(settings)
    _announce(settings, count)
    try:
        if count > 1:
            raise SystemExit(run_workers(settings, count))
        run_one(settings)
    finally:
        if held is not None:
            held.close()
