"""Work that runs beside the requests, on exactly one instance at a time."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from relay_api.errors import StorageUnavailable
from relay_core.ports import Storage
from relay_core.services import Services
from relay_core.services.base import SWEEP_BATCH
from relay_server.logs import log_outage

log = logging.getLogger("relay.server")


async def on_one_instance(
    storage: Storage, name: str, work: Callable[[], Awaitable[None]], standby: float
) -> None:
    """Run ``work`` (which runs until it fails, is cancelled or the process shuts down) while
    holding the storage's lock ``name``; an instance without the lock looks again every
    ``standby`` seconds, until shutdown."""
    while not storage.hub.closed:
        try:
            async with storage.exclusive(name) as mine:
                if mine:
                    await work()
        except StorageUnavailable as exc:  # the next look may find it back
            log_outage(exc.logged)
        await asyncio.sleep(standby)


async def _in_batches(batch: Callable[[], Awaitable[int]], what: str) -> None:
    """Run ``batch`` again while it does a full batch (more are waiting: the next at once);
    a failure is logged, and the next round tries again."""
    try:
        while await batch() == SWEEP_BATCH:
            pass
    except StorageUnavailable as exc:
        log_outage(exc.logged)
    except Exception:
        log.exception("%s failed", what)


async def sweep(services: Services, interval: float) -> None:
    """Every ``interval`` seconds, reap lapsed task leases, persist expired enrollments and
    approvals past their deadline, and delete webhook deliveries past their keeping, in
    bounded transactions, from one instance at a time (operations still check what they
    find)."""
    sweeps = (
        services.tasks.sweep,
        services.enroll.sweep,
        services.approvals.sweep,
        services.reservations.sweep,
        services.webhooks.sweep,
    )

    async def sweep_forever() -> None:
        while True:
            for one in sweeps:
                await _in_batches(one, "background sweep")
            await asyncio.sleep(interval)

    await on_one_instance(services.ctx.storage, "sweep", sweep_forever, interval)


# How often the follower looks for A2A calls to send or tasks to read again.
FOLLOW_SECONDS = 1.0


async def follow_a2a_calls(services: Services, interval: float = FOLLOW_SECONDS) -> None:
    """Send the A2A calls approved since, and read again the tasks of those sent, every
    ``interval`` seconds, from one instance at a time. Its own loop: a slow remote agent holds
    up only its round, not the sweep."""

    async def follow_forever() -> None:
        while True:
            await _in_batches(services.a2a_calls.follow, "following A2A calls")
            await asyncio.sleep(interval)

    await on_one_instance(services.ctx.storage, "a2a_calls", follow_forever, interval)
