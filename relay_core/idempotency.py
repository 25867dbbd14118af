"""Idempotency keys: a retried create answers what the first attempt answered, once.

The HTTP layer describes the request (who, which key, a fingerprint of what was asked) in a
context variable; ``Service.write`` checks it at the start of its transaction and stores the
answer in the same transaction as the rows it creates, so a crash can never leave the row
without its key or the key without its row.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta

from relay_core import models as m
from relay_core.errors import Conflict
from relay_core.ports import UnitOfWork, eq, gt, lt


@dataclass
class IdempotentRequest:
    """A request that carried ``Idempotency-Key``."""

    scope: str
    key: str
    fingerprint: str
    status: int
    checked: bool = False
    recorded: bool = False


current: ContextVar[IdempotentRequest | None] = ContextVar("relay_idempotency", default=None)


class Replay(Exception):
    """The request was already answered; send this answer again."""

    def __init__(self, record: m.IdempotencyRecord) -> None:
        super().__init__(f"replay of {record.key}")
        self.record = record


async def check(uow: UnitOfWork, request: IdempotentRequest, now: datetime, ttl: float) -> None:
    """Raise ``Replay`` for a key already answered within ``ttl``; ``Conflict`` if it answered
    a different request."""
    found = await uow.idempotency_keys.find(
        eq("scope", request.scope),
        eq("key", request.key),
        gt("created_at", now - timedelta(seconds=ttl)),
        limit=1,
    )
    if not found:
        return
    if found[0].fingerprint != request.fingerprint:
        raise Conflict(f"Idempotency-Key '{request.key}' was already used for a different request")
    raise Replay(found[0])


async def record(
    uow: UnitOfWork, request: IdempotentRequest, body: str, now: datetime, ttl: float
) -> None:
    """Keep the answer with the rows it describes; forget keys past their window."""
    await uow.idempotency_keys.delete_where([lt("created_at", now - timedelta(seconds=ttl))])
    await uow.idempotency_keys.insert(
        m.IdempotencyRecord(
            scope=request.scope,
            key=request.key,
            fingerprint=request.fingerprint,
            status=request.status,
            body=body,
            created_at=now,
        )
    )
