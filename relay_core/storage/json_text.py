"""JSON columns' text, written and read the same on both adapters (SQLite's parameters,
asyncpg's codec for ``json`` and ``jsonb``)."""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
from pydantic import BaseModel


def _model_fields(value: Any) -> Any:
    """A model inside a JSON column's value (a question's options) as its JSON object."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"{type(value).__name__} is not JSON")


def encode_json(value: Any) -> str:
    """A JSON column's text: orjson's, or json's for what orjson refuses."""
    try:
        return orjson.dumps(value, default=_model_fields).decode()
    except TypeError:  # integers past 64 bits, which orjson refuses and json keeps exactly
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_model_fields)


_LONG_NUMBER = re.compile(r"\d{19}")


def decode_json(value: str) -> Any:
    """A JSON column's value, with integers past 64 bits kept exact."""
    if value == "{}":
        return {}
    if _LONG_NUMBER.search(value):  # orjson would read integers past 64 bits as floats
        return json.loads(value)
    return orjson.loads(value)
