"""Answers a service writes as JSON itself: the hot reads' pages.

A page of a hundred rows built as models and then serialised spent most of its time on the
models. The rows of these pages come from storage already as JSON (``Table.find_encoded``, or
one array of them: ``Table.find_encoded_array``), and the page around them is written once,
with the rows embedded as they are. The response model still names the shape (the OpenAPI
document, the clients).
"""

from __future__ import annotations

from typing import Any, Generic

import orjson
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from relay_core.ports import JsonRecord, JsonRecords, R


class JsonAnswer(Generic[R]):
    """A response of ``model``'s shape with every field given: plain JSON values, and encoded
    records (a list of them, or one array) for the model's lists of records."""

    def __init__(self, model: type[R], **fields: Any) -> None:
        if fields.keys() != model.model_fields.keys():
            raise TypeError(f"{model.__name__} takes {sorted(model.model_fields)}")
        self.model = model
        self.fields = fields

    def json(self) -> bytes:
        """The response's JSON, as ``model_dump_json`` would write the model."""
        return orjson.dumps(
            {
                name: _embedded(self.fields[name])
                for name, field in self.model.model_fields.items()
                if not _left_out(field, self.fields[name])
            }
        )


def _left_out(field: FieldInfo, value: Any) -> bool:
    """Whether ``model_dump_json`` leaves this value of the field out."""
    return bool(field.exclude) or (field.exclude_if is not None and field.exclude_if(value))


def _embedded(value: Any) -> Any:
    if isinstance(value, JsonRecords):
        return orjson.Fragment(value.json)
    if isinstance(value, list) and value and isinstance(value[0], JsonRecord):
        return [orjson.Fragment(record.json) for record in value]
    return value


def answer_json(answer: BaseModel | JsonRecord | JsonAnswer[Any]) -> bytes:
    """A service's answer as its JSON: a model dumped, a record or a page as stored."""
    if isinstance(answer, BaseModel):
        return answer.model_dump_json().encode()
    if isinstance(answer, JsonRecord):
        return answer.json.encode()
    return answer.json()
