"""The operator console: one static page (HTML, CSS, JS) that talks to the /v1 API.

It ships inside the package and needs no build step, CDN or network beyond the server itself.
"""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

PAGE = Path(__file__).with_name("index.html")
STATIC = Path(__file__).with_name("static")  # only the page's own files are served
# The page holds a bearer token in session storage: forbid framing and outside scripts.
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


async def console_page(request: web.Request) -> web.FileResponse:
    """The console's single page."""
    return web.FileResponse(PAGE, headers=HEADERS)


async def redirect_to_console(request: web.Request) -> web.Response:
    raise web.HTTPFound("/console")


def add_console(app: web.Application) -> None:
    """Serve the console at /console (and its files at /console/static/)."""
    app.router.add_get("/console", console_page, name="console")
    app.router.add_get("/console/", redirect_to_console)
    app.router.add_static("/console/static/", STATIC, name="console-static", show_index=False)
