"""The Slack bridge against a fake Slack Web API served by the test (it records
``chat.postMessage`` and ``chat.update`` and answers as Slack does), with events and
interactions signed as Slack signs them."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlencode

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.server.conftest import Api

BOT_TOKEN = "xoxb-1234-SECRET-bot-token"
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
CHANNEL = "C0RELAY"
OPERATOR = "U0OPERATOR"


class FakeSlack:
    """Slack's Web API as far as Relay uses it: every call recorded, answers as Slack's."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.refuse: str | None = None  # an error to answer every call with
        self.limited = 0  # how many calls to answer 429 first
        self.posted: list[str] = []  # the ts of each message posted, in order

    async def handle(self, request: web.Request) -> web.Response:
        assert request.headers["Authorization"] == f"Bearer {BOT_TOKEN}"
        method = request.match_info["method"]
        params = await request.json()
        self.calls.append((method, params))
        if self.limited:
            self.limited -= 1
            return web.json_response(
                {"ok": False, "error": "ratelimited"}, status=429, headers={"Retry-After": "1"}
            )
        if self.refuse:
            return web.json_response({"ok": False, "error": self.refuse})
        if method == "chat.postMessage":
            ts = f"{1700000000 + len(self.posted)}.000100"
            self.posted.append(ts)
            message = {"type": "message", "text": params.get("text"), "ts": ts}
            return web.json_response(
                {"ok": True, "channel": params["channel"], "ts": ts, "message": message}
            )
        if method == "chat.update":
            return web.json_response(
                {
                    "ok": True,
                    "channel": params["channel"],
                    "ts": params["ts"],
                    "text": params["text"],
                }
            )
        return web.json_response({"ok": False, "error": "unknown_method"})

    def called(self, method: str) -> list[dict[str, Any]]:
        return [params for name, params in self.calls if name == method]


@pytest.fixture
async def slack(aiohttp_server: Callable[..., Awaitable[TestServer]]) -> tuple[FakeSlack, str]:
    fake = FakeSlack()
    app = web.Application()
    app.router.add_post("/api/{method}", fake.handle)
    server = await aiohttp_server(app)
    return fake, str(server.make_url("/api/"))


async def slack_api(make_api: Any, api_url: str) -> Api:
    built: Api = await make_api(
        slack_bot_token=BOT_TOKEN,
        slack_signing_secret=SIGNING_SECRET,
        slack_channel=CHANNEL,
        slack_operators=OPERATOR,
        slack_api_url=api_url,
    )
    return built


@pytest.fixture
async def api(make_api: Any, slack: tuple[FakeSlack, str]) -> Api:
    built = await slack_api(make_api, slack[1])
    await built.agent("alice")
    return built


def signed(body: bytes, *, age: float = 0, secret: str = SIGNING_SECRET) -> dict[str, str]:
    """Headers as Slack signs a request: v0 HMAC-SHA256 over 'v0:<timestamp>:<body>'."""
    timestamp = str(int(time.time() - age))
    base = b"v0:" + timestamp.encode() + b":" + body
    digest = hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": f"v0={digest}"}


def thread_reply(
    thread_ts: str, text: str, *, user: str = OPERATOR, event_id: str = "Ev1"
) -> bytes:
    event = {
        "type": "message",
        "channel": CHANNEL,
        "user": user,
        "text": text,
        "ts": "1800000000.000200",
        "thread_ts": thread_ts,
    }
    return json.dumps({"type": "event_callback", "event_id": event_id, "event": event}).encode()


async def post_event(api: Api, body: bytes, headers: dict[str, str] | None = None) -> int:
    sent = headers if headers is not None else signed(body)
    answer = await api.client.post(
        "/v1/bridges/slack/events",
        data=body,
        headers={**sent, "Content-Type": "application/json"},
    )
    return answer.status


async def click(api: Api, approval_id: int, verb: str, user: str = OPERATOR) -> int:
    payload = {
        "type": "block_actions",
        "user": {"id": user},
        "actions": [{"action_id": verb, "value": str(approval_id), "type": "button"}],
    }
    body = urlencode({"payload": json.dumps(payload)}).encode()
    answer = await api.client.post(
        "/v1/bridges/slack/interactions",
        data=body,
        headers={**signed(body), "Content-Type": "application/x-www-form-urlencoded"},
    )
    return answer.status


async def inbox(api: Api) -> list[str]:
    box = await api.get("/v1/agents/alice/inbox", as_="alice")
    return [m["text"] for m in box["messages"]]


async def test_notify_posts_and_a_thread_reply_reaches_the_agent_once(
    api: Api, slack: tuple[FakeSlack, str], make_api: Any
) -> None:
    fake, _ = slack
    sent = await api.post("/v1/notify", {"text": "deploy needs a hand"}, as_="alice", expect=201)
    [posted] = fake.called("chat.postMessage")
    assert posted["channel"] == CHANNEL and posted["text"] == "deploy needs a hand"
    channel, ts = sent["platform_message_id"].split(":")
    assert channel == CHANNEL and sent["bridge"] == "slack" and sent["status"] == "sent"

    body = thread_reply(ts, "on my way")
    assert await post_event(api, body) == 200
    assert await post_event(api, body) == 200  # Slack retries: the same event, again
    assert await inbox(api) == ["on my way"]
    if api.db_path.exists():  # a restart on the same file: the event is still known
        restarted = await slack_api(make_api, slack[1])
        restarted.tokens = api.tokens
        assert await post_event(restarted, body) == 200
        assert await inbox(restarted) == ["on my way"]


async def test_url_verification_is_answered(api: Api) -> None:
    body = json.dumps({"type": "url_verification", "challenge": "3eZbrw1aBm2rZgRNFdxV"}).encode()
    answer = await api.client.post("/v1/bridges/slack/events", data=body, headers=signed(body))
    assert answer.status == 200 and (await answer.json()) == {"challenge": "3eZbrw1aBm2rZgRNFdxV"}


async def test_unsigned_stale_or_foreign_requests_change_nothing(api: Api) -> None:
    sent = await api.post("/v1/notify", {"text": "anyone?"}, as_="alice", expect=201)
    ts = sent["platform_message_id"].split(":")[1]
    body = thread_reply(ts, "forged")
    assert await post_event(api, body, {}) == 401
    assert await post_event(api, body, signed(body, secret="another-secret")) == 401
    assert await post_event(api, body, signed(body, age=6 * 60)) == 401  # older than 5 minutes
    tampered = signed(body)
    assert await post_event(api, body.replace(b"forged", b"FORGED"), tampered) == 401
    # Signed, but by someone who is not among the operators.
    stranger = thread_reply(ts, "not yours", user="U0STRANGER", event_id="Ev2")
    assert await post_event(api, stranger) == 200
    assert await inbox(api) == []


async def test_an_approval_gets_buttons_and_only_an_operators_click_decides(
    api: Api, slack: tuple[FakeSlack, str]
) -> None:
    fake, _ = slack
    asked = await api.post(
        "/v1/interventions/inc-9/request-approval",
        {"title": "Restart db-1", "reason": "pool full", "proposed_action": "restart"},
        as_="alice",
        expect=201,
    )
    [posted] = fake.called("chat.postMessage")
    [actions] = [b for b in posted["blocks"] if b["type"] == "actions"]
    assert [e["action_id"] for e in actions["elements"]] == ["approve", "reject"]
    approval_id = asked["approval_id"]

    assert await click(api, approval_id, "approve", user="U0STRANGER") == 200
    assert (await api.get(f"/v1/approvals/{approval_id}"))["status"] == "pending"
    assert fake.called("chat.update") == []

    assert await click(api, approval_id, "approve") == 200
    decided = await api.get(f"/v1/approvals/{approval_id}")
    assert decided["status"] == "approved" and decided["decided_by"] == f"slack:{OPERATOR}"
    [updated] = fake.called("chat.update")
    assert updated["ts"] == fake.posted[-1] and "APPROVED" in updated["text"]
    assert "actions" not in {b["type"] for b in updated["blocks"]}  # no buttons left


async def test_a_thread_reply_decides_and_a_cli_decision_updates_the_message(
    api: Api, slack: tuple[FakeSlack, str]
) -> None:
    fake, _ = slack
    first = await api.post(
        "/v1/interventions/inc-1/request-approval",
        {"title": "Restart", "reason": "slow", "proposed_action": "restart"},
        as_="alice",
        expect=201,
    )
    ts = fake.posted[-1]
    assert await post_event(api, thread_reply(ts, "reject not during the freeze")) == 200
    rejected = await api.get(f"/v1/approvals/{first['approval_id']}")
    assert rejected["status"] == "rejected" and rejected["note"] == "not during the freeze"

    second = await api.post(
        "/v1/interventions/inc-2/request-approval",
        {"title": "Rotate", "reason": "old", "proposed_action": "rotate"},
        as_="alice",
        expect=201,
    )
    await api.post(f"/v1/approvals/{second['approval_id']}/approve", {"note": "go"})
    updated = fake.called("chat.update")
    assert len(updated) == 2 and "*APPROVED* by operator: go" in updated[-1]["text"]


async def test_a_rate_limit_is_waited_out(api: Api, slack: tuple[FakeSlack, str]) -> None:
    fake, _ = slack
    fake.limited = 1
    sent = await api.post("/v1/notify", {"text": "after a wait"}, as_="alice", expect=201)
    assert sent["status"] == "sent" and len(fake.called("chat.postMessage")) == 2


async def test_a_refusal_is_502_and_a_failed_row_and_no_secret_leaks(
    api: Api, slack: tuple[FakeSlack, str], caplog: pytest.LogCaptureFixture
) -> None:
    fake, _ = slack
    fake.refuse = "channel_not_found"
    with caplog.at_level(logging.DEBUG):
        refused = await api.post("/v1/notify", {"text": "lost?"}, as_="alice", expect=502)
    assert "channel_not_found" in refused["detail"]
    [kept] = (await api.get("/v1/notifications"))["notifications"]
    assert kept["status"] == "failed" and "channel_not_found" in kept["error"]
    assert BOT_TOKEN not in caplog.text and SIGNING_SECRET not in caplog.text
    if api.db_path.exists():
        stored = b"".join(p.read_bytes() for p in api.db_path.parent.glob("relay.db*"))
        assert BOT_TOKEN.encode() not in stored and SIGNING_SECRET.encode() not in stored
