"""Times as SQLite keeps them: naive UTC text, as SQLAlchemy's SQLite dialect stores them,
always with microseconds, so that comparisons stay textual."""

from __future__ import annotations

from datetime import UTC, datetime


def encode_datetime(value: datetime) -> str:
    """A time as SQLite keeps it: the text SQLAlchemy's SQLite dialect stores (naive UTC,
    always with microseconds), so comparisons stay textual."""
    utc = value if value.tzinfo is UTC else value.astimezone(UTC)
    return utc.isoformat(" ", "microseconds")[:26]


def decode_datetime(value: str) -> datetime:
    return datetime.fromisoformat(value + "+00:00")
