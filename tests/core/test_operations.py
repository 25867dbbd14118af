"""The operation table agrees with the service methods the server binds to it: every row is
bound once, its path, query and body fields are parameters of its method (and nothing of the
transport is), and the caller comes first exactly where a token is needed."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest

from relay_api.operations import OPERATIONS, Operation
from relay_core.config import CoreConfig
from relay_core.services import Context, Services
from relay_core.storage.sqlite import SqliteStorage
from relay_server import bindings
from relay_server.bindings import bind
from relay_server.bridges.local import LocalBridge


def fields(op: Operation[Any]) -> set[str]:
    names = {"body"} if op.body is not None else set()
    for model in (op.path_params, op.query):
        if model is not None:
            names |= set(model.model_fields)
    return names


@pytest.fixture(scope="module")
def bound(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every operation's bound method. Binding opens no unit of work: an empty store serves."""
    storage = SqliteStorage(f"sqlite:///{tmp_path_factory.mktemp('bound') / 'relay.db'}")
    return dict(bind(Services(Context(storage, (LocalBridge(),), CoreConfig()))))


def test_every_operation_is_bound_once(bound: dict[str, Any]) -> None:
    assert set(bound) == {op.id for op in OPERATIONS}
    # One line per operation in the table's source: none bound twice, the later hiding the first.
    source = inspect.getsource(bindings)
    assert len(re.findall(r"^\s+ops\.[A-Z0-9_]+\.id: services\.", source, re.M)) == len(OPERATIONS)


@pytest.mark.parametrize("op", OPERATIONS, ids=lambda op: op.id)
def test_each_row_fits_its_service_method(op: Operation[Any], bound: dict[str, Any]) -> None:
    signature = list(inspect.signature(bound[op.id]).parameters.values())
    takes_caller = bool(signature) and signature[0].name == "caller"
    assert takes_caller == (op.access == "token"), op.id
    named = {p.name: p for p in (signature[1:] if takes_caller else signature)}
    assert "once" not in named, op.id  # a retry key travels with the call, not as a parameter
    assert fields(op) <= set(named), op.id
    for extra in set(named) - fields(op):  # the server never passes it: it must be optional
        assert named[extra].default is not inspect.Parameter.empty, (op.id, extra)


def test_ids_and_routes_are_unique() -> None:
    assert len({op.id for op in OPERATIONS}) == len(OPERATIONS)
    assert len({(op.method, op.path) for op in OPERATIONS}) == len(OPERATIONS)
