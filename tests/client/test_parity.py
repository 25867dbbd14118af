"""Every route has a client method, and the sync and async twins agree on every signature."""

from __future__ import annotations

import inspect
import operator

from relay_client import AsyncRelayClient, RelayClient
from relay_core.operations import OPERATIONS


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
