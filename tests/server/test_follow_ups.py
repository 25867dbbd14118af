"""A reminder and an escalation instead of a silent expiry: an approval nobody answers is
reminded once on every platform that shows it, and offered on the next platform of
RELAY_ESCALATION, against a mocked Telegram Bot API (respx) and the fake Slack Web API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
import respx

from relay_api import models as m
from relay_core.services.follow_ups import Step
from relay_server.app_keys import SERVICES
from relay_server.settings import Settings
from tests.server.conftest import Api
from tests.server.fake_slack import BOT_TOKEN, CHANNEL, SIGNING_SECRET, FakeSlack

TELEGRAM_TOKEN = "123456:SECRET-bot-token-never-shown"
CHAT = 42


@pytest.fixture
def telegram() -> Iterator[respx.MockRouter]:
    with respx.mock(
        base_url=f"https://tg.test/bot{TELEGRAM_TOKEN}", assert_all_called=False
    ) as router:
        router.post("/getChat").mock(
            return_value=httpx.Response(200, json={"ok": True, "result": {"id": CHAT}})
        )
        sent = iter(range(900, 1000))
        router.post("/sendMessage", name="send").mock(
            side_effect=lambda _: httpx.Response(
                200, json={"ok": True, "result": {"message_id": next(sent), "chat": {"id": CHAT}}}
            )
        )
        router.post("/editMessageText", name="edit").mock(
            return_value=httpx.Response(200, json={"ok": True, "result": True})
        )
        yield router


async def both(make_api: Any, slack_url: str, **settings: Any) -> Api:
    """The app with Telegram and Slack, escalating from Telegram to Slack; no background
    sweep (the test sweeps when its clock says)."""
    api: Api = await make_api(
        telegram_bot_token=TELEGRAM_TOKEN,
        telegram_chat_id=CHAT,
        telegram_api_url="https://tg.test",
        telegram_mode="webhook",
        telegram_webhook_secret="hook-secret",
        slack_bot_token=BOT_TOKEN,
        slack_signing_secret=SIGNING_SECRET,
        slack_channel=CHANNEL,
        slack_api_url=slack_url,
        escalation="telegram,slack",
        sweep_seconds=0,
        **settings,
    )
    await api.agent("ci-7")
    return api


def sent_texts(router: respx.MockRouter) -> list[dict[str, Any]]:
    return [json.loads(call.request.content) for call in router["send"].calls]


async def sweep(api: Api) -> int:
    swept: int = await api.client.server.app[SERVICES].approvals.sweep()
    await api.sent()  # what the sweep asked of the platforms
    return swept


async def test_unanswered_it_is_escalated_then_reminded_everywhere_it_is_shown(
    make_api: Any, slack: tuple[FakeSlack, str], telegram: respx.MockRouter
) -> None:
    fake, url = slack
    api = await both(make_api, url, remind_after=600, escalate_after=300)
    asked = await api.post("/v1/approvals", {"title": "Bash: npm test"}, as_="ci-7", expect=201)
    approval_id = asked["approval_id"]
    created = datetime.fromisoformat(asked["created_at"])
    assert datetime.fromisoformat(asked["remind_at"]) == created + timedelta(seconds=600)
    assert datetime.fromisoformat(asked["escalate_at"]) == created + timedelta(seconds=300)
    assert asked["escalated_to"] is None and asked["reminded_at"] is None
    [card] = sent_texts(telegram)
    assert card["text"].startswith(f"Approval #{approval_id}")
    assert fake.called("chat.postMessage") == []  # Slack is the next step, not the first
    cursor = (await api.get("/v1/events"))["cursor"]

    api.clock.advance(299)
    assert await sweep(api) == 0
    api.clock.advance(2)
    assert await sweep(api) == 1
    [offered] = fake.called("chat.postMessage")
    assert "Escalated: unanswered since" in offered["text"] and offered["blocks"][2]["elements"]
    shown = await api.get(f"/v1/approvals/{approval_id}", as_="ci-7")
    assert shown["escalated_to"] == "slack" and shown["escalate_at"] is None  # the last step
    events = (await api.get("/v1/events", after=cursor, as_="ci-7"))["events"]
    [escalated] = [e for e in events if e["kind"] == "approval.escalated"]
    assert escalated["data"]["from"] == "telegram" and escalated["data"]["to"] == "slack"
    assert escalated["subject_id"] == str(approval_id)
    assert await sweep(api) == 0  # once

    api.clock.advance(300)
    assert await sweep(api) == 1
    reminder = sent_texts(telegram)[-1]
    assert reminder["reply_parameters"]["message_id"] == 900  # quoting the card
    assert reminder["text"].startswith(f"Reminder: approval #{approval_id} from ci-7")
    [_, in_thread] = fake.called("chat.postMessage")
    assert in_thread["thread_ts"] == fake.posted[0] and in_thread["reply_broadcast"] is True
    assert "*Reminder:*" in in_thread["text"]
    assert await sweep(api) == 0  # one reminder, not one a sweep
    assert (await api.get(f"/v1/approvals/{approval_id}"))["reminded_at"] is not None

    # Decided: both cards say so.
    await api.post(f"/v1/approvals/{approval_id}/approve", {})
    assert "APPROVED" in json.loads(telegram["edit"].calls.last.request.content)["text"]
    [updated] = fake.called("chat.update")
    assert updated["ts"] == fake.posted[0] and "APPROVED" in updated["text"]


async def test_an_approval_sets_its_own_times_and_one_decided_is_not_followed_up(
    make_api: Any, slack: tuple[FakeSlack, str], telegram: respx.MockRouter
) -> None:
    fake, url = slack
    api = await both(make_api, url, remind_after=3600)
    own = {"title": "Deploy build 7", "remind_after": 5, "escalate_after": 10}
    quick = await api.post("/v1/approvals", own, as_="ci-7", expect=201)
    created = datetime.fromisoformat(quick["created_at"])
    assert datetime.fromisoformat(quick["remind_at"]) == created + timedelta(seconds=5)
    assert datetime.fromisoformat(quick["escalate_at"]) == created + timedelta(seconds=10)
    answered = await api.post("/v1/approvals", {**own, "title": "Answered"}, as_="ci-7", expect=201)
    await api.post(f"/v1/approvals/{answered['approval_id']}/reject", {"note": "no"})
    plain = await api.post("/v1/approvals", {"title": "Plain"}, as_="ci-7", expect=201)
    assert plain["escalate_at"] is None  # no escalate_after anywhere: it stays on Telegram

    api.clock.advance(11)
    assert await sweep(api) == 2  # the quick one's reminder and its step; nothing else
    assert [e["text"].split(":")[0] for e in sent_texts(telegram)[3:]] == ["Reminder"]
    [offered] = fake.called("chat.postMessage")
    assert offered["text"].startswith(f"*Approval #{quick['approval_id']}*")
    bad = {"title": "x", "remind_after": 0}
    refused = await api.post("/v1/approvals", bad, as_="ci-7", expect=422)
    assert "remind_after" in json.dumps(refused)


def test_each_step_is_due_one_interval_after_the_last() -> None:
    steps = ("telegram", "slack", "matrix")
    created = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    asked = m.Approval(
        kind="request", title="t", requested_by="a", subject_id="a", created_at=created
    )
    first = Step(steps, asked, created + timedelta(seconds=60))
    assert (first.source, first.target) == ("telegram", "slack")
    assert first.next_due == created + timedelta(seconds=120)
    on_slack = asked.model_copy(update={"escalated_to": "slack"})
    last = Step(steps, on_slack, created + timedelta(seconds=120))
    assert (last.source, last.target, last.next_due) == ("slack", "matrix", None)
    gone = asked.model_copy(update={"escalated_to": "email"})  # a step no longer named
    assert Step(steps, gone, created).target is None


def test_the_escalation_names_configured_platforms_once() -> None:
    with pytest.raises(ValueError, match="names 'slack', which is not a configured platform"):
        Settings(domain={"escalation": "slack"})
    telegram = {"bot_token": TELEGRAM_TOKEN, "chat_id": CHAT}
    with pytest.raises(ValueError, match="names a platform twice"):
        Settings(telegram=telegram, domain={"escalation": "telegram,telegram"})
    assert Settings(telegram=telegram, domain={"escalation": "telegram"}).domain.escalation
