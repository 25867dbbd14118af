"""Table-driven over the route table, so a new route cannot skip the common rules."""

from __future__ import annotations

import re
from typing import Any

import pytest

from relay_api.operations import OPERATIONS, Operation
from tests.server.conftest import ONE_BACKEND, Api

SAMPLE = {
    "agent_id": "alice",
    "message_id": "1",
    "room_id": "r",
    "space_id": "s",
    "task_id": "1",
    "enroll_id": "1",
    "approval_id": "1",
    "intervention_id": "i",
    "notification_id": "1",
    "policy_id": "1",
    "webhook_id": "1",
    "delivery_id": "1",
    "reservation_id": "1",
    "call_id": "1",
}


def concrete(route: Operation[Any]) -> str:
    return re.sub(r"\{(\w+)\}", lambda match: SAMPLE[match.group(1)], route.path)


def ids(routes: list[Operation[Any]]) -> list[str]:
    return [r.id for r in routes]


PROTECTED = [r for r in OPERATIONS if r.access == "token"]
WITH_BODY = [r for r in OPERATIONS if r.body is not None]


@pytest.mark.parametrize("route", PROTECTED, ids=ids(PROTECTED))
async def test_every_protected_route_refuses_missing_and_unknown_tokens(
    api: Api, route: Operation[Any]
) -> None:
    for headers in ({}, {"Authorization": "Bearer rly_agent_unknown"}):
        response = await api.client.request(route.method, concrete(route), json={}, headers=headers)
        body = await response.json()
        assert response.status == 401, (route.id, body)
        assert body["code"] == "unauthenticated"
        refused = ' error="invalid_token"' if headers else ""  # RFC 6750: sent, and refused
        assert response.headers["WWW-Authenticate"] == f"Bearer{refused}"


@ONE_BACKEND
@pytest.mark.parametrize("route", WITH_BODY, ids=ids(WITH_BODY))
async def test_every_body_rejects_bad_json_unknown_fields_and_oversize(
    make_api: object, route: Operation[Any]
) -> None:
    api: Api = await make_api(max_body_bytes=4096)  # type: ignore[operator]
    headers = {"Authorization": "Bearer rly_op_test-operator-token-0123456789"}
    path = concrete(route)
    broken = await api.client.request(route.method, path, data=b"{", headers=headers)
    assert broken.status == 422
    assert (await broken.json())["detail"][0]["type"] == "json_invalid"
    assert (await broken.json())["code"] == "validation_error"

    smuggled = await api.client.request(
        route.method, path, json={"claimed_by": "x", "status": "done"}, headers=headers
    )
    detail = (await smuggled.json())["detail"]
    assert smuggled.status == 422
    assert (await smuggled.json())["code"] == "validation_error"
    assert {"type": "extra_forbidden", "loc": ["body", "claimed_by"]}.items() <= next(
        d for d in detail if d["loc"] == ["body", "claimed_by"]
    ).items()

    huge = await api.client.request(
        route.method, path, data=b'{"x": "' + b"y" * 5000 + b'"}', headers=headers
    )
    assert huge.status == 413
    assert (await huge.json())["code"] == "payload_too_large"
