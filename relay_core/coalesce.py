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

from relay_core import waiters

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")


class Coalescer(Generic[K, T]):
    """One run at a time per key; calls arriving during a run share the one after it."""

    def __init__(self) -> None:
        # The callers of the run not yet started (joinable), each on a future of its own.
        self._next: dict[K, list[asyncio.Future[T]]] = {}
        self._last: dict[K, asyncio.Task[None]] = {}  # the newest run, started or not
        self._turns: set[asyncio.Task[None]] = set()

    async def run(self, key: K, work: Callable[[], Awaitable[T]]) -> T:
        """``work()``'s result, from a run that started after this call arrived."""
        callers = self._next.get(key)
        if callers is None:
            callers = self._next[key] = []
            previous = self._last.get(key)
            turn = asyncio.create_task(self._turn(key, callers, previous, work))
            self._last[key] = turn
            self._turns.add(turn)
            turn.add_done_callback(self._turns.discard)
        mine: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        callers.append(mine)
        return await mine

    async def _turn(
        self,
        key: K,
        callers: list[asyncio.Future[T]],
        previous: asyncio.Task[None] | None,
        work: Callable[[], Awaitable[T]],
    ) -> None:
        if previous is not None:
            await asyncio.wait([previous])  # its outcome belongs to its own callers
        del self._next[key]  # from here on, a new call waits for the run after this one
        try:
            result = await work()
        except Exception as exc:
            waiters.fail(callers, exc)
        except BaseException:
            for caller in callers:
                caller.cancel()  # the run was cancelled (shutdown): so are its callers' waits
            raise
        else:
            waiters.answer(callers, result)
        finally:
            if self._last.get(key) is asyncio.current_task():
                del self._last[key]
