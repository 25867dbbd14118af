"""Every list answers a bounded page and a cursor to the next one, on every backend."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tests.server.conftest import Api

Seed = Callable[[Api, int], Awaitable[None]]


async def agents(api: Api, n: int) -> None:
    await api.agent(f"agent-{n:02d}")


async def tasks(api: Api, n: int) -> None:
    await api.post("/v1/tasks", {"title": f"t{n}"}, expect=201)


async def approvals(api: Api, n: int) -> None:
    await api.post("/v1/enroll", {"agent_id": f"new-{n:02d}"}, token="", expect=201)


async def actions(api: Api, n: int) -> None:
    await api.post("/v1/actions", {"action": f"a{n}"}, expect=201)


async def notifications(api: Api, n: int) -> None:
    await api.post("/v1/notify", {"text": f"n{n}"}, expect=201)


async def interventions(api: Api, n: int) -> None:
    # The test clock stands still: every intervention has the same created_at, so the pages
    # must break ties on the id.
    body = {"summary": "s", "content": "c"}
    await api.post(f"/v1/interventions/inc-{n:02d}/diagnostic", body, expect=201)


async def rooms(api: Api, n: int) -> None:
    await api.post(f"/v1/rooms/room-{n:02d}/join", {"agent_id": "member"}, expect=201)


async def spaces(api: Api, n: int) -> None:
    await api.post("/v1/spaces", {"space_id": f"space-{n:02d}", "name": f"S{n}"}, expect=201)


LISTS: dict[str, tuple[str, str, str, Seed]] = {
    # name: (path, items field, id field, how to add one)
    "agents": ("/v1/agents", "agents", "agent_id", agents),
    "tasks": ("/v1/tasks", "tasks", "task_id", tasks),
    "approvals": ("/v1/approvals", "approvals", "approval_id", approvals),
    "actions": ("/v1/actions", "actions", "action_id", actions),
    "notifications": ("/v1/notifications", "notifications", "notification_id", notifications),
    "interventions": ("/v1/interventions", "interventions", "intervention_id", interventions),
    "rooms": ("/v1/rooms", "rooms", "room_id", rooms),
    "spaces": ("/v1/spaces", "spaces", "space_id", spaces),
}


async def walk(api: Api, path: str, field: str, **params: Any) -> list[list[Any]]:
    pages: list[list[Any]] = []
    cursor = None
    while True:
        page = await api.get(path, **params, **({"cursor": cursor} if cursor else {}))
        pages.append(page[field])
        cursor = page.get("next_cursor")
        if cursor is None:
            return pages
        assert page[field], "a page that promises more is never empty"


@pytest.mark.parametrize("name", LISTS)
async def test_pages_cover_the_list_once_in_order(api: Api, name: str) -> None:
    path, field, key, seed = LISTS[name]
    if name == "rooms":
        await api.agent("member")
    for n in range(7):
        await seed(api, n)
    whole = (await api.get(path, limit=1000))[field]
    assert "next_cursor" not in await api.get(path, limit=1000)  # absent on the last page
    pages = await walk(api, path, field, limit=3)
    assert [len(page) for page in pages][:2] == [3, 3]
    walked = [item[key] for page in pages for item in page]
    assert walked == [item[key] for item in whole]
    assert len(set(walked)) == len(walked) >= 7


async def test_a_task_trail_is_paged(api: Api) -> None:
    await api.agent("bob")
    task = await api.post("/v1/tasks", {"title": "t"}, expect=201)
    path = f"/v1/tasks/{task['task_id']}"
    await api.post(f"{path}/claim", {"agent_id": "bob"}, as_="bob")
    for n in range(6):
        await api.post(
            f"{path}/events", {"agent_id": "bob", "message": f"m{n}"}, as_="bob", expect=201
        )
    pages = await walk(api, f"{path}/events", "events", limit=4)
    assert [len(page) for page in pages] == [4, 3]
    ids = [event["event_id"] for page in pages for event in page]
    assert ids == sorted(ids)


async def test_the_default_page_is_100_and_the_most_is_1000(api: Api) -> None:
    for n in range(101):
        await tasks(api, n)
    first = await api.get("/v1/tasks")
    assert len(first["tasks"]) == 100 and first["next_cursor"]
    rest = await api.get("/v1/tasks", cursor=first["next_cursor"])
    assert len(rest["tasks"]) == 1 and "next_cursor" not in rest
    for path, *_ in LISTS.values():
        refused = await api.get(path, limit=1001, expect=422)
        assert refused["detail"][0]["loc"] == ["query", "limit"]


def forged(value: str) -> str:
    return base64.urlsafe_b64encode(value.encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        "not a cursor",
        forged("[1, 2, 3]"),
        forged('["x"]'),
        forged("[true]"),
        forged('{"a": 1}'),
        forged(f"[{2**70}]"),
        forged("["),
    ],
)
async def test_a_forged_cursor_is_422(api: Api, cursor: str) -> None:
    refused = await api.get("/v1/tasks", cursor=cursor, expect=422)
    assert refused["detail"][0]["loc"] == ["query", "cursor"]
    assert refused["code"] == "validation_error"
    # Not a time, and a time with no zone (every cursor's time is written with its zone).
    for bad_time in ('["yesterday", "inc"]', '["2026-11-29T10:00:00", "inc"]'):
        refused = await api.get("/v1/interventions", cursor=forged(bad_time), expect=422)
        assert refused["detail"][0]["loc"] == ["query", "cursor"]
