"""What every service shares: its dependencies and the transaction runner."""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

from pydantic import BaseModel

from relay_api.errors import Conflict
from relay_core import idempotency
from relay_core.config import CoreConfig
from relay_core.json_answers import answer_json
from relay_core.policy_rules import Rulebook
from relay_core.ports import Bridge, RemoteAgents, StaleWrite, Storage, UnitOfWork
from relay_core.webhooks import SecretSeal

T = TypeVar("T")

# A guarded write that loses a race is retried from a fresh read; past this many, the race is
# reported to the caller as a conflict rather than spinning.
MAX_ATTEMPTS = 5
REPOLL_SECONDS = 5.0  # a long-poll reads again this often where a hint can be lost
# A waiter that lasts all day (an event stream, its token's watch) reads again this seldom on
# average, at a time drawn at random so that streams opened together do not read together: a
# hint is lost only with an instance killed between a commit and its NOTIFY (and the waiters
# look again as soon as an instance sends its first hint, as a restarted one does). Ten
# thousand streams reading every 5 s kept two instances and their PostgreSQL server busy.
LOST_HINT_SECONDS = 300.0


def lost_hint_pause() -> float:
    """How long a waiter that lasts all day waits before it reads again where a hint can be
    lost: ``LOST_HINT_SECONDS`` on average, from half to one and a half times it."""
    return LOST_HINT_SECONDS * random.uniform(0.5, 1.5)


SWEEP_BATCH = 25  # rows one sweep transaction changes: its statements hold the loop meanwhile


def utcnow() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


class Registered:
    """Agent ids this process has found registered. Agents are never removed, so an id found
    once stays true; it only spares a lookup. Bounded: emptied when full."""

    LIMIT = 100_000

    def __init__(self) -> None:
        self._ids: set[str] = set()

    def __contains__(self, agent_id: str) -> bool:
        return agent_id in self._ids

    def add(self, agent_id: str) -> None:
        if len(self._ids) >= self.LIMIT:
            self._ids.clear()
        self._ids.add(agent_id)


@dataclass
class Context:
    """Dependencies handed to every service: ``bridges`` are the operator's platforms, in the
    order their answers count (the first that delivers names a notification); ``remote_agents``
    reaches external A2A agents (None: no call leaves this process)."""

    storage: Storage
    bridges: tuple[Bridge, ...]
    config: CoreConfig = field(default_factory=CoreConfig)
    clock: Callable[[], datetime] = utcnow
    registered: Registered = field(default_factory=Registered)
    health: dict[str, BridgeHealth] = field(default_factory=dict)
    remote_agents: RemoteAgents | None = None
    rulebook: Rulebook = field(init=False)

    def __post_init__(self) -> None:
        self.rulebook = Rulebook(self.storage.hub)

    @functools.cached_property
    def seal(self) -> SecretSeal:
        """The seal of the secrets kept in the database (webhooks' signing secrets, A2A push
        configs' tokens and credentials): one key derived a process."""
        return SecretSeal(self.config.server_secret.get_secret_value())

    @property
    def bridge(self) -> Bridge:
        """The first platform: the one whose threads mirror rooms."""
        return self.bridges[0]

    def bridge_named(self, name: str) -> Bridge | None:
        """The platform of that name, if it is configured."""
        return next((b for b in self.bridges if b.name == name), None)


@dataclass
class BridgeHealth:
    """How a platform's last call went (in this process)."""

    ok: bool = True
    last_error: str | None = None
    failed_at: datetime | None = None


class Service:
    """Base of the per-resource services."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def now(self) -> datetime:
        """The context's clock."""
        return self.ctx.clock()

    async def write(self, work: Callable[[UnitOfWork], Awaitable[T]], *, durable: bool = True) -> T:
        """Run ``work`` in a write transaction and commit; retry it when a guarded write lost.

        Within a create served with a retry key (``idempotency.answering``), the first write
        unit checks for an earlier answer first (``Replay``). A write that is not ``durable`` is
        answered before it reaches the disk (``UnitOfWork.commit``)."""
        return await self._run(work, keep=False, durable=durable)

    async def write_answer(self, work: Callable[[UnitOfWork], Awaitable[T]]) -> T:
        """``write`` the unit whose result is a create's answer: within a create served with a
        retry key, the answer is kept for the key in the same transaction as the rows it made,
        so a crash never leaves the one without the other."""
        return await self._run(work, keep=True, durable=True)

    async def _run(
        self, work: Callable[[UnitOfWork], Awaitable[T]], *, keep: bool, durable: bool
    ) -> T:
        once = idempotency.serving()
        ttl = self.ctx.config.idempotency_ttl_seconds
        for _ in range(MAX_ATTEMPTS):
            try:
                async with self.ctx.storage.unit_of_work(write=True) as uow:
                    if once is not None and not once.checked:
                        await idempotency.check(uow, once, self.now(), ttl)
                    result = await work(uow)
                    kept = keep and once is not None and not once.recorded
                    if kept and isinstance(result, BaseModel):
                        assert once is not None
                        await uow.flush()  # the answer holds the keys of what was added
                        body = answer_json(result).decode()
                        await idempotency.record(uow, once, body, self.now(), ttl)
                    await uow.commit(durable=durable)
                    if once is not None:
                        once.checked = True
                        once.recorded = once.recorded or kept
                    return result
            except StaleWrite:
                continue
        raise Conflict("the resource changed concurrently too many times; try again")

    async def read(
        self, work: Callable[[UnitOfWork], Awaitable[T]], *, following: bool = False
    ) -> T:
        """Run ``work`` in a read-only transaction (``following``: a stream's, ``Storage``)."""
        async with self.ctx.storage.unit_of_work(write=False, following=following) as uow:
            return await work(uow)

    async def long_poll(
        self,
        topics: tuple[str, ...],
        wait: float,
        fetch: Callable[[], Awaitable[T]],
        found: Callable[[T], bool],
    ) -> T:
        """``fetch()`` until ``found`` its result, a hint on ``topics`` prompting each retry, for
        at most ``wait`` seconds. Hints can be missed (another instance's, a dropped listener),
        so it also fetches again every ``REPOLL_SECONDS``; shutdown ends the wait at once."""
        hub = self.ctx.storage.hub
        deadline = time.monotonic() + min(wait, self.ctx.config.max_wait_seconds)
        while True:
            with hub.subscribe(*topics) as subscription:
                result = await fetch()
                remaining = deadline - time.monotonic()
                if found(result) or remaining <= 0 or hub.closed:
                    return result
                await subscription.wait(min(remaining, REPOLL_SECONDS))
