"""Relay's HTTP server: aiohttp translating HTTP to and from ``relay_core``.

``Settings`` and ``create_app`` load on first use, so that ``relay_server.settings`` can be read
(by the CLI, for its flags) without loading aiohttp.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from relay_server.app import create_app
    from relay_server.settings import Settings

__all__ = ["Settings", "create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from relay_server.app import create_app

        return create_app
    if name == "Settings":
        from relay_server.settings import Settings

        return Settings
    raise AttributeError(f"module 'relay_server' has no attribute {name!r}")
