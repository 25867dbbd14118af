"""/docs: the API reference, browsable. Swagger UI reads the server's own /openapi.json; its
files come from the openapi-ui-bundles package installed beside Relay (no CDN, nothing fetched
at run time), under the console's Content-Security-Policy."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from relay_server.console import HEADERS as CONSOLE_HEADERS

PAGE = Path(__file__).parent / "console" / "api-docs.html"
# The console's policy, with Swagger UI's icons (SVG as data: URLs in its stylesheet) let in.
HEADERS = {
    **CONSOLE_HEADERS,
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'none'",
}
# The two files the page loads, of those the package ships (other viewers, a standalone preset).
ASSETS = {
    "swagger-ui-bundle.js": "application/javascript",
    "swagger-ui.css": "text/css",
}


def add_api_docs(app: web.Application) -> None:
    """Serve the reference at /docs and its two Swagger UI files at /docs/<name>."""
    page = PAGE.read_bytes()
    loaded: dict[str, bytes] = {}  # read on first use: a server nobody asks never holds them

    async def docs_page(request: web.Request) -> web.Response:
        return web.Response(body=page, content_type="text/html", charset="utf-8", headers=HEADERS)

    async def asset(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in ASSETS:
            raise web.HTTPNotFound()
        if name not in loaded:
            loaded[name] = (_shipped() / name).read_bytes()
        return web.Response(
            body=loaded[name],
            content_type=ASSETS[name],
            headers={**HEADERS, "Cache-Control": "public, max-age=86400"},
        )

    app.router.add_get("/docs", docs_page, name="api-docs")
    app.router.add_get("/docs/{name}", asset, name="api-docs-asset")


def _shipped() -> Path:
    """Where openapi-ui-bundles keeps Swagger UI's files."""
    try:
        from openapi_ui_bundles import swagger_ui
    except ImportError:
        raise web.HTTPNotFound(text="Swagger UI's files are not installed") from None
    return Path(swagger_ui.static_path)
