"""Server-Sent Events: the event feed as a stream that a reconnecting client resumes."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

from aiohttp import web

from relay_api.errors import AuthenticationError
from relay_api.models import Event
from relay_server.connections import while_connected
from relay_server.validation import RequestInvalid

T = TypeVar("T")

KEEPALIVE = b": keep-alive\n\n"
KEEPALIVE_SECONDS = 15.0  # a stream quiet this long is sent a keep-alive (proxies' timeouts)
KEEPALIVE_TICK = 1.0  # how often the quiet streams are looked for


_EVENT_ID = re.compile(r"^[0-9]{1,19}$")  # ASCII digits only: str.isdigit() also takes "²"


def parse_last_event_id(value: str) -> int:
    """The cursor a reconnecting client sends back."""
    if not _EVENT_ID.match(value) or int(value) > 2**63 - 1:
        raise RequestInvalid(
            [{"type": "int_parsing", "loc": ["header", "last-event-id"], "msg": "not an event id"}]
        )
    return int(value)


def frame(event: Event) -> bytes:
    """One event as an SSE frame; its id is the cursor to resume from."""
    return (
        f"id: {event.event_id}\nevent: {event.kind}\ndata: {event.model_dump_json()}\n\n".encode()
    )


class KeepAlives:
    """Every open stream's keep-alive, from one timer of the process's: a stream quiet for
    ``seconds`` is sent a comment line, written without waking the task that serves it (a
    timer a stream was most of what idle streams cost: docs/performance.md)."""

    def __init__(self, seconds: float = KEEPALIVE_SECONDS) -> None:
        self.seconds = seconds
        # Each open stream, in the order they last said something: the quiet ones come first.
        self._said: dict[web.StreamResponse, tuple[web.Request, float]] = {}

    def said(self, request: web.Request, response: web.StreamResponse) -> None:
        self._said.pop(response, None)
        self._said[response] = (request, time.monotonic())

    def forget(self, response: web.StreamResponse) -> None:
        self._said.pop(response, None)

    def __len__(self) -> int:
        """How many streams it keeps alive."""
        return len(self._said)

    async def run(self) -> None:
        """Send the due keep-alives every ``KEEPALIVE_TICK`` seconds, until cancelled."""
        while True:
            await asyncio.sleep(min(KEEPALIVE_TICK, self.seconds))
            due = time.monotonic() - self.seconds
            quiet: list[tuple[web.StreamResponse, web.Request]] = []
            for response, (request, at) in self._said.items():
                if at > due:
                    break
                quiet.append((response, request))
            for response, request in quiet:
                self.said(request, response)
                # A stream whose client is not reading has frames on their way: no keep-alive
                # then, and no wait for its buffer to drain (the write below never waits).
                if request.protocol.writing_paused or request.transport is None:
                    continue
                try:
                    await response.write(KEEPALIVE)
                except ConnectionError:
                    self.forget(response)  # its own task sees the client gone and ends


async def stream_events(
    request: web.Request,
    events: AsyncIterator[T],
    until_revoked: Callable[[Awaitable[None]], Awaitable[None]],
    keepalives: KeepAlives,
    frame_of: Callable[[T], bytes],
) -> web.StreamResponse:
    """Send ``events``, each as ``frame_of`` writes it, until they end, the client leaves
    (noticed at once, not at the next frame), the server shuts down, or ``until_revoked`` says
    the caller's token was rotated: then a last ``unauthenticated`` frame, and the end.
    ``keepalives`` keeps it open while it is quiet."""
    response = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "X-Accel-Buffering": "no",  # nginx: pass frames through as they come
        }
    )
    await response.prepare(request)

    async def pump() -> None:
        async for event in events:
            await response.write(frame_of(event))
            keepalives.said(request, response)

    keepalives.said(request, response)
    try:
        await while_connected(request, until_revoked(pump()))
    except AuthenticationError as exc:
        body = json.dumps({"detail": exc.detail, "code": exc.code})
        await response.write(f"event: {exc.code}\ndata: {body}\n\n".encode())
    except ConnectionResetError:
        pass  # the client went away; it resumes with Last-Event-ID
    finally:
        keepalives.forget(response)
    return response
