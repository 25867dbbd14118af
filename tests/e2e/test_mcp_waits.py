"""Waits that end when their caller leaves, and tell it they go on: a cancelled
``wait_for_events`` ends the server's long-poll within a second, through the official client on
both doors and both protocol revisions; a long wait sends progress every 10 seconds."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager

import anyio
import pytest
from mcp import Client

from tests.e2e.test_mcp_http import connected
from tests.e2e.test_mcp_stdio import agent, data
from tests.live import LiveServer, agent_token, live_server

CANCEL_AFTER = 2.0
# The access line of a long-poll of the feed that ended because its client left.
LEFT = re.compile(r'"GET /v1/events" 499 (?P<ms>[\d.]+)ms op=events\.list caller=(?P<who>\S+)')


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("relay-mcp-waits")) as running:
        yield running


def left_after(server: LiveServer, who: str) -> list[float]:
    """How long each of ``who``'s abandoned long-polls had waited, in seconds."""
    found = LEFT.finditer(server.log.read_text())
    return [float(m["ms"]) / 1000 for m in found if m["who"] == who]


async def cancel_a_wait(client: Client) -> None:
    """Call ``wait_for_events(50)`` and give up on it after ``CANCEL_AFTER`` seconds, as a
    host does when its user presses Escape; then allow the server one second."""
    with anyio.move_on_after(CANCEL_AFTER):
        await client.call_tool("wait_for_events", {"wait_seconds": 50})
    await asyncio.sleep(1)


def opened(
    server: LiveServer, door: str, mode: str, who: str
) -> AbstractAsyncContextManager[Client]:
    if door == "stdio":
        return Client(agent(server, who), mode=mode)
    return connected(server.url, agent_token(server, who), mode)


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
@pytest.mark.parametrize("door", ["stdio", "http"])
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_cancelled_wait_ends_the_servers_long_poll_within_a_second(
    server: LiveServer, door: str, mode: str
) -> None:
    """2026-07-28 (auto) closes the call's stream; 2025 (legacy) sends
    ``notifications/cancelled``, which the stateless door matches to the call itself."""
    who = f"waiter-{door}-{mode}"
    async with opened(server, door, mode, who) as client:
        await cancel_a_wait(client)
        waited = left_after(server, who)
        # The session goes on after the cancelled call.
        assert data(await client.call_tool("whoami", {}))["agent_id"] == who
    assert len(waited) == 1, waited  # ended, and logged, before the second was over
    assert CANCEL_AFTER - 0.5 < waited[0] < CANCEL_AFTER + 1


async def test_a_long_wait_reports_progress_every_ten_seconds(server: LiveServer) -> None:
    seen: list[tuple[float, float]] = []
    started = time.monotonic()

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, time.monotonic() - started))

    async with Client(agent(server, "patient")) as client:
        page = await client.call_tool(
            "wait_for_events", {"wait_seconds": 21}, progress_callback=progress
        )
    assert data(page)["events"] == []
    assert [value for value, _ in seen] == [10, 20]
    (_, first), (_, second) = seen
    assert 9 < second - first < 11, seen
