"""Server-Sent Events: the event feed as a stream that a reconnecting client resumes."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable

from aiohttp import web

from relay_api.errors import AuthenticationError
from relay_api.models import Event
from relay_server.connections import while_connected
from relay_server.validation import RequestInvalid

KEEPALIVE = b": keep-alive\n\n"


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


async def stream_events(
    request: web.Request,
    events: AsyncIterator[Event | None],
    until_revoked: Callable[[Awaitable[None]], Awaitable[None]],
) -> web.StreamResponse:
    """Send ``events`` until the client leaves (noticed at once, not at the next frame), the
    server shuts down, or ``until_revoked`` says the caller's token was rotated: then a last
    ``unauthenticated`` frame, and the end."""
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
            await response.write(KEEPALIVE if event is None else frame(event))

    try:
        await while_connected(request, until_revoked(pump()))
    except AuthenticationError as exc:
        body = json.dumps({"detail": exc.detail, "code": exc.code})
        await response.write(f"event: {exc.code}\ndata: {body}\n\n".encode())
    except ConnectionResetError:
        pass  # the client went away; it resumes with Last-Event-ID
    return response
