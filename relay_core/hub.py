"""In-process wake-ups: a committed change publishes topics, long-polls waiting on them wake.

A wake-up is only a hint to query again; the database stays the truth. A subscription is taken
before the query it guards, so a change committed between the query and the wait still wakes it.
Closing the hub (at shutdown) wakes every waiter for good.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable, Iterable
from types import TracebackType


class Subscription:
    """Interest in some topics; ``wait`` returns once any of them was published (or on close)."""

    def __init__(self, hub: Hub, topics: tuple[str, ...]) -> None:
        self._hub = hub
        self.topics = topics
        self.heard: set[str] = set()  # the topics published since the waiter last cleared it
        self._woken = False
        self._waiter: asyncio.Future[None] | None = None

    def wake(self) -> None:
        self._woken = True
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def wait(self, timeout: float | None) -> bool:
        """True when woken, False when ``timeout`` seconds passed first (None: no limit).

        A future and a timer rather than ``asyncio.timeout``: a stream waits out its time
        thousands of times a second in a fleet, and a time-out raised and caught costs several
        times a callback."""
        if not self._woken:
            loop = asyncio.get_running_loop()
            waiter = self._waiter = loop.create_future()
            timer = None if timeout is None else loop.call_later(timeout, _time_up, waiter)
            try:
                await waiter
            finally:
                self._waiter = None
                if timer is not None:
                    timer.cancel()
        woken, self._woken = self._woken, False
        return woken

    def __enter__(self) -> Subscription:
        self._hub._add(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._hub._remove(self)


class Hub:
    """Topic → subscriptions, for one event loop."""

    def __init__(self) -> None:
        self._subscriptions: dict[str, set[Subscription]] = defaultdict(set)
        self._watchers: dict[str, list[Callable[[], None]]] = defaultdict(list)
        self.closed = False

    def watch(self, topic: str, callback: Callable[[], None]) -> None:
        """Call ``callback`` every time ``topic`` is published, for the hub's lifetime (for
        caches that a committed change makes stale)."""
        self._watchers[topic].append(callback)

    def subscribe(self, *topics: str) -> Subscription:
        """A subscription to use as a context manager around query-then-wait."""
        return Subscription(self, topics)

    def publish(self, topics: Iterable[str]) -> None:
        """Wake every subscription to any of ``topics``."""
        for topic in topics:
            for callback in self._watchers.get(topic, ()):
                callback()
            for subscription in self._subscriptions.get(topic, ()):
                subscription.heard.add(topic)
                subscription.wake()

    def publish_all(self) -> None:
        """Publish every topic anyone waits on or watches: hints may have been lost (the
        connection that brings other instances' went down), so every waiter looks again."""
        self.publish([*self._subscriptions, *self._watchers])

    def close(self) -> None:
        """Wake everyone, now and from now on: the process is shutting down."""
        self.closed = True
        for subscriptions in self._subscriptions.values():
            for subscription in subscriptions:
                subscription.wake()

    def _add(self, subscription: Subscription) -> None:
        for topic in subscription.topics:
            self._subscriptions[topic].add(subscription)
        if self.closed:
            subscription.wake()

    def _remove(self, subscription: Subscription) -> None:
        for topic in subscription.topics:
            waiting = self._subscriptions.get(topic)
            if waiting is not None:
                waiting.discard(subscription)
                if not waiting:
                    del self._subscriptions[topic]


def _time_up(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
