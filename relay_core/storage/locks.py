"""Named locks that live in one process: enough where the storage itself serves one process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class ProcessLocks:
    """``exclusive(name)`` where one process serves the storage (SQLite)."""

    def __init__(self) -> None:
        self._held: set[str] = set()

    @asynccontextmanager
    async def exclusive(self, name: str) -> AsyncIterator[bool]:
        """True, and the lock held until exit, if nobody in this process holds ``name``."""
        if name in self._held:
            yield False
            return
        self._held.add(name)
        try:
            yield True
        finally:
            self._held.discard(name)
