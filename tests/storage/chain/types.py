"""The column types the revisions create tables with: the same on SQLite and PostgreSQL where
they can be, and what each keeps where they cannot."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import JSON, BigInteger, DateTime, Dialect, Integer, TypeDecorator
from sqlalchemy.dialects.postgresql import JSONB


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend (SQLite keeps naive UTC text)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


# SQLite only auto-increments an INTEGER PRIMARY KEY; everywhere else ids are 64-bit.
Id = BigInteger().with_variant(Integer(), "sqlite")
Json = JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")
