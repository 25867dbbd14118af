"""asyncpg, the ``postgres`` extra: a SQLite-only install never loads this adapter."""

from __future__ import annotations

try:
    import asyncpg
except ImportError:  # pragma: no cover
    asyncpg = None

INTEGRITY: type[Exception] | tuple[()] = (
    asyncpg.IntegrityConstraintViolationError if asyncpg is not None else ()
)

__all__ = ["INTEGRITY", "asyncpg"]
