"""Coalescing: calls for one key that arrive while a run for it is under way share the next run.

A run that is already under way started before such a call arrived, so it cannot stand for it;
the next one starts after every call that joins it, so it can stand for all of them. Runs of
one key never overlap, and each runs in a task of its own, so a caller that goes away (a
client that disconnects) leaves the run, and the others waiting on it, alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


class Coalescer(Generic[K, T]):
    """One run at a time per key; calls arriving during a run share the one after it."""

    def __init__(self) -> None:
        self._next: dict[K, asyncio.Future[T]] = {}  # the run not yet started: joinable
        self._last: dict[K, asyncio.Future[T]] = {}  # the newest run, started or not
        self._turns: set[asyncio.Task[None]] = set()

    async def run(self, key: K, work: Callable[[], Awaitable[T]]) -> T:
        """``work()``'s result, from a run that started after this call arrived."""
        future = self._next.get(key)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            previous = self._last.get(key)
            self._next[key] = self._last[key] = future
            turn = asyncio.create_task(self._turn(key, future, previous, work))
            self._turns.add(turn)
            turn.add_done_callback(self._turns.discard)
        return await asyncio.shield(future)

    async def _turn(
        self,
        key: K,
        future: asyncio.Future[T],
        previous: asyncio.Future[T] | None,
        work: Callable[[], Awaitable[T]],
    ) -> None:
        if previous is not None:
            await asyncio.wait([previous])  # its outcome belongs to its own callers
        del self._next[key]  # from here on, a new call waits for the run after this one
        try:
            future.set_result(await work())
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: every caller raises it, even if none is left
        finally:
            if self._last.get(key) is future:
                del self._last[key]
