"""Pages: every list answers at most ``limit`` rows and a cursor to the rows after them.

A cursor is opaque to clients: the sort key of the last row of the page, as base64url JSON. The
next page is read *after* that key (keyset paging), so rows created or removed between two pages
never shift what the next page holds, and a page costs the same however deep it is. A cursor is
checked against the types of the list's sort key, so a forged one is a 422, never a query error.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

import pydantic

from relay_api.errors import InvalidInput

R = TypeVar("R", bound=pydantic.BaseModel)
T = TypeVar("T")


def encode(values: Sequence[Any]) -> str:
    """A cursor holding ``values`` (ints, strings, datetimes)."""
    plain = [value.isoformat() if isinstance(value, datetime) else value for value in values]
    return base64.urlsafe_b64encode(json.dumps(plain).encode()).decode().rstrip("=")


def _value(kind: type, value: Any) -> Any:
    """``value`` of a cursor read as ``kind``, as ``encode`` wrote it; ValueError if it is
    not one."""
    if kind is datetime and isinstance(value, str):
        read = datetime.fromisoformat(value)
        if read.tzinfo is not None:  # encode writes aware times only
            return read
    elif kind is float and type(value) in (int, float):
        return float(value)
    elif type(value) is kind:
        return value
    raise ValueError(f"not a {kind.__name__}")


def decode(cursor: str, types: tuple[type, ...]) -> tuple[Any, ...]:
    """The values a cursor of this list holds; InvalidInput if it is not one."""
    refused = InvalidInput("cursor", "not a cursor of this list (pass next_cursor as given)")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        plain = json.loads(raw)
        if not isinstance(plain, list) or len(plain) != len(types):
            raise ValueError("not a key of this list")
        values = [_value(kind, value) for kind, value in zip(types, plain, strict=True)]
    except (binascii.Error, ValueError, RecursionError):
        raise refused from None
    # Past 64 bits no stored id can follow; PostgreSQL would refuse to compare one.
    if any(isinstance(value, int) and not -(2**63) <= value < 2**63 for value in values):
        raise refused
    return tuple(values)


def key_after(cursor: str | None, key_type: type[T]) -> T | None:
    """The sort key a page of a list sorted by one key starts after: the one ``cursor``
    holds, None for the first page."""
    if cursor is None:
        return None
    key: T = decode(cursor, (key_type,))[0]
    return key


def cut(
    rows: list[R], limit: int, sort_key: Callable[[R], Sequence[Any]]
) -> tuple[list[R], str | None]:
    """The page of ``rows`` read one past ``limit`` (the one more says another page follows),
    and the cursor of the next page (``sort_key`` of its last row), None if this is the
    last."""
    if len(rows) <= limit:
        return rows, None
    return rows[:limit], encode(sort_key(rows[limit - 1]))
