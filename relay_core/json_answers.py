"""A service's answer as JSON, with records kept as stored JSON embedded as they are.

A page of a hundred rows built as models and then serialised spent most of its time on the
models. The rows of the hot pages come from storage already as one JSON array (the
named statements), held in the page's model as ``JsonRecords``
(which ``model_dump_json`` writes too: ``relay_api.models.Rows``); the answer's JSON is written
around them.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from relay_core.json_records import JsonRecords


def answer_json(answer: BaseModel) -> bytes:
    """``answer``'s JSON, as ``model_dump_json`` writes it; records held as stored JSON are
    embedded as they are."""
    values = answer.__dict__
    # By exact type: JsonRecords is a Sequence, whose isinstance goes through the ABC machinery
    # (a request's answer of 22 fields spent 20 of them doing so).
    if JsonRecords not in map(type, values.values()):
        return answer.model_dump_json().encode()
    fields: dict[str, Any] = {}
    for name, field in type(answer).model_fields.items():
        value = values[name]
        if field.exclude or (field.exclude_if is not None and field.exclude_if(value)):
            continue  # as model_dump_json leaves it out
        if type(value) is JsonRecords:
            fields[name] = orjson.Fragment(value.json)
        else:
            fields[name] = to_jsonable_python(value)
    return orjson.dumps(fields)
