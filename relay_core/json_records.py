"""Records handed on as the JSON they were stored as: a page's rows cost no model each."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar, cast, overload

import orjson
from pydantic import BaseModel

R = TypeVar("R", bound=BaseModel)


class JsonRecords(Sequence[R]):
    """Records of ``model`` as one JSON array, as ``model_dump_json`` writes a list of them: a
    page's rows handed on as stored. An answer's JSON embeds the array as it is
    (``relay_core.json_answers.answer_json``); Python that reads the records (``len``, an
    index, a loop) reads models, decoded once on first use; ``len`` needs no decoding."""

    __slots__ = ("_decoded", "json", "length", "model")

    def __init__(self, model: type[R], length: int, json: str) -> None:
        self.model = model
        self.length = length
        self.json = json
        self._decoded: list[R] | None = None

    @classmethod
    def of(cls, model: type[R], records: list[R]) -> JsonRecords[R]:
        """``records``, written as one array."""
        array = ",".join(record.model_dump_json() for record in records)
        return cls(model, len(records), f"[{array}]")

    def as_field(self) -> list[R]:
        """These records as the value of a model's list field (``model_construct``): they read
        as that list does, and are not changed in place."""
        return cast(list[R], self)

    def _records(self) -> list[R]:
        if self._decoded is None:
            self._decoded = [self.model.model_validate(row) for row in orjson.loads(self.json)]
        return self._decoded

    @overload
    def __getitem__(self, index: int) -> R: ...
    @overload
    def __getitem__(self, index: slice) -> list[R]: ...
    def __getitem__(self, index: int | slice) -> R | list[R]:
        return self._records()[index]

    def __len__(self) -> int:
        return self.length

    def __eq__(self, other: object) -> bool:
        if isinstance(other, JsonRecords | list):
            return self._records() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a list's equality, a list's unhashability

    def __repr__(self) -> str:
        return f"JsonRecords({self.model.__name__}, {self.json!r})"
