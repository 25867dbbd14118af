"""The operation table agrees with the service methods it names: each row's path, query and body
fields are parameters of its method, a creating row's method takes ``once``, and the caller comes
first exactly where a token is needed."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from relay_core.operations import OPERATIONS, Operation


def fields(op: Operation[Any]) -> set[str]:
    names = {"body"} if op.body is not None else set()
    for model in (op.path_params, op.query):
        if model is not None:
            names |= set(model.model_fields)
    return names


@pytest.mark.parametrize("op", OPERATIONS, ids=lambda op: op.id)
def test_each_row_fits_its_service_method(op: Operation[Any]) -> None:
    signature = list(inspect.signature(op.serve).parameters.values())[1:]  # after self
    takes_caller = bool(signature) and signature[0].name == "caller"
    assert takes_caller == (op.access == "token"), op.id
    named = {p.name: p for p in (signature[1:] if takes_caller else signature)}
    assert ("once" in named) == op.creates, op.id
    assert fields(op) <= set(named), op.id
    for extra in set(named) - fields(op):  # the server never passes it: it must be optional
        assert named[extra].default is not inspect.Parameter.empty, (op.id, extra)


def test_ids_and_routes_are_unique() -> None:
    assert len({op.id for op in OPERATIONS}) == len(OPERATIONS)
    assert len({(op.method, op.path) for op in OPERATIONS}) == len(OPERATIONS)
