"""Every ``web.AppKey`` of the application, in one place."""

from __future__ import annotations

from aiohttp import web

from relay_core.services import Services
from relay_server.settings import Settings

SETTINGS = web.AppKey("settings", Settings)
SERVICES = web.AppKey("services", Services)
REQUEST_ID = web.RequestKey("request_id", str)
