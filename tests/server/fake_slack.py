"""A fake Slack Web API for the tests, and requests signed as Slack signs them."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from aiohttp import web

if TYPE_CHECKING:  # the conftest imports this module
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
        if method == "views.open":
            if not params.get("trigger_id"):  # Slack's answer to a missing or stale trigger
                return web.json_response({"ok": False, "error": "invalid_trigger_id"})
            return web.json_response({"ok": True, "view": {"id": "V0EDIT", **params["view"]}})
        return web.json_response({"ok": False, "error": "unknown_method"})

    def called(self, method: str) -> list[dict[str, Any]]:
        return [params for name, params in self.calls if name == method]


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
    await api.sent()
    return answer.status


async def click(
    api: Api, approval_id: int, verb: str, user: str = OPERATOR, ts: str = "1700000000.000100"
) -> int:
    """A click on a button of the message ``ts``, as Slack posts a block action."""
    payload = {
        "type": "block_actions",
        "user": {"id": user},
        "trigger_id": "13345224609.738474920.8088930838d88f008e0",
        "channel": {"id": CHANNEL, "name": "relay"},
        "message": {"type": "message", "ts": ts},
        "actions": [{"action_id": verb, "value": str(approval_id), "type": "button"}],
    }
    status, _ = await interact(api, payload)
    return status


async def submit_edit(
    api: Api, view: dict[str, Any], command: str, user: str = OPERATOR
) -> tuple[int, Any]:
    """The operator submits the edit's modal (``view``, as Relay opened it) with ``command``."""
    [field] = [block for block in view["blocks"] if block["type"] == "input"]
    value = {"type": "plain_text_input", "value": command}
    state = {"values": {field["block_id"]: {field["element"]["action_id"]: value}}}
    payload = {
        "type": "view_submission",
        "user": {"id": user},
        "view": {**view, "state": state},
    }
    return await interact(api, payload)


async def interact(api: Api, payload: dict[str, Any]) -> tuple[int, Any]:
    """An interaction payload as Slack posts it: form-encoded, signed; the answer."""
    body = urlencode({"payload": json.dumps(payload)}).encode()
    answer = await api.client.post(
        "/v1/bridges/slack/interactions",
        data=body,
        headers={**signed(body), "Content-Type": "application/x-www-form-urlencoded"},
    )
    text = await answer.text()
    await api.sent()
    return answer.status, json.loads(text) if text else None
