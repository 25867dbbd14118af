"""Rows into models, by a function written once per table.

Building a model through ``model_validate`` re-checks what was valid when it was stored; for a
list of a hundred rows that was most of a read's time. ``row_builder`` writes, once per table, a
function that hands each column's value (decoding the columns the backend cannot hand over as
Python values) to the model as its pickled state (``BaseModel.__setstate__``, what ``copy`` and
``pickle`` restore a model through), so a row costs two dicts and one object. A test holds every
table's built rows to what ``model_validate`` gives.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import orjson
from pydantic import BaseModel

from relay_core.ports import Cond, TableSpec

Encode = Callable[[Any], Any]
Decode = Callable[[Any], Any]


def row_builder(
    model: type[BaseModel], columns: Sequence[str], codecs: Mapping[str, tuple[Encode, Decode]]
) -> Callable[[Sequence[Any]], Any]:
    """A function from a row to its model, written once per table: each column decoded in
    place, every other field at its default, and no validation — the row was valid when it
    was stored, and resource models have no validators (a test holds both to the result of
    ``model_validate``)."""
    namespace: dict[str, Any] = {"new": object.__new__, "M": model}
    items = []  # in the model's field order, which is the order they are serialised in
    position = {column: i for i, column in enumerate(columns)}
    for name, field in model.model_fields.items():
        i = position.get(name)
        if i is None:
            namespace[f"default_{name}"] = field
            items.append(f"{name!r}: default_{name}.get_default(call_default_factory=True)")
        elif name in codecs:
            namespace[f"decode_{i}"] = codecs[name][1]
            items.append(f"{name!r}: None if r[{i}] is None else decode_{i}(r[{i}])")
        else:
            items.append(f"{name!r}: r[{i}]")
    namespace["FIELDS"] = frozenset(model.model_fields)
    source = (
        "def build(r):\n"
        f"    values = {{{', '.join(items)}}}\n"
        "    record = new(M)\n"
        "    record.__setstate__({'__dict__': values, '__pydantic_fields_set__': set(FIELDS),"
        " '__pydantic_extra__': None, '__pydantic_private__': None})\n"
        "    return record\n"
    )
    exec(compile(source, f"<row builder of {model.__name__}>", "exec"), namespace)
    build: Callable[[Sequence[Any]], Any] = namespace["build"]
    return build


def params_writer(
    columns: Sequence[str], encoders: Mapping[str, Encode]
) -> Callable[[Any], list[Any]]:
    """A function from a model to the values of ``columns`` as the backend stores them, written
    once per column list (as ``row_builder`` is): a write's parameters without a lookup and a
    call per column."""
    namespace: dict[str, Any] = {}
    items = []
    for i, column in enumerate(columns):
        if column in encoders:
            namespace[f"encode_{i}"] = encoders[column]
            items.append(f"None if (v{i} := r.{column}) is None else encode_{i}(v{i})")
        else:
            items.append(f"r.{column}")
    source = f"def params(r):\n    return [{', '.join(items)}]\n"
    exec(compile(source, f"<parameters of {', '.join(columns)}>", "exec"), namespace)
    params: Callable[[Any], list[Any]] = namespace["params"]
    return params


class ThroughModels:
    """``find_values`` for an adapter that reads records as models, through its ``find``
    (PostgreSQL)."""

    _spec: TableSpec
    find: Callable[..., Awaitable[list[Any]]]

    async def find_values(
        self,
        fields: tuple[str, ...],
        *conds: Cond,
        order_by: str | None = None,
        descending: bool = False,
        limit: int | None = None,
        skip_locked: bool = False,
    ) -> list[tuple[Any, ...]]:
        found = await self.find(
            *conds, order_by=order_by, descending=descending, limit=limit, skip_locked=skip_locked
        )
        return [tuple(getattr(record, field) for field in fields) for record in found]


def encode_json(value: Any) -> str:
    """A JSON column's text: orjson's, or json's for what orjson refuses."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # integers past 64 bits, which orjson refuses and json keeps exactly
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_LONG_NUMBER = re.compile(r"\d{19}")


def decode_json(value: str) -> Any:
    """A JSON column's value, with integers past 64 bits kept exact."""
    if value == "{}":
        return {}
    if _LONG_NUMBER.search(value):  # orjson would read integers past 64 bits as floats
        return json.loads(value)
    return orjson.loads(value)
