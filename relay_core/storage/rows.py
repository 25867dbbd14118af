"""One mapper from a stored row to its model, the same for both dialects: a statement answers
a record's columns by name, and the model reads them. PostgreSQL's driver gives each column as
the model takes it; SQLite keeps a time as text and JSON as text, so those columns are decoded
first, by the type of the model's field they fill (``decoded_models``)."""

from __future__ import annotations

import functools
import json
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel

R = TypeVar("R", bound=BaseModel)


def as_model(model: type[R], fields: Mapping[str, Any]) -> R:
    """A row's columns, by name, as ``model`` (columns it has no field for are left out)."""
    return model.model_validate(fields)


def _kinds(annotation: Any) -> set[Any]:
    """The types an annotation admits, through unions, ``Annotated`` and generics' origins."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _kinds(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return set().union(*(_kinds(arg) for arg in typing.get_args(annotation)))
    return {origin or annotation}


def _is_json(kind: Any) -> bool:
    return kind in (dict, list) or (isinstance(kind, type) and issubclass(kind, BaseModel))


@functools.cache
def decoders(
    model: type[BaseModel], decode_time: Callable[[Any], datetime]
) -> dict[str, Callable[[Any], Any]]:
    """How text becomes each field's value, for the fields that need it: a time (by
    ``decode_time``), and JSON (an object, a list, a model)."""
    found: dict[str, Callable[[Any], Any]] = {}
    for name, field in model.model_fields.items():
        kinds = _kinds(field.annotation)
        if datetime in kinds:
            found[name] = decode_time
        elif any(_is_json(kind) for kind in kinds):
            found[name] = json.loads
    return found


def decoded_models(
    model: type[R],
    names: Sequence[str],
    rows: Iterable[Sequence[Any]],
    decode_time: Callable[[Any], datetime],
) -> list[R]:
    """Rows whose times and JSON are text (SQLite's), their columns ``names``, as ``model``."""
    decoding = decoders(model, decode_time)
    steps = [(name, decoding.get(name)) for name in names]
    return [
        model.model_validate(
            {
                name: value if decode is None or value is None else decode(value)
                for (name, decode), value in zip(steps, row, strict=True)
            }
        )
        for row in rows
    ]
