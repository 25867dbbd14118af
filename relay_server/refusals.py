"""Refused requests: limited per client address, and audited one record per address a minute.

Every 401 and 403 is audited (``auth.refused``). A client sending bad tokens as fast as it can
would otherwise write a row per request and slow every honest write behind it, so:

- refused authentications (401) spend a per-address token bucket; once it is empty, a request
  from that address is answered 429 rather than having its token looked up in the store, and a
  refused one 429 rather than 401 (a token the process already knows good needs no lookup, so
  an honest client behind the same address goes on);
- the first refusal from an address writes its record at once; further ones in the same minute
  are counted in memory, and the count is written onto that record when the minute is over.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

from relay_api import errors
from relay_core.services import Services
from relay_server.addresses import remote
from relay_server.app_keys import CALLER, REQUEST_ID
from relay_server.http_errors import RateLimited
from relay_server.ratelimit import TokenBucket

log = logging.getLogger("relay.server")

WINDOW_SECONDS = 60.0
MAX_TARGET = 200  # characters of "METHOD /path" kept in a record
MAX_OPEN_WINDOWS = 10_000


@dataclass
class _Window:
    opened: float
    action_id: int | None = None  # None while its record is being written, or if it failed
    count: int = 1


def _capped(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"


class Refusals:
    """The refusal limit and the folded audit of one process."""

    def __init__(
        self,
        services: Services,
        limit: TokenBucket,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._services = services
        self._limit = limit
        self._clock = clock
        self._windows: dict[str, _Window] = {}

    def check(self, request: web.Request) -> None:
        """Refuse (429) an address that spent its budget of refused authentications."""
        address = remote(request)
        try:
            self._limit.check(f"ip:{address}", address)
        except RateLimited:
            window = self._windows.get(address)
            if window is not None:
                window.count += 1
            raise

    async def refused(
        self, request: web.Request, exc: errors.RelayError, status: int
    ) -> RateLimited | None:
        """Audit a 401 or 403; for a 401 past the address's budget, the 429 to answer instead."""
        address = remote(request)
        over: RateLimited | None = None
        if isinstance(exc, errors.AuthenticationError):
            try:
                self._limit.take(f"ip:{address}", address)
            except RateLimited as limited:
                over = limited
        now = self._clock()
        window = self._windows.get(address)
        if window is not None and now - window.opened < WINDOW_SECONDS:
            window.count += 1
            return over
        # The new window is in place before anything is awaited (the old window's count, the
        # new record): refusals from the address meanwhile are counted on it, not given
        # records of their own.
        closed = [self._windows.pop(address)] if window is not None else []
        if len(self._windows) >= MAX_OPEN_WINDOWS:
            closed += self._take(lambda a, w: True)
        opened = self._windows[address] = _Window(now)
        for old in closed:
            await self._recount(old)
        await self._record(request, exc, status, address, opened)
        return over

    def _take(self, which: Callable[[str, _Window], bool]) -> list[_Window]:
        """Remove the windows ``which`` picks; they are closed, their counts to be written."""
        taken = [(a, w) for a, w in self._windows.items() if which(a, w)]
        for address, _ in taken:
            del self._windows[address]
        return [window for _, window in taken]

    async def _record(
        self,
        request: web.Request,
        exc: errors.RelayError,
        status: int,
        address: str,
        window: _Window,
    ) -> None:
        """Write the window's record (its first refusal; the count is written at its close)."""
        caller = request.get(CALLER)
        try:
            record = await self._services.actions.audit(
                agent_id=caller.name if caller else "anonymous",
                action="auth.refused",
                target=_capped(f"{request.method} {request.path}", MAX_TARGET),
                outcome=_capped(f"{status} {exc.code}: {exc.detail}", MAX_TARGET),
                params={
                    "status": status,
                    "request_id": request.get(REQUEST_ID, "-"),
                    "remote": address,
                    "x_agent_id": _capped(request.headers.get("X-Agent-ID") or "", 128) or None,
                    "count": 1,
                    "window_seconds": WINDOW_SECONDS,
                },
            )
        except Exception:  # the refusal stands even if its audit record cannot be written
            log.exception("could not audit a refused request")
            return
        window.action_id = record.action_id

    async def flush(self, *, everything: bool = False) -> None:
        """Write the counts of the windows that closed (all of them with ``everything``)."""
        now = self._clock()
        for window in self._take(lambda a, w: everything or now - w.opened >= WINDOW_SECONDS):
            await self._recount(window)

    async def _recount(self, window: _Window) -> None:
        if window.count > 1 and window.action_id is not None:
            try:
                await self._services.actions.recount(window.action_id, window.count)
            except Exception:
                log.exception("could not write the count of refused requests")

    async def flush_forever(self, interval: float = 5.0) -> None:
        """Write closed windows' counts every ``interval`` seconds; all of them when cancelled."""
        try:
            while True:
                await asyncio.sleep(interval)
                await self.flush()
        finally:
            await asyncio.shield(self.flush(everything=True))
