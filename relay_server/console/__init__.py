"""The operator console: one static page (HTML, CSS, JS) that talks to the /v1 API.

It ships inside the package and needs no build step, CDN or network beyond the server itself.
"""

from __future__ import annotations

import html
from pathlib import Path

from aiohttp import web

PAGE = Path(__file__).with_name("index.html")
# Where an approval's email links: the request, and one tap to decide it (bridges/email).
DECIDE_PAGE = Path(__file__).with_name("decide.html")
STATIC = Path(__file__).with_name("static")  # only the page's own files are served
# The page holds a bearer token in session storage: forbid framing and outside scripts.
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}
TOKEN_HINT = "{{token_hint}}"


def add_console(app: web.Application, token_hint: str) -> None:
    """Serve the console at /console (its files at /console/static/), with ``token_hint``
    telling the operator where this server's token is; ``/`` leads there."""
    page = PAGE.read_text().replace(TOKEN_HINT, html.escape(token_hint)).encode()

    async def console_page(request: web.Request) -> web.Response:
        return web.Response(body=page, content_type="text/html", charset="utf-8", headers=HEADERS)

    decide = DECIDE_PAGE.read_bytes()

    async def decide_page(request: web.Request) -> web.Response:
        return web.Response(body=decide, content_type="text/html", charset="utf-8", headers=HEADERS)

    async def to_console(request: web.Request) -> web.Response:
        raise web.HTTPFound("/console")

    async def favicon(request: web.Request) -> web.Response:
        raise web.HTTPMovedPermanently("/console/static/favicon.svg")

    app.router.add_get("/", to_console, name="root")
    app.router.add_get("/console", console_page, name="console")
    app.router.add_get("/console/", to_console)
    app.router.add_get("/console/decide", decide_page, name="console-decide")
    app.router.add_get("/favicon.ico", favicon)
    app.router.add_static("/console/static/", STATIC, name="console-static", show_index=False)
