"""Rate limits, the audit of refused requests, and tokens that are never taken from a URL."""

from __future__ import annotations

import asyncio
from typing import Any

from relay_server.app_keys import REFUSALS
from tests.server.conftest import OPERATOR_TOKEN, Api, AppFactory


async def test_per_caller_rate_limit_is_429_with_retry_after(make_api: Any) -> None:
    api: Api = await make_api(rate_limit=0.01, rate_limit_burst=3)
    await api.agent("alice")  # the operator spends one
    statuses = []
    for _ in range(4):
        response = await api.client.get(
            "/v1/agents", headers={"Authorization": f"Bearer {api.tokens['alice']}"}
        )
        statuses.append(response.status)
    assert statuses == [200, 200, 200, 429]
    body = await response.json()
    assert body["code"] == "rate_limited"
    assert int(response.headers["Retry-After"]) >= 1
    # Another caller has its own bucket.
    other = await api.client.get(
        "/v1/agents", headers={"Authorization": f"Bearer {OPERATOR_TOKEN}"}
    )
    assert other.status == 200


async def test_enrollment_is_limited_per_address(make_api: Any) -> None:
    api: Api = await make_api(enroll_rate_limit=0.01, enroll_rate_limit_burst=2)
    codes = [
        (await api.client.post("/v1/enroll", json={"agent_id": f"n{i}"})).status for i in range(3)
    ]
    assert codes == [201, 201, 429]
    polled = await api.client.get("/v1/enroll/1", params={"claim": "x"})
    assert polled.status == 429


async def refused_records(api: Api) -> list[dict[str, Any]]:
    audit = await api.get("/v1/actions")
    return [a for a in audit["actions"] if a["action"] == "auth.refused"]


async def test_refusals_are_audited_once_a_minute_per_address_without_the_token(
    api: Api,
) -> None:
    await api.agent("alice")
    await api.agent("bob")
    await api.get("/v1/agents", token="rly_agent_stolen-or-guessed", expect=401)
    await api.post("/v1/agents/register", {"agent_id": "x"}, as_="alice", expect=403)
    await api.post("/v1/agents/bob/heartbeat", {}, as_="alice", expect=403)
    (first,) = await refused_records(api)  # one address, one minute: one record
    assert (first["agent_id"], first["target"], first["params"]["status"]) == (
        "anonymous",
        "GET /v1/agents",
        401,
    )
    assert first["params"]["remote"] == "127.0.0.1"
    api.clock.advance(61)
    await api.post("/v1/agents/bob/heartbeat", {}, as_="alice", expect=403)
    second, first = await refused_records(api)
    assert first["params"]["count"] == 3  # written when its minute was over
    assert second["target"] == "POST /v1/agents/bob/heartbeat"
    assert second["params"]["count"] == 1
    assert "stolen-or-guessed" not in str(await api.get("/v1/actions"))


async def test_a_flood_of_bad_tokens_is_429_and_one_record(make_api: AppFactory) -> None:
    api = await make_api(refusal_rate_limit=0.01, refusal_rate_limit_burst=20)
    await api.agent("alice")
    await api.get("/v1/agents", as_="alice")  # alice's token is now known good
    long_path = "/v1/agents/" + "x" * 8000 + "/inbox"
    statuses = []
    for n in range(60):
        response = await api.client.get(
            long_path, headers={"Authorization": f"Bearer rly_agent_guess-{n}"}
        )
        await response.read()
        statuses.append(response.status)
        if response.status == 429:
            assert int(response.headers["Retry-After"]) >= 1
    assert statuses[:20] == [401] * 20 and set(statuses[20:]) == {429}
    # An honest client behind the same address goes on: its token is known good.
    await api.get("/v1/agents", as_="alice")
    await api.get("/v1/agents")
    await api.client.app[REFUSALS].flush(everything=True)
    (record,) = await refused_records(api)
    assert record["params"]["count"] == 60
    assert len(record["target"]) <= 200  # the 8 KB path is not stored whole


async def test_a_token_in_the_url_is_never_accepted(api: Api) -> None:
    for name in ("token", "access_token", "authorization"):
        response = await api.client.get("/v1/agents", params={name: OPERATOR_TOKEN})
        assert response.status == 401


async def test_metadata_and_payloads_are_bounded(api: Api) -> None:
    await api.agent("alice")
    big = {"blob": "x" * 70_000}
    refused = await api.post("/v1/tasks", {"title": "t", "payload": big}, expect=422)
    assert refused["detail"][0]["loc"] == ["body", "payload"]
    await api.post("/v1/agents/alice/heartbeat", {"metadata": big}, as_="alice", expect=422)
    await api.post("/v1/tasks", {"title": "t", "payload": {"blob": "x" * 60_000}}, expect=201)
    await api.post("/v1/tasks", {"title": "t" * 501}, expect=422)
    await api.get("/v1/interventions", limit=1001, expect=422)


async def test_ids_past_64_bits_are_422_not_500(api: Api) -> None:
    await api.agent("alice")
    huge = str(2**80)
    bad = await api.post(f"/v1/messages/{huge}/ack", {"agent_id": "alice"}, as_="alice", expect=422)
    assert bad["detail"][0]["loc"] == ["path", "message_id"]
    await api.get(f"/v1/tasks/{huge}/events", expect=422)
    await api.get("/v1/events", after=huge, expect=422)
    await api.post("/v1/messages", {"to": "alice", "text": "x", "reply_to": 2**70}, expect=422)
    await api.get(f"/v1/tasks/{2**63 - 1}", expect=404)


async def test_json_objects_keep_integers_past_64_bits(api: Api) -> None:
    await api.agent("alice")
    huge = {"n": -(2**70), "nested": [2**64]}
    beat = await api.post("/v1/agents/alice/heartbeat", {"metadata": huge}, as_="alice")
    assert beat["metadata"] == huge
    task = await api.post("/v1/tasks", {"title": "t", "payload": huge}, expect=201)
    assert (await api.get(f"/v1/tasks/{task['task_id']}"))["payload"] == huge


async def test_nul_characters_are_refused_on_every_backend(api: Api) -> None:
    await api.agent("alice")
    await api.post("/v1/messages", {"to": "alice", "text": "a\u0000b"}, expect=422)
    await api.post("/v1/tasks", {"title": "t", "payload": {"k": "\u0000"}}, expect=422)
    await api.post("/v1/tasks", {"title": "t", "payload": {"\u0000": 1}}, expect=422)


async def test_concurrent_refusals_at_the_start_of_a_minute_are_one_record(
    api: Api,
) -> None:
    async def refused(n: int) -> int:
        headers = {"Authorization": f"Bearer rly_agent_guess-{n}"}
        response = await api.client.get("/v1/agents", headers=headers)
        await response.read()
        return response.status

    assert await asyncio.gather(*(refused(n) for n in range(20))) == [401] * 20
    await api.client.app[REFUSALS].flush(everything=True)
    (record,) = await refused_records(api)
    assert record["params"]["count"] == 20


async def test_concurrent_refusals_as_a_later_minute_begins_are_one_record(
    make_api: AppFactory,
) -> None:
    """The minute's first refusal closes the last minute's window (writing its count) while
    the others arrive: they are counted on the new window, not given records of their own."""
    api = await make_api(refusal_rate_limit=0)  # 23 refusals: past the burst otherwise

    async def refused(n: int) -> int:
        headers = {"Authorization": f"Bearer rly_agent_guess-{n}"}
        response = await api.client.get("/v1/agents", headers=headers)
        await response.read()
        return response.status

    assert await asyncio.gather(*(refused(n) for n in range(3))) == [401] * 3
    api.clock.advance(61)
    assert await asyncio.gather(*(refused(n) for n in range(20))) == [401] * 20
    await api.client.app[REFUSALS].flush(everything=True)
    later, first = await refused_records(api)
    assert first["params"]["count"] == 3 and later["params"]["count"] == 20


async def test_an_agent_holds_at_most_its_share_of_waits_and_the_operator_is_not_counted(
    make_api: Any,
) -> None:
    """RELAY_MAX_WAITS_PER_CALLER streams and long-polls per agent (here 2): one more is 429
    with Retry-After; another agent and the operator wait as before."""
    api = await make_api(max_waits_per_caller=2)
    for agent in ("greedy", "other"):
        await api.agent(agent)

    async def poll(as_: str | None, expect: int = 200) -> Any:
        path = "/v1/events?wait=2"
        return await api.get(path, as_=as_, expect=expect) if as_ else await api.get(path)

    held = [asyncio.create_task(poll("greedy")) for _ in range(2)]
    await asyncio.sleep(0.3)
    response = await api.client.get(
        "/v1/events?wait=2", headers={"Authorization": f"Bearer {api.tokens['greedy']}"}
    )
    assert response.status == 429 and response.headers["Retry-After"] == "5"
    body = await response.json()
    assert body["code"] == "rate_limited" and "RELAY_MAX_WAITS_PER_CALLER" in body["detail"]
    # Without a wait nothing is held: answered.
    assert "events" in await api.get("/v1/events", as_="greedy")
    others = [poll("other"), *(poll(None) for _ in range(3))]
    await asyncio.gather(*held, *others)
    assert "events" in await poll("greedy")  # its waits ended: its slots are back
