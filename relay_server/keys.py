"""Every ``web.AppKey`` of the application, in one place."""

from __future__ import annotations

from aiohttp import web

from relay_core.auth import Caller
from relay_core.services import Services
from relay_server.ratelimit import TokenBucket
from relay_server.settings import Settings

SETTINGS = web.AppKey("settings", Settings)
SERVICES = web.AppKey("services", Services)
REQUEST_ID = web.RequestKey("request_id", str)
CALLER = web.RequestKey("caller", Caller)
CLIENT_ADDRESS = web.RequestKey("client_address", str)
CALLER_LIMIT = web.AppKey("caller_limit", TokenBucket)
ENROLL_LIMIT = web.AppKey("enroll_limit", TokenBucket)
