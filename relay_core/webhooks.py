"""What a webhook delivery is made of, to the Standard Webhooks 1.0 specification: the signing
secret (made, sealed at rest, opened), the signature, which events an endpoint takes, the body
of an event, when a failed attempt is tried again, and which addresses are refused.

The secret is the endpoint's to verify with, so Relay must be able to read it back: it is kept
sealed (AES-GCM) under a key derived from the server's own secret (``SecretSeal``), never in
the clear, in the database, its backups or the logs.
"""

from __future__ import annotations

import asyncio
import base64
import fnmatch
import hashlib
import hmac
import ipaddress
import json
import os
import random
import socket
from collections.abc import Sequence
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from relay_api import models as m

SECRET_PREFIX = "whsec_"
TEST_EVENT = "webhook.test"
# The body's ``data`` at most (the specification's advice is to keep payloads small).
MAX_DATA_BYTES = 20_000
# A string of an event cut to fit, and what it says of the cut.
KEPT_CHARACTERS = 1_000
_NONCE_BYTES = 12
# The spread of a retry's delay, each way, so that endpoints failed together are not retried
# together.
JITTER = 0.1
# The longest wait a receiver's Retry-After is followed for.
MAX_RETRY_AFTER = 3600.0


def new_secret() -> str:
    """A signing secret: ``whsec_`` and 32 random bytes in base64."""
    return SECRET_PREFIX + base64.b64encode(os.urandom(32)).decode()


def signature(secret: str, message_id: str, timestamp: int, body: str) -> str:
    """``v1,`` and the HMAC-SHA256 of ``{id}.{timestamp}.{body}`` under the secret's bytes."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{message_id}.{timestamp}.{body}".encode()
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def signatures(secrets: Sequence[str], message_id: str, timestamp: int, body: str) -> str:
    """The ``webhook-signature`` header: one signature per secret, space-separated (during a
    rotation, the new secret's and the old one's)."""
    return " ".join(signature(secret, message_id, timestamp, body) for secret in secrets)


class SecretSeal:
    """Seals signing secrets for the database under a key derived from the server's own
    secret (the operator token, shared by every instance)."""

    def __init__(self, server_secret: bytes) -> None:
        hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"relay webhook seal")
        self._aead = AESGCM(hkdf.derive(server_secret))

    def seal(self, secret: str) -> str:
        """``secret`` encrypted, as text for the database."""
        nonce = os.urandom(_NONCE_BYTES)
        return base64.b64encode(nonce + self._aead.encrypt(nonce, secret.encode(), None)).decode()

    def open(self, sealed: str) -> str | None:
        """The secret ``seal`` sealed, or None when it does not open (the server's secret
        changed since: the endpoint needs a new one, ``rotate-secret``)."""
        raw = base64.b64decode(sealed)
        try:
            return self._aead.decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], None).decode()
        except InvalidTag:
            return None


def subscribed(patterns: Sequence[str], event_type: str) -> bool:
    """Whether an endpoint subscribed to ``patterns`` takes events of ``event_type`` (``*``
    stands for any run of characters: ``approval.*``, ``*``)."""
    return any(fnmatch.fnmatchcase(event_type, pattern) for pattern in patterns)


def event_body(event: m.Event) -> str:
    """What a delivery of ``event`` sends: its type, when it happened, and what the feed says of
    it (ids and states), within ``MAX_DATA_BYTES``."""
    return body(event.kind, event.created_at, {"event_id": event.event_id, **event.data})


def body(event_type: str, at: datetime, data: dict[str, Any]) -> str:
    """A delivery's body, its ``data`` cut to ``MAX_DATA_BYTES`` (and ``truncated`` set)."""
    if len(json.dumps(data)) > MAX_DATA_BYTES:
        data = {key: _cut(value) for key, value in data.items()} | {"truncated": True}
        if len(json.dumps(data)) > MAX_DATA_BYTES:  # many long values: the ids and numbers
            data = {key: value for key, value in data.items() if _scalar(value)}
    timestamp = at.isoformat().replace("+00:00", "Z")
    return json.dumps({"type": event_type, "timestamp": timestamp, "data": data})


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float)


def _cut(value: Any) -> Any:
    if isinstance(value, str) and len(value) > KEPT_CHARACTERS:
        return value[:KEPT_CHARACTERS] + "… (cut)"
    if isinstance(value, dict | list):
        text = json.dumps(value)
        return _cut(text) if len(text) > KEPT_CHARACTERS else value
    return value


def retry_schedule(setting: str) -> tuple[float, ...]:
    """The delays before each retry, from ``RELAY_WEBHOOK_RETRY_SCHEDULE``'s seconds."""
    return tuple(float(part) for part in setting.split(",") if part)


def next_delay(schedule: Sequence[float], attempts: int, retry_after: float | None) -> float | None:
    """Seconds until the next attempt after ``attempts`` have failed, with jitter, or the
    receiver's ``Retry-After`` (up to an hour); None when the schedule is spent."""
    if attempts > len(schedule):
        return None
    if retry_after is not None:
        return min(max(retry_after, 0.0), MAX_RETRY_AFTER)
    return schedule[attempts - 1] * random.uniform(1 - JITTER, 1 + JITTER)


# IPv6 prefixes that carry an IPv4 address in their last 32 bits: IPv4-compatible (::a.b.c.d),
# IPv4-translated (::ffff:0:a.b.c.d) and NAT64's well-known prefix (RFC 6052). A refused IPv4
# address is refused in each of them.
_CARRIES_IPV4 = tuple(
    ipaddress.IPv6Network(prefix) for prefix in ("::/96", "::ffff:0:0:0/96", "64:ff9b::/96")
)
_LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")  # RFC 8215: a network's own translator


def _refused(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%")[0])  # fe80::1%eth0: the zone says nothing
    if isinstance(ip, ipaddress.IPv6Address):
        if ip in _LOCAL_NAT64:
            return True
        carried = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if carried is None and any(ip in net for net in _CARRIES_IPV4):
            carried = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if carried is not None:
            ip = carried
    return not ip.is_global or ip.is_multicast


class AddressRefused(OSError):
    """A webhook's host is, or resolves to, an address that is not public."""


NOT_PUBLIC = "is a private, loopback, link-local or otherwise non-public address"
# The setting that lets webhooks reach such addresses; A2A calls have their own.
WEBHOOKS_SETTING = "RELAY_WEBHOOKS_ALLOW_PRIVATE"


async def public_addresses(
    host: str, port: int, setting: str = WEBHOOKS_SETTING
) -> list[tuple[int, str]]:
    """The (family, address) pairs ``host`` resolves to, once, when every one is public; the
    sender connects to these and nothing else, so a resolver that answers otherwise the next
    time (DNS rebinding) is never asked again. Raises ``AddressRefused`` saying why not."""
    try:
        found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise AddressRefused(f"{host} does not resolve") from None
    addresses: list[tuple[int, str]] = [(int(fam), str(addr[0])) for fam, _, _, _, addr in found]
    if not addresses:
        raise AddressRefused(f"{host} does not resolve")
    if any(_refused(address) for _, address in addresses):
        raise AddressRefused(f"{host} {NOT_PUBLIC} ({setting}=true allows it)")
    return addresses


async def address_refusal(url: str, setting: str = WEBHOOKS_SETTING) -> str | None:
    """Why an endpoint may not be called at ``url``: its host is, or resolves to, an address
    that is not public (loopback, private, link-local, the cloud metadata address, multicast,
    unspecified, or one of those inside an IPv6 form); None when every address it has is
    public."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        await public_addresses(parts.hostname or "", port, setting)
    except AddressRefused as refused:
        return str(refused)
    return None
