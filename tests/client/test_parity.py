"""Every route has a client method, written once: the sync and async clients share each resource
class, and agree on every signature."""

from __future__ import annotations

import ast
import inspect
import operator
import textwrap

from relay_api import operations as ops
from relay_api.operations import OPERATIONS
from relay_client import AsyncRelayClient, RelayClient
from relay_client.resources._resource import Resource


def same_signature(sync_method: object, async_method: object) -> bool:
    """Same parameters and the same return type (an iterator's twin is an async iterator)."""
    left, right = inspect.signature(sync_method), inspect.signature(async_method)  # type: ignore[arg-type]
    returns = str(right.return_annotation).replace("AsyncIterator", "Iterator")
    return left.parameters == right.parameters and str(left.return_annotation) == returns


def test_every_route_has_a_method_on_both_twins() -> None:
    sync, async_ = RelayClient("http://relay.invalid"), AsyncRelayClient("http://relay.invalid")
    for route in OPERATIONS:
        sync_method = operator.attrgetter(route.id)(sync)
        async_method = operator.attrgetter(route.id)(async_)
        assert not inspect.iscoroutinefunction(sync_method), route.id
        assert inspect.iscoroutinefunction(async_method) or inspect.isasyncgenfunction(
            async_method
        ), route.id
        assert same_signature(sync_method, async_method), route.id
    sync.close()


def test_twin_resources_have_the_same_public_methods() -> None:
    sync, async_ = RelayClient("http://relay.invalid"), AsyncRelayClient("http://relay.invalid")
    for name in (
        "agents",
        "messages",
        "notify",
        "rooms",
        "spaces",
        "tasks",
        "actions",
        "enroll",
        "approvals",
        "interventions",
    ):
        left, right = getattr(sync, name), getattr(async_, name)
        public = {n for n in dir(left) if not n.startswith("_")}
        assert public == {n for n in dir(right) if not n.startswith("_")}, name
        for method in public:
            assert same_signature(getattr(left, method), getattr(right, method)), f"{name}.{method}"
    sync.close()


def source_of(cls: type) -> str:
    """A resource class's source with its generated base's."""
    own = [k for k in cls.__mro__ if k.__module__.startswith("relay_client.resources.")]
    return "\n".join(textwrap.dedent(inspect.getsource(k)) for k in own)


def code_strings(source: str) -> list[str]:
    """The string literals of ``source`` but its docstrings."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        and id(node) not in docstrings
    ]  # fmt: skip


def operations_named_in(cls: type) -> set[str]:
    """The table rows (``ops.NAME``) a resource class's methods use."""
    tree = ast.parse(source_of(cls))
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "ops"
    }


def test_the_sdk_reaches_the_server_only_through_the_operation_table() -> None:
    """No path, method or retry flag is written in a resource: each comes from its row. Both
    clients share each resource's class (written once), and together use every row."""
    sync, async_ = RelayClient("http://relay.invalid"), AsyncRelayClient("http://relay.invalid")
    used = operations_named_in(RelayClient)  # the client's own (health, status, search)
    for name, resource in vars(sync).items():
        if name.startswith("_") or not isinstance(resource, Resource):
            continue
        assert type(getattr(async_, name)) is type(resource), name
        source = source_of(type(resource))
        assert not any("/v1" in text for text in code_strings(source)), name
        assert ".send(" not in source, name
        used |= operations_named_in(type(resource))
    rows = {name for name, value in vars(ops).items() if isinstance(value, ops.Operation)}
    # events.stream is a loop of long-polls on events.list: it resumes through any proxy.
    long_polled = {"EVENTS_STREAM"}
    assert used | long_polled == rows
    sync.close()
