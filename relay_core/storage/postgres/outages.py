"""What an error of PostgreSQL or of the way to it means: an outage (503 until it recovers),
a race to run again (deadlock, serialization), or a broken connection to drop.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import DBAPIError

from relay_api.errors import StorageUnavailable
from relay_core.storage.postgres.driver import asyncpg

# SQLSTATE classes of a server that cannot serve now, rather than of a statement that is wrong:
# 08 connection exception, 53 insufficient resources (disk full, out of memory, too many
# connections), 57 operator intervention (shutting down, cannot connect now), 58 system error.
_OUTAGE_CLASSES = ("08", "53", "57", "58")


# 40P01 deadlock detected, 40001 serialization failure: the transaction is rolled back and
# running it again is the remedy PostgreSQL documents.
RETRY_STATES = ("40P01", "40001")


def _cause(exc: BaseException) -> BaseException:
    cause: BaseException = exc.orig if isinstance(exc, DBAPIError) and exc.orig else exc
    return cause.__cause__ or cause  # SQLAlchemy's adapter wraps asyncpg's


def sqlstate(exc: BaseException) -> str:
    return str(getattr(_cause(exc), "sqlstate", "") or "")


# What using a connection can raise when PostgreSQL or the way to it fails (asyncpg's
# InternalClientError: a statement sent on a connection whose protocol failed or is still
# reading the error that ended it, as in a fast shutdown of PostgreSQL). Without asyncpg (a
# SQLite-only install) this module is still imported, and nothing of asyncpg's is raised.
BROKEN: tuple[type[BaseException], ...] = (
    (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError)
    if asyncpg is not None
    else (OSError,)
)


async def roll_back(conn: Any) -> None:
    """End a unit's transaction that was not committed. On a connection that broke (PostgreSQL
    shutting down mid-unit), the ROLLBACK fails too: the connection is dropped, so the pool
    opens a new one, and the error that ended the unit is the one that counts."""
    try:
        await conn.execute("ROLLBACK")
    except BROKEN:
        conn.terminate()


def unavailable(exc: BaseException) -> StorageUnavailable | None:
    """The StorageUnavailable an error reaching or using PostgreSQL amounts to, if it is one
    of the server, its disk or the network rather than of a statement."""
    cause = _cause(exc)
    state = sqlstate(exc)
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return StorageUnavailable("the connection to PostgreSQL was lost")
    if isinstance(cause, asyncpg.InternalClientError):  # its protocol failed, or is failing
        return StorageUnavailable("the connection to PostgreSQL was lost", for_the_log=str(cause))
    if state[:2] in _OUTAGE_CLASSES:
        return StorageUnavailable(f"PostgreSQL cannot serve now: {cause}")
    if isinstance(cause, OSError | TimeoutError) or type(cause).__name__ == _DROPPED:
        return StorageUnavailable("PostgreSQL cannot be reached", for_the_log=str(cause))
    return None


_DROPPED = "ConnectionDoesNotExistError"  # asyncpg's: the server closed the connection
