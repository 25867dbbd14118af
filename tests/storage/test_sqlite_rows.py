"""The SQLite adapter builds models from rows without validating them: held here to exactly what
``model_validate`` would build, for every stored resource, with every field set."""

from __future__ import annotations

import types
import typing
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import BaseModel, field_validator

from relay_api import models as m
from relay_core.ports import TABLES, TableSpec
from relay_core.storage.sqlite import SqliteStorage
from relay_core.storage.stores import STORES

NOW = datetime(2026, 11, 22, 21, 35, 25, 123456, tzinfo=UTC)
# The tables read through the generic verbs; the others are stores of named statements
# (tests/storage/test_named_statements.py, test_tasks_store.py).
GENERIC = [spec for spec in TABLES if spec.name not in STORES]
JSON_SAMPLE = {"n": 2**70, "small": 3, "s": "é", "l": [1, None, True], "o": {}}


def sample(annotation: Any) -> Any:
    """A valid value, not a default, for a field of this type."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return sample(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return sample(next(a for a in typing.get_args(annotation) if a is not type(None)))
    if origin is typing.Literal:
        return typing.get_args(annotation)[-1]
    if origin is list:
        return [sample(typing.get_args(annotation)[0])]
    if origin is dict or annotation is dict:
        return dict(JSON_SAMPLE)
    if annotation is typing.Any:
        return dict(JSON_SAMPLE)
    values = {datetime: NOW, bool: True, int: 7, str: "text"}
    if annotation in values:
        return values[annotation]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):  # not stored: shown
        return {name: sample(field.annotation) for name, field in annotation.model_fields.items()}
    raise AssertionError(f"no sample for {annotation!r}")


async def opened_for_samples(sqlite_url: str) -> SqliteStorage:
    """A migrated store whose writer checks no foreign key: the sample rows reference nothing
    real."""
    storage = SqliteStorage(sqlite_url)
    await storage.migrate()
    storage._writer_for_loop().conn.execute("PRAGMA foreign_keys=OFF")
    return storage


def full_record(spec: TableSpec) -> BaseModel:
    fields = {name: sample(field.annotation) for name, field in spec.model.model_fields.items()}
    if spec.generated_key:
        fields[spec.key] = 0
    return spec.model.model_validate(fields)


@pytest.mark.parametrize("spec", GENERIC, ids=[spec.name for spec in GENERIC])
async def test_a_row_reads_back_as_validation_would_build_it(
    sqlite_url: str, spec: TableSpec
) -> None:
    storage = await opened_for_samples(sqlite_url)
    async with storage.unit_of_work(write=True) as uow:
        stored = await getattr(uow, spec.name).insert(full_record(spec))
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        built = await getattr(uow, spec.name).get(getattr(stored, spec.key))
    await storage.close()

    assert built is not None
    validated = spec.model.model_validate({name: getattr(built, name) for name in vars(built)})
    assert built == validated
    assert built.model_dump_json() == validated.model_dump_json()
    assert {k: type(v) for k, v in vars(built).items()} == {
        k: type(v) for k, v in vars(validated).items()
    }
    assert built.model_fields_set == validated.model_fields_set
    # And no stored field was lost on the way through SQLite (64-bit-plus integers included).
    columns = storage._sqls[spec.name].columns
    assert {c: getattr(built, c) for c in columns} == {c: getattr(stored, c) for c in columns}


def validators(model: type[BaseModel]) -> set[str]:
    """Every validating function pydantic runs for ``model``, its nested models included: the
    work the row builders skip."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if str(node.get("type", "")).startswith("function-"):
                function = node.get("function", {}).get("function")
                found.add(getattr(function, "__qualname__", repr(function)))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(model.__pydantic_core_schema__)
    if model.model_post_init is not BaseModel.model_post_init:
        found.add(f"{model.__name__}.model_post_init")
    return found


@pytest.mark.parametrize("spec", TABLES, ids=lambda spec: spec.name)
def test_no_stored_model_has_a_validator_the_row_builders_would_skip(spec: TableSpec) -> None:
    """A validator on a stored resource would run on the way in and never on the way out (the
    row builders skip validation). Give the check to the request model instead, or build that
    table's rows through ``model_validate``."""
    assert validators(spec.model) == set()


def test_a_validator_on_a_resource_is_found() -> None:
    class Checked(m.Space):
        @field_validator("space_id")
        @classmethod
        def lower(cls, value: str) -> str:
            return value.lower()

    assert validators(Checked) == {"test_a_validator_on_a_resource_is_found.<locals>.Checked.lower"}
