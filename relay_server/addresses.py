"""Which client sent a request: its address, as seen through the proxies the operator trusts.

Behind nginx every connection comes from nginx. Only a connection from a trusted proxy
(``RELAY_TRUSTED_PROXIES``) has its ``X-Forwarded-For`` believed, and then the client is the
nearest address in that header (all its lines as one list) that is not itself a trusted proxy:
anything further left was written by the client and could be anything. The address keys rate
limits and is what the audit and the access log record.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from aiohttp import web

from relay_server.app_keys import CLIENT_ADDRESS

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _address(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(value.strip().strip("[]"))
    except ValueError:
        return None


def trusted_proxy(address: str | None, proxies: Sequence[Network]) -> bool:
    """Whether ``address`` is one of the proxies the operator trusts."""
    parsed = _address(address) if address else None
    return parsed is not None and any(parsed in network for network in proxies)


def client_address(request: web.BaseRequest, proxies: Sequence[Network]) -> str:
    """The address of the client behind ``request``: the peer, unless the peer is a trusted
    proxy that forwarded it."""
    peer = request.remote or "unknown"
    if not proxies or not trusted_proxy(peer, proxies):
        return peer
    # Every X-Forwarded-For line is part of one list (a proxy may append a line of its own
    # after the client's), read from the right.
    lines = request.headers.getall("X-Forwarded-For", ())
    hops = [hop.strip() for line in lines for hop in line.split(",")]
    for hop in reversed([hop for hop in hops if hop]):
        if _address(hop) is None:
            return peer  # a hop that is no address: trust none further left
        if not trusted_proxy(hop, proxies):
            return hop
    return peer


class AddressSlots:
    """How many connections (or requests in flight) each client address holds, against a cap,
    so that one address cannot take every slot of the server."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._held: dict[str, int] = {}

    def take(self, address: str) -> bool:
        """Hold one slot for ``address``; False (and nothing held) when it has ``cap``."""
        held = self._held.get(address, 0)
        if held >= self.cap:
            return False
        self._held[address] = held + 1
        return True

    def give(self, address: str) -> None:
        """Let go of a slot ``take`` gave."""
        held = self._held.pop(address, 0) - 1
        if held > 0:
            self._held[address] = held


def remote(request: web.BaseRequest) -> str:
    """The client address the request was given on arrival (its peer if it has none yet)."""
    return request.get(CLIENT_ADDRESS) or request.remote or "unknown"
