"""Cross-origin calls from web pages (``RELAY_CORS_ORIGINS``, off by default), with aio-libs'
``aiohttp-cors``: it answers preflights and adds the CORS headers on every route.

Credentials are bearer tokens in ``Authorization``, never cookies, so no origin is allowed to send
cookies; a page reads the headers a client of the API needs."""

from __future__ import annotations

import aiohttp_cors
from aiohttp import web

# What a page may send (beyond CORS' simple headers) and read.
ALLOWED_HEADERS = (
    "Authorization",
    "Content-Type",
    "Idempotency-Key",
    "X-Agent-ID",
    "Last-Event-ID",
)
EXPOSED_HEADERS = ("X-Request-ID", "Retry-After", "Idempotent-Replayed", "WWW-Authenticate")
PREFLIGHT_MAX_AGE = 600


def allow_origins(app: web.Application, origins: list[str]) -> None:
    """Let pages of ``origins`` call every route of ``app`` (call it once all are added)."""
    if not origins:
        return
    options = aiohttp_cors.ResourceOptions(  # type: ignore[no-untyped-call]
        allow_credentials=False,
        allow_headers=ALLOWED_HEADERS,
        expose_headers=EXPOSED_HEADERS,
        allow_methods=("GET", "POST"),
        max_age=PREFLIGHT_MAX_AGE,
    )
    cors = aiohttp_cors.setup(app, defaults=dict.fromkeys(origins, options))
    for route in list(app.router.routes()):
        if route.method in ("GET", "POST") and not isinstance(route.resource, web.StaticResource):
            cors.add(route)
