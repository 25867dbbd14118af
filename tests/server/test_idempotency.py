"""Idempotency keys and visible redelivery, over the real app on every backend."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from relay_core.idempotency import RetryKey
from relay_server.app_keys import SERVICES
from tests.server.conftest import OPERATOR_TOKEN, Api

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


async def send(api: Api, key: str, body: dict[str, object], token: str) -> tuple[int, bytes, str]:
    response = await api.client.post(
        "/v1/messages",
        json=body,
        headers={"Authorization": f"Bearer {token}", "Idempotency-Key": key},
    )
    return response.status, await response.read(), response.headers.get("Idempotent-Replayed", "")


async def test_same_key_same_body_replays_byte_for_byte(api: Api) -> None:
    await api.agent("alice")
    await api.agent("bob")
    body = {"to": "bob", "text": "exactly once"}
    first = await send(api, "k-1-0123456789abcdef", body, api.tokens["alice"])
    again = await send(api, "k-1-0123456789abcdef", body, api.tokens["alice"])
    assert first[0] == again[0] == 201
    assert first[1] == again[1]  # the very same bytes
    assert (first[2], again[2]) == ("", "true")
    inbox = await api.get("/v1/agents/bob/inbox", as_="bob")
    assert [m["text"] for m in inbox["messages"]] == ["exactly once"]


async def test_same_key_different_body_is_409_and_keys_are_per_caller(api: Api) -> None:
    await api.agent("alice")
    await api.agent("bob")
    await send(api, "k-2-0123456789abcdef", {"to": "bob", "text": "one"}, api.tokens["alice"])
    status, body, _ = await send(
        api, "k-2-0123456789abcdef", {"to": "bob", "text": "two"}, api.tokens["alice"]
    )
    assert status == 409 and b"different request" in body
    # Bob's k-2 is his own key.
    status, _, replayed = await send(
        api, "k-2-0123456789abcdef", {"to": "alice", "text": "hi"}, api.tokens["bob"]
    )
    assert status == 201 and replayed == ""
    assert (await api.get("/v1/agents/bob/inbox", as_="bob"))["count"] == 1


async def test_concurrent_retries_with_one_key_create_one_row(api: Api) -> None:
    await api.agent("alice")
    await api.agent("bob")
    body = {"to": "bob", "text": "burst"}
    results = await asyncio.gather(
        *(send(api, "k-burst-0123456789abcdef", body, api.tokens["alice"]) for _ in range(10))
    )
    assert {status for status, _, _ in results} == {201}
    assert len({payload for _, payload, _ in results}) == 1
    assert (await api.get("/v1/agents/bob/inbox", as_="bob"))["count"] == 1


async def test_a_key_of_other_characters_than_visible_ascii_is_422(api: Api) -> None:
    # Every create's replay is tests/server/test_operation_rows.py's, row by row.
    headers = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
    bad = await api.client.post(
        "/v1/tasks", json={"title": "x"}, headers={**headers, "Idempotency-Key": "é" * 3}
    )
    assert bad.status == 422
    assert (await bad.json())["detail"][0]["loc"] == ["header", "idempotency-key"]


async def test_keys_expire_after_their_window(make_api: object) -> None:
    api: Api = await make_api(idempotency_ttl_seconds=60)  # type: ignore[operator]
    headers = {"Authorization": f"Bearer {OPERATOR_TOKEN}", "Idempotency-Key": "old-key-0000000001"}
    await api.client.post("/v1/tasks", json={"title": "t"}, headers=headers)
    api.clock.advance(61)
    again = await api.client.post("/v1/tasks", json={"title": "t"}, headers=headers)
    assert again.status == 201 and "Idempotent-Replayed" not in again.headers
    assert len((await api.get("/v1/tasks"))["tasks"]) == 2


async def test_delivery_count_makes_redelivery_visible(api: Api) -> None:
    await api.agent("bob")
    await api.post("/v1/messages", {"to": "bob", "text": "x"}, expect=201)
    first = await api.get("/v1/agents/bob/inbox", as_="bob")
    second = await api.get("/v1/agents/bob/inbox", as_="bob")
    assert first["messages"][0]["delivery_count"] == 1
    assert second["messages"][0]["delivery_count"] == 2
    acked = await api.post(
        f"/v1/messages/{first['messages'][0]['message_id']}/ack", {"agent_id": "bob"}, as_="bob"
    )
    assert acked["delivery_count"] == 2 and acked["status"] == "acked"


async def test_a_stored_answer_holds_no_secret_and_opens_only_with_its_key(api: Api) -> None:
    headers = {
        "Authorization": f"Bearer {OPERATOR_TOKEN}",
        "Idempotency-Key": "reg-0123456789abcdef",
    }
    first = await api.client.post("/v1/agents/register", json={"agent_id": "zed"}, headers=headers)
    token = (await first.json())["token"]
    storage = api.client.app[SERVICES].ctx.storage

    # Found by the hash of the key, as a retry finds it (the fingerprint plays no part).
    key_hash = RetryKey("operator:operator", "reg-0123456789abcdef", "").key_hash
    async with storage.unit_of_work(write=False) as uow:
        record = await uow.idempotency_keys.find("operator:operator", key_hash, since=EPOCH)
    assert record is not None
    assert token not in record.model_dump_json()
    assert "reg-0123456789abcdef" not in record.model_dump_json()
    again = await api.client.post("/v1/agents/register", json={"agent_id": "zed"}, headers=headers)
    assert (await again.json())["token"] == token


async def test_short_keys_are_refused_so_a_public_answer_cannot_be_guessed(api: Api) -> None:
    for key in ("k", "fifteen-chars-x"):
        refused = await api.client.post(
            "/v1/enroll", json={"agent_id": "n"}, headers={"Idempotency-Key": key}
        )
        assert refused.status == 422
        assert (await refused.json())["detail"][0]["loc"] == ["header", "idempotency-key"]
    assert (await api.get("/v1/approvals"))["approvals"] == []
