"""Callers waiting on one outcome, each on a future of its own.

A caller that goes away (a client that disconnects) cancels its own future and nobody else's.
One future shared by every caller needed ``asyncio.shield`` per caller instead: an outer
future and two callbacks each, a share of a POST's instructions worth saving.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TypeVar

T = TypeVar("T")


def answer(waiters: Iterable[asyncio.Future[T]], result: T) -> None:
    """Give every waiter still waiting ``result``."""
    for waiter in waiters:
        if not waiter.done():  # else its caller has gone away
            waiter.set_result(result)


def fail(waiters: Iterable[asyncio.Future[T]], exc: BaseException) -> None:
    """Give every waiter still waiting ``exc`` to raise."""
    for waiter in waiters:
        if not waiter.done():
            waiter.set_exception(exc)
