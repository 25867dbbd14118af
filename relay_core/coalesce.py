"""Coalescing: calls that arrive while a run is under way share the next run, whatever their key,
and the run answers each key's callers.

A run that is already under way started before such a call arrived, so it cannot stand for it;
the next one starts after every call that joins it, so it can stand for all of them. Runs never
overlap, and each runs in a task of its own, so a caller that goes away (a client that
disconnects) leaves the run, and the others waiting on it, alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Mapping
from typing import Generic, TypeVar

from relay_core import waiters

K = TypeVar("K", bound=Hashable)
T = TypeVar("T")

# A run's work: given the keys asked, each key's result, or the error its callers raise.
Work = Callable[[list[K]], Awaitable[Mapping[K, T | Exception]]]


class Coalescer(Generic[K, T]):
    """One run at a time; the calls arriving during a run share the one after it."""

    def __init__(self, work: Work[K, T]) -> None:
        self._work = work
        # The callers of the run not yet started (joinable), by key, each on a future of its own.
        self._next: dict[K, list[asyncio.Future[T]]] | None = None
        self._last: asyncio.Task[None] | None = None  # the newest run, started or not
        self._turns: set[asyncio.Task[None]] = set()

    async def run(self, key: K) -> T:
        """``key``'s result, from a run that started after this call arrived."""
        callers = self._next
        if callers is None:
            callers = self._next = {}
            turn = asyncio.create_task(self._turn(callers, self._last))
            self._last = turn
            self._turns.add(turn)
            turn.add_done_callback(self._turns.discard)
        mine: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        callers.setdefault(key, []).append(mine)
        return await mine

    async def _turn(
        self, callers: dict[K, list[asyncio.Future[T]]], previous: asyncio.Task[None] | None
    ) -> None:
        if previous is not None:
            await asyncio.wait([previous])  # its outcome belongs to its own callers
        self._next = None  # from here on, a new call waits for the run after this one
        try:
            results = await self._work(list(callers))
        except Exception as exc:
            for futures in callers.values():
                waiters.fail(futures, exc)
        except BaseException:
            for futures in callers.values():
                for caller in futures:
                    caller.cancel()  # the run was cancelled (shutdown): so are its callers' waits
            raise
        else:
            for key, futures in callers.items():
                result = results[key]
                if isinstance(result, Exception):
                    waiters.fail(futures, result)
                else:
                    waiters.answer(futures, result)
        finally:
            if self._last is asyncio.current_task():
                self._last = None
