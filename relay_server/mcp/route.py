"""``/mcp``: Relay's MCP tools on the server's own port (Streamable HTTP), so that a remote agent
installs nothing. The same bearer tokens as the API: 401 without one; an agent's token gets the
agent tools, the operator's the operator's. Served when the ``mcp`` extra is installed.

The MCP SDK takes seconds to import, so the door (``mcp.asgi``) is loaded and started on the
first authenticated request, not when the server starts; it stops with the application.
"""

from __future__ import annotations

import asyncio
import importlib.util
from typing import TYPE_CHECKING

from aiohttp import web

from relay_core.hub import Hub
from relay_server.app_keys import MCP_DOOR, SERVICES, SETTINGS
from relay_server.authentication import authenticate

if TYPE_CHECKING:
    from relay_server.mcp.asgi import McpDoor


def available() -> bool:
    """Whether the MCP SDK and aiohttp-asgi can be imported (they are dependencies: an install
    that lost them serves no /mcp rather than failing)."""
    return all(importlib.util.find_spec(name) for name in ("mcp", "aiohttp_asgi"))


class LazyDoor:
    """The door, made and started once, on first use."""

    def __init__(self, confirm_decisions: bool) -> None:
        self._confirm_decisions = confirm_decisions
        self._door: McpDoor | None = None
        self._lock = asyncio.Lock()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def get(self, hub: Hub) -> McpDoor:
        async with self._lock:
            if self._door is None:
                from relay_server.mcp.asgi import McpDoor

                door, started = McpDoor(hub, self._confirm_decisions), asyncio.Event()
                self._task = asyncio.create_task(door.run(started, self._stop), name="mcp-door")
                await started.wait()
                self._door = door
        return self._door

    async def close(self) -> None:
        self._stop.set()
        if self._task is not None:
            await self._task


async def handle(request: web.Request) -> web.StreamResponse:
    """Authenticate as the API does, then hand the request to the caller's tool set."""
    services = request.app[SERVICES]
    caller = await authenticate(request, services)
    door = await request.app[MCP_DOOR].get(services.ctx.storage.hub)
    from relay_server.mcp.asgi import serve

    return await serve(door, caller, request)


def add_mcp(app: web.Application) -> None:
    """Route /mcp, and stop the door with the application."""
    confirm = not app[SETTINGS].mcp_operator_without_confirmation
    door = app[MCP_DOOR] = LazyDoor(confirm)

    async def stop(app: web.Application) -> None:
        await door.close()

    app.on_cleanup.append(stop)
    # POST only: the door is stateless, so it has no session to end (DELETE) and no stream of
    # its own to offer a client between requests (GET), which the protocol then answers 405.
    app.router.add_post("/mcp", handle, name="mcp")
