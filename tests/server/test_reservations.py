"""Reservations over HTTP on every backend: granted whole or refused whole with the holders in
the way, renewed, released, expired once, released with their task, found by a path, and one
winner of a race."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

import pytest

from relay_api import models as m
from relay_server.app_keys import SERVICES
from tests.server.conftest import Api
from tests.server.test_approval_requests import events_of

REPO = "github.com/acme/shop"


@pytest.fixture
async def api(make_api: Any) -> Api:
    built: Api = await make_api(sweep_seconds=0)
    for agent in ("alice", "bob", "carol"):
        await built.agent(agent)
    return built


async def reserve(api: Api, agent: str, *paths: str, expect: int = 201, **more: Any) -> Any:
    body = {"workspace": REPO, "paths": list(paths)} | more
    return await api.post("/v1/reservations", body, as_=agent, expect=expect)


async def listed(api: Api, **query: str) -> list[int]:
    """The ids of the reservations the list answers for ``query``."""
    page = await api.get(f"/v1/reservations?{urlencode(query)}")
    return [r["reservation_id"] for r in page["reservations"]]


async def sweep(api: Api) -> int:
    swept: int = await api.client.server.app[SERVICES].reservations.sweep()
    return swept


async def test_granted_whole_or_refused_whole_naming_the_holders(api: Api) -> None:
    mine = await reserve(api, "alice", "src/api/**", reason="auth refactor")
    assert mine["holder"] == "alice" and mine["status"] == "active" and mine["exclusive"]
    assert mine["paths"] == ["src/api/**"] and mine["reason"] == "auth refactor"
    refused = await reserve(api, "bob", "docs/a.md", "src/api/app.py", expect=409)
    assert refused["code"] == "conflict" and "alice (#" in refused["detail"]
    [held] = refused["conflicts"]
    assert held["reservation_id"] == mine["reservation_id"] and held["holder"] == "alice"
    assert held["paths"] == ["src/api/**"] and held["reason"] == "auth refactor"
    assert held["exclusive"] is True and held["expires_at"] == mine["expires_at"]
    # All or nothing: docs/a.md was not reserved either.
    assert await listed(api, holder="bob") == []
    assert (await reserve(api, "bob", "docs/a.md"))["holder"] == "bob"
    # Shared beside shared; exclusive against shared; the same holder never contests itself.
    await reserve(api, "carol", "lib/**", exclusive=False)
    await reserve(api, "bob", "lib/x.py", exclusive=False)
    await reserve(api, "alice", "lib/y.py", expect=409)
    await reserve(api, "alice", "src/api/models.py")
    [contested] = await events_of(api, "alice", mine["reservation_id"], "reservation.contested")
    assert contested["data"]["wanted_by"] == "bob" and contested["audience"] == "alice"
    assert contested["data"]["wanted"] == ["docs/a.md", "src/api/app.py"]
    await api.post("/v1/reservations", {"workspace": REPO, "paths": ["x"]}, expect=403)
    operator = {"X-Agent-ID": "carol"}
    acting = await api.post(
        "/v1/reservations", {"workspace": REPO, "paths": ["ops/**"]}, headers=operator, expect=201
    )
    assert acting["holder"] == "carol"
    bad_ones = [{"paths": []}, {"paths": ["a\nb"]}, {"paths": [" "]}, {"paths": ["[z-a]"]}]
    for bad in [*bad_ones, {"paths": ["x"], "ttl_seconds": 59}]:
        await api.post("/v1/reservations", {"workspace": REPO, **bad}, as_="bob", expect=422)


async def test_renewed_released_and_expired_once(api: Api) -> None:
    mine = await reserve(api, "alice", "src/**", ttl_seconds=60)
    path = f"/v1/reservations/{mine['reservation_id']}"
    await api.post(f"{path}/renew", {"ttl_seconds": 60}, as_="bob", expect=403)
    api.clock.advance(50)
    renewed = await api.post(f"{path}/renew", {"ttl_seconds": 120}, as_="alice")
    assert renewed["expires_at"] > mine["expires_at"]
    api.clock.advance(121)
    assert (await api.get(path))["status"] == "expired"  # as it stands
    assert await sweep(api) == 1 and await sweep(api) == 0  # stored once
    [expired] = await events_of(api, "alice", mine["reservation_id"], "reservation.expired")
    assert expired["data"]["paths"] == ["src/**"]
    await api.post(f"{path}/renew", {"ttl_seconds": 60}, as_="alice", expect=409)
    assert (await reserve(api, "bob", "src/app.py"))["holder"] == "bob"  # free again

    theirs = await reserve(api, "carol", "lib/**")
    other = f"/v1/reservations/{theirs['reservation_id']}"
    await api.post(f"{other}/release", as_="alice", expect=403)
    released = await api.post(f"{other}/release", as_="carol")
    assert released["status"] == "released" and released["ended_at"] is not None
    assert (await api.post(f"{other}/release", as_="carol"))["ended_at"] == released["ended_at"]
    [said] = await events_of(api, "carol", theirs["reservation_id"], "reservation.released")
    assert said["data"]["by"] == "carol"
    await api.get("/v1/reservations/999", expect=404)


async def test_a_reservation_for_a_task_ends_with_it(api: Api) -> None:
    task = await api.post("/v1/tasks", {"title": "auth"}, expect=201)
    await reserve(api, "alice", "src/**", task_id=task["task_id"], expect=409)  # not held
    await reserve(api, "alice", "src/**", task_id=424242, expect=404)
    await api.post(f"/v1/tasks/{task['task_id']}/claim", {"agent_id": "alice"}, as_="alice")
    bound = await reserve(api, "alice", "src/**", task_id=task["task_id"])
    assert await sweep(api) == 0  # still held
    await api.post(f"/v1/tasks/{task['task_id']}/complete", {"agent_id": "alice"}, as_="alice")
    assert await sweep(api) == 1
    ended = await api.get(f"/v1/reservations/{bound['reservation_id']}")
    assert ended["status"] == "released"
    [said] = await events_of(api, "alice", bound["reservation_id"], "reservation.released")
    assert said["data"]["by"] == f"task {task['task_id']}"


async def test_listed_by_workspace_holder_and_the_path_they_cover(api: Api) -> None:
    api_paths = await reserve(api, "alice", "src/api/**")
    docs = await reserve(api, "bob", "docs/*.md", exclusive=False)
    await api.post(
        "/v1/reservations",
        {"workspace": "elsewhere", "paths": ["src/api/**"]},
        as_="bob",
        expect=201,
    )

    covering = await listed(api, workspace=REPO, path="src/api/v1/app.py")
    assert covering == [api_paths["reservation_id"]]
    assert await listed(api, workspace=REPO, path="docs/a.md") == [docs["reservation_id"]]
    assert await listed(api, workspace=REPO, path="docs/x/a.md") == []
    assert await listed(api, workspace=REPO, holder="bob") == [docs["reservation_id"]]
    await api.post(f"/v1/reservations/{docs['reservation_id']}/release", as_="bob")
    assert await listed(api, workspace=REPO, holder="bob") == []
    every = await api.get("/v1/reservations", workspace=REPO, include_ended="true", limit=1)
    assert len(every["reservations"]) == 1 and every["next_cursor"]


async def test_of_twenty_agents_at_once_one_holds_the_paths(api: Api) -> None:
    agents = [f"racer-{n}" for n in range(20)]
    for agent in agents:
        await api.agent(agent)

    async def one(agent: str, n: int) -> int:
        paths = ["src/**"] if n % 2 else [f"src/module_{n}.py", "src/shared.py"]
        response = await api.client.post(
            "/v1/reservations",
            json={"workspace": REPO, "paths": paths},
            headers=api.headers(agent, None),
        )
        await response.read()
        return response.status

    statuses = await asyncio.gather(*(one(agent, n) for n, agent in enumerate(agents)))
    assert sorted(statuses) == [201] + [409] * 19
    active = (await api.get("/v1/reservations", workspace=REPO))["reservations"]
    assert len(active) == 1


# Spellings of held paths that name a path otherwise than git does: each would protect nothing
# while its holder believed it held the file.
MISNAMED = (
    ("src//api/x.py", "empty segment"),
    ("src/./api/x.py", "'.'"),
    ("src/../src/api/x.py", "'..'"),
    ("..", "'..'"),
    ("../shop/src/api/x.py", "'..'"),
    ("./src/api/x.py", "'.'"),
    (":(top)src/api/x.py", "pathspec magic"),
    (":/src/api/x.py", "pathspec magic"),
    (":!src/api/x.py", "pathspec magic"),
    ("!src/api/x.py", "'!'"),
    (" src/api/x.py", "whitespace"),
    ("src/api/x.py ", "whitespace"),
    ("/home/dev/shop/src/api/x.py", "absolute"),
    ("/src/api/x.py", "absolute"),
)


@pytest.mark.parametrize(("pattern", "why"), MISNAMED)
async def test_a_pattern_that_names_a_path_otherwise_than_git_is_422(
    api: Api, pattern: str, why: str
) -> None:
    refused = await reserve(api, "bob", "docs/a.md", pattern, expect=422)
    assert refused["code"] == "validation_error", refused
    [error] = refused["detail"]
    assert why in error["msg"] and repr(pattern) in error["msg"]
    assert await listed(api, holder="bob") == []  # all or nothing
    assert (await reserve(api, "bob", "src/api/", "src/api/x.py"))["holder"] == "bob"


async def test_a_grant_weighs_every_active_reservation_of_its_workspace(make_api: Any) -> None:
    """Past 10,000 older ones (the grant once weighed only the oldest 10,000), the newest
    holder's paths still hold."""
    api: Api = await make_api(
        sweep_seconds=0,
        reservations_per_workspace=20_000,
        reservation_patterns_per_workspace=20_000,
    )
    for agent in ("alice", "bob"):
        await api.agent(agent)
    services = api.client.server.app[SERVICES]
    now = api.clock.now
    async with services.reservations.ctx.storage.unit_of_work(write=True) as uow:
        for n in range(10_000):
            older = {"workspace": REPO, "paths": [f"vendor/{n}/"], "exclusive": True}
            await uow.reservations.insert(
                m.Reservation(
                    **older,
                    holder=f"old-{n % 50}",
                    created_at=now,
                    expires_at=now + timedelta(hours=1),
                )
            )
        await uow.commit()
    held = await reserve(api, "alice", "src/**")
    refused = await reserve(api, "bob", "src/main.py", expect=409)
    assert [c["reservation_id"] for c in refused["conflicts"]] == [held["reservation_id"]]


async def test_an_agent_and_a_workspace_hold_at_most_their_caps(make_api: Any) -> None:
    api: Api = await make_api(
        sweep_seconds=0,
        reservations_per_agent=2,
        reservation_patterns_per_agent=3,
        reservations_per_workspace=4,
        reservation_patterns_per_workspace=5,
    )
    for agent in ("alice", "bob", "carol"):
        await api.agent(agent)
    first = await reserve(api, "alice", "a/1.py")
    await reserve(api, "alice", "a/2.py")
    refused = await reserve(api, "alice", "a/3.py", expect=409)
    assert refused["code"] == "conflict"
    assert "alice holds 2 active reservations, and at most 2 may be" in refused["detail"]
    await api.post(f"/v1/reservations/{first['reservation_id']}/release", {}, as_="alice")
    refused = await reserve(api, "alice", "a/3.py", "a/4.py", "a/5.py", expect=409)
    assert "alice's reservations hold 1 active patterns, and at most 3" in refused["detail"]
    await reserve(api, "alice", "a/3.py")  # two reservations, two patterns: within both
    await reserve(api, "bob", "b/1.py", "b/2.py")  # the workspace: 3 reservations, 4 patterns
    refused = await reserve(api, "carol", "c/1.py", "c/2.py", expect=409)
    assert "its reservations hold 4 active patterns, and at most 5" in refused["detail"]
    await reserve(api, "carol", "c/1.py")
    refused = await reserve(api, "carol", "c/2.py", expect=409)
    assert "it has 4 active reservations, and at most 4 may be" in refused["detail"]
    # Other workspaces are not this one's.
    assert (await reserve(api, "carol", "c/2.py", workspace="github.com/acme/other"))["holder"]
