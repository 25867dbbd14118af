"""The hooks' own HTTP exchange (``relay_cli.hook_http``) against a real aiohttp server: every
way an answer's body may end, the server's refusal in its words, a server that is not there or
not HTTP, and a line break in a header never sent as a header of its own."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from aiohttp import web

from relay_cli.hook_http import Refused, Unreachable, Wire
from relay_client.config import ClientConfig

BIG = {"text": "x" * 300_000}  # over any buffer: read in many pieces


async def _length(request: web.Request) -> web.Response:
    seen = {
        "method": request.method,
        "path": request.path,
        "query": dict(request.query),
        "authorization": request.headers.get("Authorization"),
        "agent": request.headers.get("X-Agent-ID"),
        "body": await request.json() if request.can_read_body else None,
    }
    return web.json_response(seen)


async def _chunked(request: web.Request) -> web.StreamResponse:
    answer = web.StreamResponse(headers={"Content-Type": "application/json"})
    answer.enable_chunked_encoding()
    await answer.prepare(request)
    text = json.dumps(BIG).encode()
    for at in range(0, len(text), 70_001):
        await answer.write(text[at : at + 70_001])
    await answer.write_eof()
    return answer


async def _refused(request: web.Request) -> web.Response:
    detail = [{"msg": "must be one line", "loc": ["body", "title"]}]
    return web.json_response({"detail": detail}, status=422)


@pytest.fixture
async def server() -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_route("*", "/base/length", _length)
    app.router.add_get("/base/chunked", _chunked)
    app.router.add_post("/base/refused", _refused)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/base"
    finally:
        await runner.cleanup()


def wire(url: str, **given: Any) -> Wire:
    return Wire(ClientConfig.resolve(url, **given), 3.0)


async def called(url: str, *args: Any, given: dict[str, Any] | None = None, **kw: Any) -> Any:
    """``Wire.call`` in a thread: it blocks, and the server answers on this loop."""
    return await asyncio.to_thread(wire(url, **(given or {})).call, *args, **kw)


async def test_a_request_carries_its_body_query_and_identity(server: str) -> None:
    seen = await called(
        server,
        "POST",
        "/length",
        {"title": "ünïcode"},
        query={"limit": 5, "holder": None},
        wait=1,
        given={"token": "rly_ag_secret", "agent_id": "coder"},
    )
    assert seen == {
        "method": "POST",
        "path": "/base/length",
        "query": {"limit": "5", "wait": "1"},  # None left out
        "authorization": "Bearer rly_ag_secret",
        "agent": "coder",
        "body": {"title": "ünïcode"},
    }


async def test_a_chunked_answer_is_read_whole(server: str) -> None:
    assert await called(server, "GET", "/chunked") == BIG


async def test_a_refusal_says_the_servers_words_and_status(server: str) -> None:
    with pytest.raises(Refused) as refused:
        await called(server, "POST", "/refused", {})
    assert refused.value.status == 422
    assert str(refused.value) == "must be one line (HTTP 422)"
    with pytest.raises(Refused) as missing:
        await called(server, "GET", "/nowhere")
    assert missing.value.status == 404


async def test_a_line_break_in_a_header_is_never_sent(server: str) -> None:
    with pytest.raises(ValueError, match="line break"):
        await called(server, "GET", "/length", given={"token": "x\r\nX-Agent-ID: operator"})


def _listening(answer: Callable[[socket.socket], None]) -> tuple[str, Callable[[], None]]:
    """A socket that answers one connection with ``answer``: its URL, and how to wait for it."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        with listener:
            accepted, _ = listener.accept()
            with accepted:
                accepted.recv(65536)
                answer(accepted)

    return f"http://127.0.0.1:{port}", serve


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # No Content-Length, no chunks: the body ends when the server closes.
        (b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{"ok": true}', {"ok": True}),
        # A chunk extension and a trailer, as the standard allows.
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            b'4;ext=1\r\n{"ok\r\n8\r\n": true}\r\n0\r\nTrailer: x\r\n\r\n',
            {"ok": True},
        ),
    ],
)
async def test_every_end_of_a_body_is_read(raw: bytes, expected: Any) -> None:
    url, serve = _listening(lambda conn: conn.sendall(raw))
    served = asyncio.create_task(asyncio.to_thread(serve))
    assert await called(url, "GET", "/") == expected
    await served


@pytest.mark.parametrize(
    "raw",
    [
        b"SSH-2.0-OpenSSH_9.6\r\n",  # not HTTP
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{}",  # cut short
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",  # a chunk size
        b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n",  # past the bound
    ],
)
async def test_an_answer_that_is_not_http_is_unreachable(raw: bytes) -> None:
    url, serve = _listening(lambda conn: conn.sendall(raw))
    served = asyncio.create_task(asyncio.to_thread(serve))
    with pytest.raises(Unreachable, match="cannot reach"):
        await called(url, "GET", "/")
    await served


async def test_a_server_not_there_is_unreachable() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
    with pytest.raises(Unreachable, match=f"cannot reach http://127.0.0.1:{port}"):
        await called(f"http://127.0.0.1:{port}", "GET", "/v1/status")
