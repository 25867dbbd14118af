"""Token buckets: per caller on authenticated routes, per client address on enrollment and on
refused authentications.

Buckets live in the process: with several instances each enforces its own share, which bounds a
caller at N times the rate — generous by design, and documented in docs/deploy.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from relay_server.http_errors import RateLimited

# Past this many buckets, the full ones (indistinguishable from new) are dropped.
MAX_BUCKETS = 10_000


class TokenBucket:
    """``rate`` requests a second on average, ``burst`` at once; ``rate`` 0 turns it off."""

    def __init__(
        self, rate: float, burst: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate
        self.burst = max(burst, 1.0)
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, key: str, what: str) -> None:
        """Spend one token of ``key``'s bucket, or raise ``RateLimited`` saying when to retry."""
        if self.rate <= 0:
            return
        now = self._clock()
        tokens = self._refill(key, now, what)
        self._buckets[key] = (tokens - 1, now)
        if len(self._buckets) > MAX_BUCKETS:
            self._prune(now)

    def check(self, key: str, what: str) -> None:
        """Raise ``RateLimited`` if ``key``'s bucket is empty, without spending from it."""
        if self.rate <= 0 or key not in self._buckets:
            return
        self._refill(key, self._clock(), what)

    def _refill(self, key: str, now: float, what: str) -> float:
        tokens, last = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.rate)
        if tokens < 1:
            self._buckets[key] = (tokens, now)
            raise RateLimited(
                f"too many requests from {what}; slow down", retry_after=(1 - tokens) / self.rate
            )
        return tokens

    def _prune(self, now: float) -> None:
        full = [
            key
            for key, (tokens, last) in self._buckets.items()
            if tokens + (now - last) * self.rate >= self.burst
        ]
        for key in full:
            del self._buckets[key]
