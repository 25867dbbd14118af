"""Retry keys: a retried create answers what the first attempt answered, once.

The transport serves a create within ``answering(once)`` (who asks, their key, a fingerprint of
what was asked); the write that makes the create's answer (``Service.write_answer``)
checks it at the start of its transaction and stores the answer in the same transaction as the
rows it creates, so a crash can never leave the row without its key or the key without its row.
How a key travels (a header, a platform's event id) is the transport's business, and no service
takes it as a parameter.

The stored answer may hold a secret shown once (an agent's token, an enrollment's claim), so it
is never kept in the clear: it is sealed (AES-GCM) with a key derived from the retry key itself,
and found by a hash of that key. Only whoever holds the retry key can read the answer back,
which is exactly who may be shown it again; the database, its WAL and its backups hold nothing
usable. Keys are at least ``MIN_KEY_LENGTH`` characters so that a guessed key
cannot open another client's answer on the public enrollment route.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from relay_api.errors import Conflict
from relay_core import records
from relay_core.ports import UnitOfWork

_SERVING: ContextVar[RetryKey | None] = ContextVar("relay_idempotency_serving", default=None)

MIN_KEY_LENGTH = 16
MAX_KEY_LENGTH = 200
_NONCE_BYTES = 12


@dataclass
class RetryKey:
    """A create to make once: who asks, the key they chose, and what they asked."""

    scope: str
    key: str
    fingerprint: str
    checked: bool = False
    recorded: bool = False

    @property
    def key_hash(self) -> str:
        """How the stored answer is found: never the key itself."""
        material = f"relay idempotency lookup\0{self.scope}\0{self.key}".encode()
        return hashlib.sha256(material).hexdigest()

    def _aead(self) -> AESGCM:
        hkdf = HKDF(
            algorithm=hashes.SHA256(),
            length=32,
            salt=None,
            info=f"relay idempotency seal\0{self.scope}".encode(),
        )
        return AESGCM(hkdf.derive(self.key.encode()))

    def _associated(self) -> bytes:
        # Binds the sealed answer to its row: it cannot be moved to another key's record.
        return f"{self.key_hash}\0{self.fingerprint}".encode()

    def seal(self, body: str) -> str:
        """``body`` encrypted under this request's key, as text for the database."""
        nonce = os.urandom(_NONCE_BYTES)
        sealed = self._aead().encrypt(nonce, body.encode(), self._associated())
        return base64.b64encode(nonce + sealed).decode()

    def open(self, sealed: str) -> str | None:
        """The body sealed by ``seal`` under the same key, or None if it does not open."""
        raw = base64.b64decode(sealed)
        try:
            body = self._aead().decrypt(raw[:_NONCE_BYTES], raw[_NONCE_BYTES:], self._associated())
        except InvalidTag:
            return None
        return body.decode()


class Replay(Exception):
    """The create was already made; ``body`` is its answer (JSON), to give again."""

    def __init__(self, body: str) -> None:
        super().__init__("replay of an earlier answer")
        self.body = body


async def check(uow: UnitOfWork, request: RetryKey, now: datetime, ttl: float) -> None:
    """Raise ``Replay`` for a key already answered within ``ttl``; ``Conflict`` if it answered
    a different request."""
    record = await uow.idempotency_keys.find(
        request.scope, request.key_hash, since=now - timedelta(seconds=ttl)
    )
    if record is None:
        return
    body = request.open(record.sealed_body) if record.fingerprint == request.fingerprint else None
    if body is None:
        raise Conflict("this key was already used for a different request")
    raise Replay(body)


async def record(uow: UnitOfWork, request: RetryKey, body: str, now: datetime, ttl: float) -> None:
    """Keep the answer, sealed, with the rows it describes; forget keys past their window."""
    await uow.idempotency_keys.forget_before(now - timedelta(seconds=ttl))
    await uow.idempotency_keys.insert(
        records.IdempotencyRecord(
            scope=request.scope,
            key_hash=request.key_hash,
            fingerprint=request.fingerprint,
            sealed_body=request.seal(body),
            created_at=now,
        )
    )


@contextmanager
def answering(once: RetryKey) -> Iterator[None]:
    """Serve the block's create once for ``once`` (a create sent without a retry key is served
    outside any such block)."""
    token = _SERVING.set(once)
    try:
        yield
    finally:
        _SERVING.reset(token)


def serving() -> RetryKey | None:
    """The retry key of the create being served, if any."""
    return _SERVING.get()
