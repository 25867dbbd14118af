"""Connections: how long a client may take to send a request, and how many may be open.

aiohttp holds a connection until its keep-alive timeout (75 s) even while the client sends its
request head a byte at a time, and accepts connections until the process runs out of file
descriptors; then new ones are reset and even ``/health`` fails. So the server runs with:

- a header timeout: a request head must be complete within ``header_timeout`` seconds of a
  connection opening or of its first byte arriving, else the connection is closed;
- a connection ceiling: a connection opened while ``max_connections`` are open is answered
  ``503 unavailable`` (with ``Retry-After``) and closed, rather than reset;
- a cap per client address: a connection from an address that already holds ``per_address``
  is answered the same way, so one address cannot take every slot (a trusted proxy's
  connections are not capped here: ``middleware`` caps what it forwards per client address);
  a refused connection gets one second, not the header timeout, to send its request;
- a deadline for a request's whole body, applied where bodies are read
  (``validation.read_body``);
- the end of a wait when its client leaves: aiohttp lets a handler run on after its client
  disconnected, so a long-poll or a stream would hold its place until its wait was over;
  ``while_connected`` ends it with the connection.

The first three live in the protocol object aiohttp makes per connection, so this module runs
the server itself (``run``) instead of ``web.run_app``, with the same lifecycle: signals end it
gracefully, in-flight requests get the shutdown timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from aiohttp import web
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest
from aiohttp.web_runner import GracefulExit

from relay_server import metrics
from relay_server.addresses import AddressSlots, Network, trusted_proxy
from relay_server.middleware import PAST_ADDRESS_CAP, PAST_CEILING, unreadable_answer

log = logging.getLogger("relay.server")

T = TypeVar("T")

FILE_HEADROOM = 128  # descriptors kept free for the database, the log and the listening socket


@dataclass(frozen=True)
class Limits:
    """What one connection may take."""

    header_timeout: float
    max_connections: int
    per_address: int
    trusted_proxies: Sequence[Network] = ()


REFUSED_HEAD_TIMEOUT = 1.0  # seconds a refused connection gets to send the request to answer


class GuardedHandler(RequestHandler):
    """aiohttp's per-connection protocol, with the header timeout, the ceiling and the cap
    per address."""

    def __init__(
        self, manager: web.Server, limits: Limits, slots: AddressSlots, **kwargs: Any
    ) -> None:
        super().__init__(manager, **kwargs)
        self.limits = limits
        self.full: str | None = None  # why this connection is refused, if it is (middleware)
        self._slots = slots
        self._slot: str | None = None  # the address whose slot this connection holds
        self._head_timer: asyncio.TimerHandle | None = None
        self._lost: asyncio.Future[None] | None = None  # made by the first wait that asks

    def lost(self) -> asyncio.Future[None]:
        """Done once the connection is lost (already done if it was)."""
        if self._lost is None:
            self._lost = self._loop.create_future()
            if self.transport is None:
                self._lost.set_result(None)
        return self._lost

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Count the connection; start the clock on its first request head."""
        super().connection_made(transport)
        open_now = len(self._manager.connections) if self._manager is not None else 0
        peer = self.peer
        if open_now > self.limits.max_connections:
            self.full = PAST_CEILING
        elif trusted_proxy(peer, self.limits.trusted_proxies):
            pass
        elif self._slots.take(peer):
            self._slot = peer
        else:
            self.full = PAST_ADDRESS_CAP
        if self.full is not None:
            self._lingering_time = 0.0  # answered 503 and closed, not read on while it trickles
        self._start_head_clock()

    def data_received(self, data: bytes) -> None:
        """Feed the parser; a completed head stops the clock, a new head's first byte starts
        it."""
        heads = self._request_count
        super().data_received(data)
        if self._request_count != heads:
            self._stop_head_clock()
        elif not self._request_in_progress:
            self._start_head_clock()

    def connection_lost(self, exc: BaseException | None) -> None:
        """Forget the clock and give back the address's slot with the connection."""
        self._stop_head_clock()
        if self._slot is not None:
            self._slots.give(self._slot)
            self._slot = None
        if self._lost is not None and not self._lost.done():
            self._lost.set_result(None)
        super().connection_lost(exc)

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        """A request aiohttp could not read (a malformed or over-long line or header: 400) is
        counted (no route counts it) and answered as ``middleware.unreadable_answer`` says,
        without aiohttp's traceback, which quotes the bytes. Anything else as aiohttp answers
        it."""
        if not 400 <= status < 500:
            return super().handle_error(request, status, exc, message)
        metrics.count_unreadable()
        return unreadable_answer(request, exc, self.peer)

    @property
    def peer(self) -> str:
        """The connection's remote address (a request it could not read has no other)."""
        peername = self.transport.get_extra_info("peername") if self.transport else None
        return str(peername[0]) if peername else "unknown"

    def _start_head_clock(self) -> None:
        if self._head_timer is None:
            seconds = self.limits.header_timeout
            if self.full is not None:
                seconds = min(seconds, REFUSED_HEAD_TIMEOUT)
            self._head_timer = self._loop.call_later(seconds, self._head_too_slow)

    def _stop_head_clock(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if not self._request_in_progress and not self._messages:
            self.force_close()


async def while_connected(request: web.Request, work: Awaitable[T]) -> T:
    """``work``'s result, unless the client disconnects first: then ``work`` is cancelled and
    ConnectionResetError raised (answered 499). For requests that wait (long-polls, streams).
    Under a server that ``run`` did not start, ``work`` simply runs to its end."""
    protocol = request.protocol
    if not isinstance(protocol, GuardedHandler):
        return await work
    task = asyncio.ensure_future(work)
    lost = protocol.lost()
    try:
        await asyncio.wait((task, lost), return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    if task.cancelled():
        raise ConnectionResetError("the client left while the request waited")
    return task.result()


class GuardedServer:
    """aiohttp's connection manager, making ``GuardedHandler``s (everything else is its)."""

    def __init__(self, server: web.Server, limits: Limits) -> None:
        self._server = server
        self._limits = limits
        self._slots = AddressSlots(limits.per_address)

    def __call__(self) -> GuardedHandler:
        server = self._server
        return GuardedHandler(
            server, self._limits, self._slots, loop=server._loop, **server._kwargs
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._server, name)


class GuardedRunner(web.AppRunner):
    """An ``AppRunner`` whose sites accept connections through ``GuardedServer``."""

    def __init__(self, app: web.Application, limits: Limits, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self._limits = limits

    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        return GuardedServer(server, self._limits)  # type: ignore[return-value]


def fit_file_limit(max_connections: int) -> int:
    """Raise the process's file-descriptor limit to hold ``max_connections`` (up to the hard
    limit); the ceiling that fits what could be had."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = max_connections + FILE_HEADROOM
    if soft != resource.RLIM_INFINITY and soft < wanted:
        ceiling = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return max_connections
    fitted = max(1, soft - FILE_HEADROOM)
    log.warning(
        "RELAY_MAX_CONNECTIONS=%d does not fit the file limit (%d); serving %d at most",
        max_connections,
        soft,
        fitted,
    )
    return fitted


# Connections the kernel queues before they are accepted (capped by net.core.somaxconn): after a
# restart every stream reconnects at once, and at aiohttp's 128 the rest are dropped and retried
# by their clients one, three, seven seconds later.
LISTEN_BACKLOG = 4096


async def _serve(runner: GuardedRunner, host: str, port: int, reuse_port: bool) -> None:
    await runner.setup()
    try:
        site = web.TCPSite(
            runner, host, port, backlog=LISTEN_BACKLOG, reuse_port=reuse_port or None
        )
        await site.start()
        while True:
            await asyncio.sleep(3600)
    finally:
        await runner.cleanup()


def run(
    app: web.Application,
    limits: Limits,
    *,
    host: str,
    port: int,
    reuse_port: bool,
    loop: asyncio.AbstractEventLoop,
    **handler_args: Any,
) -> None:
    """Serve ``app`` until SIGINT or SIGTERM, then shut down gracefully (as ``web.run_app``
    does, with the limits above)."""
    runner = GuardedRunner(app, limits, handle_signals=True, **handler_args)
    main = loop.create_task(_serve(runner, host, port, reuse_port))
    try:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(main)
    except (GracefulExit, KeyboardInterrupt):
        pass
    finally:
        try:
            if not main.done():
                main.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    loop.run_until_complete(main)
        finally:
            pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
