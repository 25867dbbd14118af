"""Several operator platforms at once: Telegram (its Bot API mocked), Slack (a fake Web API
served by the test) and Matrix (a real Synapse, tests/synapse.py). Each notification and
approval goes to every one; the first reply or decision, from any, wins, and every message shows
it; one platform failing does not fail the others."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx

from relay_server.app_keys import SERVICES
from tests.server.conftest import Api
from tests.server.fake_slack import BOT_TOKEN as SLACK_TOKEN
from tests.server.fake_slack import (
    CHANNEL,
    OPERATOR,
    SIGNING_SECRET,
    FakeSlack,
    click,
    post_event,
    thread_reply,
)
from tests.server.test_telegram import API, CHAT, HOOK, refused, sent
from tests.server.test_telegram import BOT_TOKEN as TELEGRAM_TOKEN
from tests.synapse import Homeserver, event_of, reply


@pytest.fixture
def bot() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url=API, assert_all_called=False) as router:
        router.post("/getChat").mock(
            return_value=httpx.Response(200, json={"ok": True, "result": {"id": CHAT}})
        )
        router.post("/editMessageText", name="edit").mock(
            return_value=httpx.Response(200, json={"ok": True, "result": True})
        )
        yield router


def telegram_and_slack(slack_url: str) -> dict[str, Any]:
    """The settings of both bridges, each pointed at its test double."""
    return {
        "telegram_bot_token": TELEGRAM_TOKEN,
        "telegram_chat_id": CHAT,
        "telegram_api_url": "https://tg.test",
        "telegram_mode": "webhook",
        "telegram_webhook_secret": HOOK,
        "slack_bot_token": SLACK_TOKEN,
        "slack_signing_secret": SIGNING_SECRET,
        "slack_channel": CHANNEL,
        "slack_operators": OPERATOR,
        "slack_api_url": slack_url,
    }


@pytest.fixture
async def api(make_api: Any, bot: respx.MockRouter, slack: tuple[FakeSlack, str]) -> Api:
    built: Api = await make_api(**telegram_and_slack(slack[1]))
    await built.agent("alice")
    return built


def edits(bot: respx.MockRouter) -> list[dict[str, Any]]:
    return [json.loads(call.request.content) for call in bot["edit"].calls]


async def test_a_notification_goes_to_both_and_a_slack_reply_shows_on_both(
    api: Api, bot: respx.MockRouter, slack: tuple[FakeSlack, str]
) -> None:
    fake, _ = slack
    bot.post("/sendMessage").mock(return_value=sent(777))
    note = await api.post("/v1/notify", {"text": "deploy?"}, as_="alice", expect=201)
    assert note["bridge"] == "telegram" and note["platform_message_id"] == f"{CHAT}:777"
    assert [(d["bridge"], d["status"]) for d in note["deliveries"]] == [
        ("telegram", "sent"),
        ("slack", "sent"),
    ]
    slack_id = note["deliveries"][1]["platform_message_id"]
    assert slack_id == f"{CHANNEL}:{fake.posted[0]}"

    assert await post_event(api, thread_reply(fake.posted[0], "go ahead")) == 200
    inbox = (await api.get("/v1/agents/alice/inbox", as_="alice"))["messages"]
    assert [m["text"] for m in inbox] == ["go ahead"]
    [telegram_edit] = edits(bot)
    assert telegram_edit["message_id"] == 777 and telegram_edit["text"].endswith("go ahead")
    [slack_edit] = fake.called("chat.update")
    assert slack_edit["ts"] == fake.posted[0] and slack_edit["text"].endswith("go ahead")
    listed = (await api.get("/v1/notifications"))["notifications"][0]
    assert listed["replies"] == 1 and len(listed["deliveries"]) == 2


async def test_one_platform_failing_does_not_fail_the_other(
    api: Api, bot: respx.MockRouter, slack: tuple[FakeSlack, str]
) -> None:
    fake, _ = slack
    bot.post("/sendMessage").mock(return_value=refused(400, "Bad Request: chat not found"))
    note = await api.post("/v1/notify", {"text": "anyone?"}, as_="alice", expect=201)
    assert note["status"] == "sent" and note["bridge"] == "slack"
    failed, delivered = note["deliveries"]
    assert failed["bridge"] == "telegram" and failed["status"] == "failed"
    assert "chat not found" in failed["error"] and delivered["status"] == "sent"
    bridges = {b["name"]: b for b in (await api.get("/v1/status"))["bridges"]}
    assert bridges["slack"]["healthy"] and not bridges["telegram"]["healthy"]
    assert "chat not found" in bridges["telegram"]["last_error"]

    fake.refuse = "channel_not_found"
    lost = await api.post("/v1/notify", {"text": "lost"}, as_="alice", expect=502)
    assert "telegram:" in lost["detail"] and "slack:" in lost["detail"]  # 502 only when all fail
    assert (await api.get("/v1/notifications"))["notifications"][0]["status"] == "failed"


async def test_an_approval_decided_on_slack_is_shown_decided_on_telegram_too(
    api: Api, bot: respx.MockRouter, slack: tuple[FakeSlack, str]
) -> None:
    fake, _ = slack
    asked_on_telegram = bot.post("/sendMessage").mock(return_value=sent(901))
    asked = await api.post(
        "/v1/interventions/inc-4/request-approval",
        {"title": "Restart db-1", "reason": "pool full", "proposed_action": "restart"},
        as_="alice",
        expect=201,
    )
    keyboard = json.loads(asked_on_telegram.calls.last.request.content)["reply_markup"]
    assert keyboard["inline_keyboard"][0][0]["callback_data"] == f"approve:{asked['approval_id']}"
    assert len(fake.called("chat.postMessage")) == 1

    assert await click(api, asked["approval_id"], "approve") == 200
    [telegram_edit] = edits(bot)
    assert telegram_edit["message_id"] == 901 and "APPROVED by slack:" in telegram_edit["text"]
    [slack_edit] = fake.called("chat.update")
    assert "*APPROVED* by slack:" in slack_edit["text"]

    # A later decision on Telegram changes nothing: the first one won.
    approval = await api.get(f"/v1/approvals/{asked['approval_id']}")
    assert approval["status"] == "approved" and approval["decided_by"] == f"slack:{OPERATOR}"


async def test_a_reply_on_matrix_answers_the_agent_and_updates_telegram_and_slack(
    make_api: Any, slack: tuple[FakeSlack, str], homeserver: Homeserver
) -> None:
    """Telegram (mocked) + Slack (fake) + Matrix (a real Synapse), in that order."""
    fake, slack_url = slack
    with respx.mock(assert_all_called=False) as telegram:
        telegram.route(host="127.0.0.1").pass_through()  # Synapse and the fake Slack
        telegram.post(f"{API}/getChat").mock(
            return_value=httpx.Response(200, json={"ok": True, "result": {"id": CHAT}})
        )
        telegram.post(f"{API}/sendMessage").mock(return_value=sent(777))
        edit = telegram.post(f"{API}/editMessageText").mock(
            return_value=httpx.Response(200, json={"ok": True, "result": True})
        )
        api: Api = await make_api(
            **telegram_and_slack(slack_url),
            matrix_homeserver=homeserver.url,
            matrix_user_id=homeserver.bot.user_id,
            matrix_access_token=homeserver.bot.token,
            matrix_room_id=homeserver.room_id,
            matrix_operators=homeserver.operator.user_id,
        )
        await api.agent("alice")
        services = api.client.server.app[SERVICES]
        for _ in range(100):  # the Matrix follower has taken its place in the room's timeline
            if await services.notify.sync_cursor("matrix") is not None:
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("the Matrix follower never started")
        note = await api.post("/v1/notify", {"text": "deploy?"}, as_="alice", expect=201)
        assert [(d["bridge"], d["status"]) for d in note["deliveries"]] == [
            ("telegram", "sent"),
            ("slack", "sent"),
            ("matrix", "sent"),
        ]
        asked = event_of(note["deliveries"][2]["platform_message_id"])
        await asyncio.to_thread(
            reply, homeserver, homeserver.operator, asked, "go ahead", "deploy?"
        )
        box = await api.get("/v1/agents/alice/inbox", as_="alice", wait=20)
        assert [m["text"] for m in box["messages"]] == ["go ahead"]
        for _ in range(100):
            if edit.calls and fake.called("chat.update"):
                break
            await asyncio.sleep(0.1)
        assert json.loads(edit.calls.last.request.content)["text"].endswith("Answered: go ahead")
        assert fake.called("chat.update")[-1]["text"].endswith("*Answered:* go ahead")
        # A second answer, given on Telegram's message (as the API takes it), joins the first's
        # conversation.
        [answered] = box["messages"]
        telegram_id = note["deliveries"][0]["platform_message_id"]
        again = {"platform_message_id": telegram_id, "text": "and be quick"}
        second = await api.post("/v1/notify/replies", again, expect=201)
        assert answered["thread_id"] == answered["message_id"] == second["thread_id"]
