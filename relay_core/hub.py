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
        self.event = asyncio.Event()
        self.heard: set[str] = set()  # the topics published since the waiter last cleared it

    async def wait(self, timeout: float) -> bool:
        """True when woken, False when ``timeout`` seconds passed first."""
        try:
            # Not wait_for: on 3.11 it drops a cancellation that arrives as the event is set
            # (the hub closing), and a task cancelled at shutdown would carry on.
            async with asyncio.timeout(timeout):
                await self.event.wait()
        except TimeoutError:
            return False
        self.event.clear()
        return True

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
                subscription.event.set()

    def close(self) -> None:
        """Wake everyone, now and from now on: the process is shutting down."""
        self.closed = True
        for subscriptions in self._subscriptions.values():
            for subscription in subscriptions:
                subscription.event.set()

    def _add(self, subscription: Subscription) -> None:
        for topic in subscription.topics:
            self._subscriptions[topic].add(subscription)
        if self.closed:
            subscription.event.set()

    def _remove(self, subscription: Subscription) -> None:
        for topic in subscription.topics:
            waiting = self._subscriptions.get(topic)
            if waiting is not None:
                waiting.discard(subscription)
                if not waiting:
                    del self._subscriptions[topic]
