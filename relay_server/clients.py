"""Which client sent a request: its address, as seen through the proxies the operator trusts.

Behind nginx every connection comes from nginx. Only a connection from a trusted proxy
(``RELAY_TRUSTED_PROXIES``) has its ``X-Forwarded-For`` believed, and then the client is the
nearest address in that header that is not itself a trusted proxy: anything further left was
written by the client and could be anything. The address keys rate limits and is what the audit
and the access log record.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from aiohttp import web

from relay_server.keys import CLIENT_ADDRESS

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _address(value: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(value.strip().strip("[]"))
    except ValueError:
        return None


def _trusted(address: str | None, proxies: Sequence[Network]) -> bool:
    parsed = _address(address) if address else None
    return parsed is not None and any(parsed in network for network in proxies)


def client_address(request: web.BaseRequest, proxies: Sequence[Network]) -> str:
    """The address of the client behind ``request``: the peer, unless the peer is a trusted
    proxy that forwarded it."""
    peer = request.remote or "unknown"
    if not proxies or not _trusted(peer, proxies):
        return peer
    hops = [hop.strip() for hop in request.headers.get("X-Forwarded-For", "").split(",")]
    for hop in reversed([hop for hop in hops if hop]):
        if _address(hop) is None:
            return peer  # a hop that is no address: trust none further left
        if not _trusted(hop, proxies):
            return hop
    return peer


def remote(request: web.BaseRequest) -> str:
    """The client address the request was given on arrival (its peer if it has none yet)."""
    return request.get(CLIENT_ADDRESS) or request.remote or "unknown"
