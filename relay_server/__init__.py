"""Relay's HTTP server: aiohttp translating HTTP to and from ``relay_core``."""

from relay_server.app import create_app
from relay_server.settings import Settings

__all__ = ["Settings", "create_app"]
