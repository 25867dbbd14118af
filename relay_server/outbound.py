"""Calls Relay makes to addresses its users name (webhook endpoints, external A2A agents):
only to public addresses, unless a setting allows the others (a receiver on this host).

A hostname is resolved once per connection, and only the public addresses that check found are
connected to, so a resolver that answers otherwise the next time (DNS rebinding) finds
nothing; a URL whose host is an IP address is checked by the caller (``literal_host``), since
aiohttp connects to it without resolving.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from aiohttp.abc import AbstractResolver, ResolveResult

from relay_core import webhooks as hooks


class PublicResolver(AbstractResolver):
    """aiohttp's resolver for calls to addresses users name: the host's addresses, looked up
    once and answered only when every one is public (``hooks.public_addresses``), so the
    connection goes to the address that was checked; a refusal names ``setting``, which allows
    the others."""

    def __init__(self, setting: str = hooks.WEBHOOKS_SETTING) -> None:
        self.setting = setting

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        return [
            ResolveResult(
                hostname=host,
                host=address,
                port=port,
                family=found_family,
                proto=0,
                flags=socket.AI_NUMERICHOST,
            )
            for found_family, address in await hooks.public_addresses(host, port, self.setting)
            if family in (socket.AF_UNSPEC, found_family)
        ]

    async def close(self) -> None:
        return None


def literal_host(url: str) -> bool:
    """Whether the URL's host is an IP address (aiohttp connects to it without resolving)."""
    try:
        ipaddress.ip_address(urlsplit(url).hostname or "")
    except ValueError:
        return False
    return True
