"""PostgreSQL storage on asyncpg, for several instances over one database (``storage``)."""

from relay_core.storage.postgres.storage import PostgresStorage

__all__ = ["PostgresStorage"]
