"""Several operator platforms at once: each call goes to every bridge at the same time, a
failure on one does not stop the others, and what each did is kept as a post (which platform
message carries which notification or approval), so a reply or a decision on any of them is
matched, and every one of them can be updated afterwards."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal

from relay_api import models as m
from relay_api.errors import BridgeError
from relay_core import records
from relay_core.ports import Bridge, UnitOfWork
from relay_core.services.base import BridgeHealth, Context

Subject = Literal["notification", "approval"]


async def deliver(
    ctx: Context, bridges: Sequence[Bridge], call: Callable[[Bridge], Awaitable[str | None]]
) -> list[m.Delivery]:
    """``call`` on every bridge at once; what each did, in the bridges' order. A bridge that
    shows nothing (``None``: the local bridge asked to show an approval) is left out."""

    async def one(bridge: Bridge) -> m.Delivery | None:
        try:
            platform_id = await call(bridge)
        except BridgeError as exc:
            ctx.health[bridge.name] = BridgeHealth(
                ok=False, last_error=exc.detail, failed_at=ctx.clock()
            )
            return m.Delivery(
                bridge=bridge.name, status="failed", error=exc.detail, created_at=ctx.clock()
            )
        ctx.health[bridge.name] = BridgeHealth()
        if platform_id is None:
            return None
        return m.Delivery(
            bridge=bridge.name,
            platform_message_id=platform_id,
            status="sent",
            created_at=ctx.clock(),
        )

    done = await asyncio.gather(*(one(bridge) for bridge in bridges))
    return [delivery for delivery in done if delivery is not None]


def failure(deliveries: Sequence[m.Delivery]) -> str:
    """What went wrong, when nothing was delivered: each platform's reason."""
    if len(deliveries) == 1:
        return deliveries[0].error or "not delivered"
    return "; ".join(f"{d.bridge}: {d.error}" for d in deliveries)


async def keep(
    uow: UnitOfWork, subject: Subject, subject_id: int, deliveries: Sequence[m.Delivery]
) -> None:
    """Record what each platform did with the subject."""
    for delivery in deliveries:
        await uow.posts.insert(
            records.Post(subject=subject, subject_id=subject_id, **delivery.model_dump())
        )


async def posts_of(uow: UnitOfWork, subject: Subject, subject_id: int) -> list[records.Post]:
    """The subject's posts, oldest first."""
    return await uow.posts.of_subjects(subject, [subject_id])


async def subject_of(
    uow: UnitOfWork, subject: Subject, bridge: str, platform_message_id: str
) -> int | None:
    """Which notification or approval a platform message carries."""
    return await uow.posts.subject_of(subject, bridge, platform_message_id)
