"""Outbound webhooks through the real app, to a real receiver (an aiohttp app) that verifies
every request with the ``standardwebhooks`` package from PyPI, as a receiver would."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from relay_server.app_keys import SERVICES
from tests.server.conftest import Api, AppFactory

FAST = {"webhooks_allow_private": True, "webhook_retry_schedule": "1,1,1"}


@dataclass
class Received:
    headers: dict[str, str]
    body: str

    @property
    def payload(self) -> Any:
        return json.loads(self.body)


@dataclass
class Receiver:
    """An endpoint: answers each request with the next status of ``script`` (then 200), with
    ``headers``, and keeps what it was sent."""

    url: str = ""
    script: list[int] = field(default_factory=list)
    headers: dict[str, str] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)

    async def handle(self, request: web.Request) -> web.Response:
        self.received.append(Received(dict(request.headers), await request.text()))
        status = self.script.pop(0) if self.script else 200
        return web.Response(
            status=status, text="nope" if status >= 300 else "", headers=self.headers
        )

    async def wait_for(self, count: int, timeout: float = 15) -> list[Received]:
        deadline = asyncio.get_running_loop().time() + timeout
        while len(self.received) < count:
            assert asyncio.get_running_loop().time() < deadline, self.received
            await asyncio.sleep(0.05)
        return self.received

    def verified(self, secret: str, index: int = -1) -> Any:
        """The request's body, verified with the secret as the spec's receivers do."""
        got = self.received[index]
        return Webhook(secret).verify(got.body, got.headers)


@pytest.fixture
async def receiver(aiohttp_server: Callable[..., Awaitable[TestServer]]) -> Receiver:
    endpoint = Receiver()
    app = web.Application()
    app.router.add_post("/hook", endpoint.handle)
    server = await aiohttp_server(app)
    endpoint.url = str(server.make_url("/hook"))
    return endpoint


async def deliveries(api: Api, webhook_id: int, **query: Any) -> list[dict[str, Any]]:
    return list((await api.get(f"/v1/webhooks/{webhook_id}/deliveries", **query))["deliveries"])


async def attempted(api: Api, webhook_id: int, attempts: int, timeout: float = 15) -> None:
    """Once the newest delivery's first ``attempts`` attempts are stored (with each failure,
    the time of its next attempt)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        newest = (await deliveries(api, webhook_id))[0]
        if newest["attempts"] >= attempts:
            return
        assert asyncio.get_running_loop().time() < deadline, newest
        await asyncio.sleep(0.05)


async def settled(api: Api, webhook_id: int, timeout: float = 15) -> list[dict[str, Any]]:
    """The endpoint's deliveries once none is pending."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = await deliveries(api, webhook_id)
        if found and all(d["status"] != "pending" for d in found):
            return found
        assert asyncio.get_running_loop().time() < deadline, found
        await asyncio.sleep(0.05)


async def test_an_event_is_delivered_signed_and_the_secret_is_shown_once(
    make_api: AppFactory, receiver: Receiver
) -> None:
    api = await make_api(**FAST)
    created = await api.post("/v1/webhooks", {"url": receiver.url}, expect=201)
    secret = created["secret"]
    assert secret.startswith("whsec_") and created["events"] == ["*"] and created["enabled"]
    shown = await api.get(f"/v1/webhooks/{created['webhook_id']}")
    assert shown["secret"] is None and shown["url"] == receiver.url
    await api.agent("ann")
    await api.agent("bob")
    sent = await api.post("/v1/messages", {"to": "bob", "text": "hi"}, as_="ann", expect=201)
    await receiver.wait_for(1)
    payload = receiver.verified(secret)
    assert payload["type"] == "message.created"
    assert payload["data"]["message_id"] == sent["message_id"]
    assert payload["data"]["to"] == "bob" and "text" not in payload["data"]
    headers = receiver.received[0].headers
    assert headers["webhook-id"] == f"msg_{created['webhook_id']}_{payload['data']['event_id']}"
    assert headers["Content-Type"] == "application/json"
    [delivery] = await settled(api, created["webhook_id"])
    assert delivery["status"] == "succeeded" and delivery["attempts"] == 1
    assert delivery["message_id"] == headers["webhook-id"] and delivery["last_status_code"] == 200
    with pytest.raises(WebhookVerificationError):
        receiver.verified("whsec_" + "A" * 43 + "=")  # another secret does not verify


async def test_an_event_and_its_delivery_keep_the_trace_it_happened_in(
    make_api: AppFactory, receiver: Receiver
) -> None:
    """The request's trace is kept with the event it made (in the feed) and handed on in the
    ``traceparent`` header of each delivery of it; an event made outside any trace has none."""
    api = await make_api(**FAST)
    hook = await api.post(
        "/v1/webhooks", {"url": receiver.url, "events": ["message.created"]}, expect=201
    )
    await api.agent("ann")
    await api.agent("bob")
    cursor = (await api.get("/v1/events"))["cursor"]
    traced = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    sent = [
        await api.post(
            "/v1/messages", {"to": "bob", "text": text}, as_="ann", expect=201, headers=headers
        )
        for text, headers in (("traced", {"traceparent": traced}), ("untraced", None))
    ]
    feed = (await api.get("/v1/events", after=cursor))["events"]
    assert [(e["subject_id"], e["traceparent"]) for e in feed] == [
        (str(sent[0]["message_id"]), traced),
        (str(sent[1]["message_id"]), None),
    ]
    await receiver.wait_for(2)
    handed_on = {
        json.loads(got.body)["data"]["message_id"]: got.headers.get("traceparent")
        for got in receiver.received
    }
    assert handed_on == {sent[0]["message_id"]: traced, sent[1]["message_id"]: None}
    await settled(api, hook["webhook_id"])


async def test_failures_are_retried_with_the_same_webhook_id_until_the_schedule_is_spent(
    make_api: AppFactory, receiver: Receiver
) -> None:
    api = await make_api(**FAST)
    created = await api.post("/v1/webhooks", {"url": receiver.url}, expect=201)
    receiver.script = [500, 500, 200]
    await api.agent("cy")
    for attempt in range(3):
        if attempt == 0:
            await api.post("/v1/tasks", {"title": "t"}, as_="cy", expect=201)
        else:
            # past the schedule's next delay (1 s ± 10%), once the failure before is stored
            await attempted(api, created["webhook_id"], attempt)
            api.clock.now += timedelta(seconds=2)
        await receiver.wait_for(attempt + 1)
    ids = {got.headers["webhook-id"] for got in receiver.received}
    assert len(ids) == 1
    for index in range(3):
        assert receiver.verified(created["secret"], index)["type"] == "task.created"
    [delivery] = await settled(api, created["webhook_id"])
    assert (delivery["status"], delivery["attempts"]) == ("succeeded", 3)

    # Four failures in a row (the first attempt and three retries) fail it for good.
    receiver.script = [500] * 4
    await api.post("/v1/tasks", {"title": "u"}, as_="cy", expect=201)
    for attempt in range(4):
        await receiver.wait_for(4 + attempt)
        await attempted(api, created["webhook_id"], attempt + 1)
        api.clock.now += timedelta(seconds=2)
    failed = await deliveries(api, created["webhook_id"], status="failed")
    assert len(failed) == 1 and failed[0]["attempts"] == 4
    assert failed[0]["last_status_code"] == 500 and failed[0]["last_error"] == "answered 500: nope"
    assert failed[0]["next_attempt_at"] is None
    # Sent again by hand: it is pending anew, then succeeds, with the same webhook-id.
    retried = await api.post(
        f"/v1/webhooks/{created['webhook_id']}/deliveries/{failed[0]['delivery_id']}/retry"
    )
    assert (retried["status"], retried["attempts"]) == ("pending", 0)
    await receiver.wait_for(8)
    assert receiver.received[-1].headers["webhook-id"] == failed[0]["message_id"]
    await api.post(
        f"/v1/webhooks/{created['webhook_id']}/deliveries/{failed[0]['delivery_id']}/retry",
        expect=409,
    )


async def test_retry_after_is_followed_and_410_disables_the_endpoint(
    make_api: AppFactory, receiver: Receiver
) -> None:
    api = await make_api(**FAST)
    created = await api.post(
        "/v1/webhooks", {"url": receiver.url, "events": ["task.*"]}, expect=201
    )
    receiver.script, receiver.headers = [503], {"Retry-After": "120"}
    await api.agent("dee")
    await api.post("/v1/tasks", {"title": "later"}, as_="dee", expect=201)
    await receiver.wait_for(1)
    await asyncio.sleep(0.3)
    [pending] = await deliveries(api, created["webhook_id"])
    assert pending["status"] == "pending" and pending["last_status_code"] == 503
    waited = api.clock.now + timedelta(seconds=120)
    assert pending["next_attempt_at"].replace("Z", "+00:00") == waited.isoformat()

    receiver.script, receiver.headers = [410], {}
    api.clock.now += timedelta(seconds=121)
    await receiver.wait_for(2)
    await asyncio.sleep(0.3)
    endpoint = await api.get(f"/v1/webhooks/{created['webhook_id']}")
    assert endpoint["enabled"] is False and "410" in endpoint["disabled_reason"]
    [gone] = await deliveries(api, created["webhook_id"])
    assert gone["status"] == "failed" and gone["last_status_code"] == 410


async def test_a_stuck_endpoints_backlog_does_not_hold_up_another(
    make_api: AppFactory,
    receiver: Receiver,
    aiohttp_server: Callable[..., Awaitable[TestServer]],
) -> None:
    """An endpoint that never answers keeps its four requests in flight and its backlog
    pending, first in line; another endpoint still gets every event as it happens."""
    released = asyncio.Event()

    async def stuck(request: web.Request) -> web.Response:
        await released.wait()
        return web.Response(status=204)

    app = web.Application()
    app.router.add_post("/stuck", stuck)
    server = await aiohttp_server(app)
    api = await make_api(**FAST, webhook_timeout_seconds=120)
    await api.post("/v1/webhooks", {"url": str(server.make_url("/stuck"))}, expect=201)
    await api.post("/v1/webhooks", {"url": receiver.url}, expect=201)
    await api.agent("di")
    try:
        for batch in (1, 2):  # the second's events come after the stuck endpoint's backlog
            for _ in range(40):
                await api.post("/v1/tasks", {"title": "t"}, as_="di", expect=201)
            await receiver.wait_for(40 * batch, timeout=10)
    finally:
        released.set()


async def test_finished_deliveries_are_deleted_past_their_keeping_pending_ones_never(
    make_api: AppFactory, receiver: Receiver
) -> None:
    api = await make_api(**FAST, webhook_keep_days=30)
    created = await api.post("/v1/webhooks", {"url": receiver.url}, expect=201)
    hook = created["webhook_id"]
    await api.agent("ed")
    receiver.script = [200, 500, 500, 500, 500]  # the first succeeds, the second fails for good
    await api.post("/v1/tasks", {"title": "kept a while"}, as_="ed", expect=201)
    await receiver.wait_for(1)
    await api.post("/v1/tasks", {"title": "failed"}, as_="ed", expect=201)
    for attempt in range(4):
        await receiver.wait_for(2 + attempt)
        await asyncio.sleep(0.2)
        api.clock.now += timedelta(seconds=2)
    finished = await settled(api, hook)
    assert sorted(d["status"] for d in finished) == ["failed", "succeeded"]
    receiver.script = [500] * 10  # a third stays pending, retried later
    api.clock.now += timedelta(days=29)
    await api.post("/v1/tasks", {"title": "pending"}, as_="ed", expect=201)
    await receiver.wait_for(6)
    services = api.client.server.app[SERVICES]
    assert await services.webhooks.sweep() == 0  # 29 days: kept
    api.clock.now += timedelta(days=2)
    assert await services.webhooks.sweep() == 2
    [left] = await deliveries(api, hook)
    assert left["status"] == "pending"
    assert await services.webhooks.sweep() == 0


async def test_a_rotated_secret_signs_beside_the_old_one_for_the_window(
    make_api: AppFactory, receiver: Receiver
) -> None:
    api = await make_api(**FAST, webhook_secret_overlap_seconds=3600)
    created = await api.post("/v1/webhooks", {"url": receiver.url}, expect=201)
    webhook_id, old = created["webhook_id"], created["secret"]
    rotated = await api.post(f"/v1/webhooks/{webhook_id}/rotate-secret")
    new = rotated["secret"]
    assert new != old and new.startswith("whsec_")
    await api.post(f"/v1/webhooks/{webhook_id}/test")
    await receiver.wait_for(1)
    assert len(receiver.received[0].headers["webhook-signature"].split(" ")) == 2
    assert receiver.verified(old)["type"] == receiver.verified(new)["type"] == "webhook.test"

    api.clock.now += timedelta(seconds=3601)  # the window is over: the new secret alone
    await api.post(f"/v1/webhooks/{webhook_id}/test")
    await receiver.wait_for(2)
    assert receiver.verified(new)["data"] == {"webhook_id": webhook_id}
    with pytest.raises(WebhookVerificationError):
        receiver.verified(old)


async def test_an_endpoint_gets_only_the_events_it_subscribes_to_and_the_test_event(
    make_api: AppFactory, receiver: Receiver
) -> None:
    api = await make_api(**FAST)
    created = await api.post(
        "/v1/webhooks",
        {"url": receiver.url, "events": ["approval.*"], "description": "approvals"},
        expect=201,
    )
    await api.agent("eve")
    await api.post("/v1/messages", {"to": "eve", "text": "not this"}, expect=201)
    asked = await api.post("/v1/approvals", {"title": "deploy?"}, as_="eve", expect=201)
    await receiver.wait_for(1)
    await api.post(f"/v1/webhooks/{created['webhook_id']}/test")
    await receiver.wait_for(2)
    first, second = (got.payload for got in receiver.received)
    assert first["type"] == "approval.requested"
    assert first["data"]["approval_id"] == asked["approval_id"]
    assert second["type"] == "webhook.test"
    assert [d["event_type"] for d in await settled(api, created["webhook_id"])] == [
        "webhook.test",
        "approval.requested",
    ]


async def test_an_endpoint_is_changed_disabled_and_enabled(
    make_api: AppFactory, receiver: Receiver
) -> None:
    api = await make_api(**FAST)
    created = await api.post("/v1/webhooks", {"url": receiver.url}, expect=201)
    webhook_id = created["webhook_id"]
    changed = await api.post(
        f"/v1/webhooks/{webhook_id}",
        {"url": receiver.url + "?v=2", "events": ["task.created"], "description": "tasks"},
    )
    assert changed["events"] == ["task.created"] and changed["url"].endswith("?v=2")
    assert (await api.post(f"/v1/webhooks/{webhook_id}/disable"))["enabled"] is False
    await api.agent("fay")
    await api.post("/v1/tasks", {"title": "unseen"}, as_="fay", expect=201)
    assert (await api.post(f"/v1/webhooks/{webhook_id}/enable"))["enabled"] is True
    await api.post("/v1/tasks", {"title": "seen"}, as_="fay", expect=201)
    await receiver.wait_for(1)
    await asyncio.sleep(0.3)
    assert len(receiver.received) == 1  # what happened while it was disabled is not sent
    listed = await api.get("/v1/webhooks")
    assert [w["webhook_id"] for w in listed["webhooks"]] == [webhook_id]
    assert all(w["secret"] is None for w in listed["webhooks"])


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data",
        "http://10.0.0.1/hook",
        "http://[::1]:8080/hook",
        "http://localhost/hook",
        "http://192.168.1.10/hook",
        "http://[fe80::1]/hook",
        "http://0.0.0.0/hook",
        "http://[::7f00:1]/hook",  # IPv4-compatible 127.0.0.1
        "http://[::ffff:0:7f00:1]/hook",  # IPv4-translated
        "http://[64:ff9b::7f00:1]/hook",  # NAT64
        "http://[64:ff9b::a00:1]/hook",  # NAT64 of 10.0.0.1
        "http://[2002:7f00:1::]/hook",  # 6to4
    ],
)
async def test_private_addresses_are_refused_without_the_setting(
    make_api: AppFactory, url: str
) -> None:
    api = await make_api()
    refused = await api.post("/v1/webhooks", {"url": url}, expect=422)
    [error] = refused["detail"]
    assert error["loc"] == ["body", "url"] and "RELAY_WEBHOOKS_ALLOW_PRIVATE" in error["msg"]


async def test_a_rebinding_resolver_gets_no_delivery_through(
    make_api: AppFactory, receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host answers a "public" address while it is checked, then 127.0.0.1: the sender
    connects only to the address it checked, so the loopback receiver gets nothing. (127.0.0.2
    stands in for a public address: no test sends anything off this machine.)"""
    import socket

    from relay_core import webhooks

    port = int(receiver.url.split(":")[2].split("/")[0])
    answers = ["127.0.0.2", "127.0.0.2", "127.0.0.1", "127.0.0.1"]
    real_getaddrinfo, real_refused = socket.getaddrinfo, webhooks._refused

    def rebinding(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host != "rebind.test":
            return real_getaddrinfo(host, *args, **kwargs)
        address = answers.pop(0) if len(answers) > 1 else answers[0]
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    monkeypatch.setattr(webhooks, "_refused", lambda a: a != "127.0.0.2" and real_refused(a))
    api = await make_api()
    url = f"http://rebind.test:{port}/hook"
    created = await api.post("/v1/webhooks", {"url": url}, expect=201)
    await api.agent("ann")
    await api.agent("bob")
    await api.post("/v1/messages", {"to": "bob", "text": "hi"}, as_="ann", expect=201)
    deadline = asyncio.get_running_loop().time() + 15
    while not (found := await deliveries(api, created["webhook_id"])) or not found[0]["attempts"]:
        assert asyncio.get_running_loop().time() < deadline, found
        await asyncio.sleep(0.05)
    # It connected to 127.0.0.2, where nothing listens: refused there, never rebound.
    assert found[0]["last_error"] == "ClientConnectorError reaching rebind.test"
    assert receiver.received == []


@pytest.mark.parametrize(
    "body",
    [
        {"url": "ftp://example.com/"},
        {"url": "https://"},
        {"url": "https://user:pw@example.com/"},
        {"url": "https://example.com/" + "a" * 2000},
        {"url": "https://example.com:99999/"},
        {"url": "https://example.com/", "events": []},
        {"url": "https://example.com/", "events": ["Message Created"]},
        {"url": "https://example.com/", "secret": "mine"},
    ],
)
async def test_bad_endpoints_are_refused(make_api: AppFactory, body: dict[str, Any]) -> None:
    api = await make_api(**FAST)
    await api.post("/v1/webhooks", body, expect=422)


async def test_only_the_operator_manages_webhooks(make_api: AppFactory, receiver: Receiver) -> None:
    api = await make_api(**FAST)
    await api.agent("gus")
    await api.post("/v1/webhooks", {"url": receiver.url}, as_="gus", expect=403)
    await api.get("/v1/webhooks", as_="gus", expect=403)
    await api.get("/v1/webhooks/1", expect=404)
    await api.post("/v1/webhooks/1/test", expect=404)
