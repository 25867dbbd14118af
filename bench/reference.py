"""The bare aiohttp app Relay is measured against: the HTTP ceiling on this machine."""

from __future__ import annotations

import json
import sys

from aiohttp import web


async def small(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok", "items": [1, 2, 3]})


async def echo(request: web.Request) -> web.Response:
    body = json.loads(await request.read())
    return web.json_response({"received": len(body)}, status=201)


# Webhook deliveries taken (the bench's receiver is a bare app too).
hooked = 0


async def hook(request: web.Request) -> web.Response:
    global hooked
    await request.read()
    hooked += 1
    return web.Response(status=204)


async def hooks(request: web.Request) -> web.Response:
    return web.json_response({"hooked": hooked})


async def traces(request: web.Request) -> web.Response:
    """An OTLP/HTTP receiver that keeps nothing: the traced server's collector."""
    await request.read()
    return web.Response(body=b"", content_type="application/x-protobuf")


def main() -> None:
    app = web.Application()
    app.router.add_get("/small", small)
    app.router.add_post("/echo", echo)
    app.router.add_post("/hook", hook)
    app.router.add_get("/hooked", hooks)
    app.router.add_post("/v1/traces", traces)
    try:
        import uvloop  # type: ignore[import-not-found]

        uvloop.install()
    except ImportError:
        pass
    web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), access_log=None, print=None)


if __name__ == "__main__":
    main()
