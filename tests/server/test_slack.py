"""The Slack bridge against a fake Slack Web API served by the test (it records
``chat.postMessage`` and ``chat.update`` and answers as Slack does), with events and
interactions signed as Slack signs them."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from tests.server.conftest import ONE_BACKEND, Api
from tests.server.fake_slack import (
    BOT_TOKEN,
    CHANNEL,
    OPERATOR,
    SIGNING_SECRET,
    FakeSlack,
    click,
    interact,
    post_event,
    signed,
    submit_edit,
    thread_reply,
)


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


async def test_edit_and_approve_opens_a_modal_whose_command_is_what_runs(
    api: Api, slack: tuple[FakeSlack, str]
) -> None:
    fake, _ = slack

    async def ask(source: str, command: str) -> int:
        payload = {"source": source, "tool_name": "Bash", "tool_input": {"command": command}}
        body = {"title": f"Bash: {command}", "payload": payload}
        return int((await api.post("/v1/approvals", body, as_="alice", expect=201))["approval_id"])

    asked = await ask("claude-code", "make deploy")
    codex = await ask("codex", "make deploy")
    buttons = [
        [e["action_id"] for b in posted["blocks"] if b["type"] == "actions" for e in b["elements"]]
        for posted in fake.called("chat.postMessage")
    ]
    assert buttons == [["approve", "reject", "edit", "always"], ["approve", "reject", "always"]]
    hints = [
        b["elements"][0]["text"]
        for posted in fake.called("chat.postMessage")
        for b in posted["blocks"]
        if b["type"] == "context"
    ]
    assert "No edit" not in hints[0]
    assert (
        "No edit: Codex's hook cannot run a changed command (it refuses updatedInput)." in hints[1]
    )
    assert hints[1].endswith("Reply 'stop [note]' to reject it and stop the agent.")

    assert await click(api, asked, "edit", user="U0STRANGER") == 200
    assert fake.called("views.open") == []
    assert await click(api, asked, "edit") == 200
    [opened] = fake.called("views.open")
    view = opened["view"]
    assert opened["trigger_id"] and view["private_metadata"] == str(asked)
    [field] = [block for block in view["blocks"] if block["type"] == "input"]
    assert field["element"]["initial_value"] == "make deploy"

    status, refused = await submit_edit(api, view, "make deploy-dry <!channel>", user="U0STRANGER")
    assert status == 200 and (await api.get(f"/v1/approvals/{asked}"))["status"] == "pending"
    status, answer = await submit_edit(api, view, "make deploy-dry <!channel>")
    assert status == 200 and answer is None  # an empty 200 closes the modal
    approved = await api.get(f"/v1/approvals/{asked}")
    assert approved["status"] == "approved" and approved["decided_by"] == f"slack:{OPERATOR}"
    assert approved["approved_payload"]["tool_input"] == {"command": "make deploy-dry <!channel>"}
    [updated] = fake.called("chat.update")
    assert "changed: it runs make deploy-dry &lt;!channel&gt;" in updated["text"]  # literal

    # A Codex prompt's modal, were one submitted, is refused under its input; nothing decided.
    status, refused = await submit_edit(api, {**view, "private_metadata": str(codex)}, "ls")
    assert status == 200 and refused["response_action"] == "errors"
    assert "Codex" in refused["errors"][field["block_id"]]
    assert (await api.get(f"/v1/approvals/{codex}"))["status"] == "pending"


async def test_always_allow_remembers_a_policy_and_its_undo_button_disables_it(
    api: Api, slack: tuple[FakeSlack, str]
) -> None:
    fake, _ = slack

    async def ask(command: str) -> dict[str, Any]:
        payload = {"source": "claude-code", "tool_name": "Bash", "tool_input": {"command": command}}
        body = {"title": f"Bash: {command}", "payload": payload}
        return await api.post("/v1/approvals", body, as_="alice", expect=201)

    asked = await ask("make test")
    card_ts = fake.posted[-1]
    assert await click(api, asked["approval_id"], "always", ts=card_ts) == 200
    decided = await api.get(f"/v1/approvals/{asked['approval_id']}")
    policy_id = decided["remembered_policy_id"]
    assert decided["status"] == "approved" and decided["decided_by"] == f"slack:{OPERATOR}"
    [updated] = fake.called("chat.update")
    assert f"and remembered as policy #{policy_id}" in updated["text"]
    [undo] = [e for b in updated["blocks"] if b["type"] == "actions" for e in b["elements"]]
    assert undo["action_id"] == "forget" and undo["value"] == str(asked["approval_id"])
    said = fake.called("chat.postMessage")[-1]
    assert said["thread_ts"] == card_ts and f"policy #{policy_id}" in said["text"]
    assert (await ask("make test"))["status"] == "approved"

    assert await click(api, asked["approval_id"], "forget", ts=card_ts) == 200
    assert (await api.get(f"/v1/policies/{policy_id}"))["enabled"] is False
    said = fake.called("chat.postMessage")[-1]
    assert said["thread_ts"] == card_ts and said["text"].startswith(f"Policy #{policy_id} disabled")
    assert (await ask("make test"))["status"] == "pending"

    # "always" in the thread of a line that cannot be remembered: why, in the thread.
    refused = await ask("make $(whoami)")
    assert await post_event(api, thread_reply(fake.posted[-1], "always", event_id="Ev9")) == 200
    said = fake.called("chat.postMessage")[-1]
    assert "cannot be remembered" in said["text"]
    assert (await api.get(f"/v1/approvals/{refused['approval_id']}"))["status"] == "pending"


async def test_a_question_is_answered_by_its_option_button_or_in_the_thread(
    api: Api, slack: tuple[FakeSlack, str]
) -> None:
    fake, _ = slack
    options = [{"label": "Postgres"}, {"label": "SQLite <!channel>"}]
    body = {"kind": "question", "title": "Which database?", "options": options}
    first = await api.post("/v1/approvals", body, as_="alice", expect=201)
    posted = fake.called("chat.postMessage")[-1]
    assert "2. SQLite &lt;!channel&gt;" in posted["text"]  # literal
    [buttons] = [b["elements"] for b in posted["blocks"] if b["type"] == "actions"]
    assert [b["action_id"] for b in buttons] == ["answer:0", "answer:1", "reject"]
    assert buttons[1]["text"]["text"] == "SQLite <!channel>"  # plain text: shown as written
    card_ts = fake.posted[-1]
    assert await click(api, first["approval_id"], "answer:1", ts=card_ts) == 200
    got = await api.get(f"/v1/approvals/{first['approval_id']}")
    assert got["status"] == "answered" and got["answer"] == ["SQLite <!channel>"]
    assert got["decided_by"] == f"slack:{OPERATOR}"
    [updated] = fake.called("chat.update")
    assert "ANSWERED" in updated["text"]

    second = await api.post("/v1/approvals", body | {"multiple": True}, as_="alice", expect=201)
    thread = fake.posted[-1]
    assert await post_event(api, thread_reply(thread, "1, 2", event_id="EvQ")) == 200
    got = await api.get(f"/v1/approvals/{second['approval_id']}")
    assert got["answer"] == ["Postgres", "SQLite <!channel>"]


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


async def test_malformed_callbacks_are_refused_audited_and_throttled(api: Api) -> None:
    body = thread_reply("1.2", "hello")
    not_a_number = {**signed(body), "X-Slack-Request-Timestamp": "soon"}
    assert await post_event(api, body, not_a_number) == 401  # was a 500
    latin1 = "réponse".encode("latin-1")  # not UTF-8
    assert await post_event(api, latin1, signed(latin1)) == 401  # was a 500
    interaction = await api.client.post(
        "/v1/bridges/slack/interactions", data=b"payload=%FF", headers={"X-Slack-Signature": "x"}
    )
    assert interaction.status == 401
    refused = [
        a for a in (await api.get("/v1/actions"))["actions"] if a["action"] == "auth.refused"
    ]
    assert refused and refused[0]["target"] == "POST /v1/bridges/slack/events"
    # The refusal limit's burst is 20: past it, the address is answered 429 without checking.
    statuses = [await post_event(api, body, {}) for _ in range(25)]
    assert 429 in statuses and 500 not in statuses


@ONE_BACKEND
@pytest.mark.parametrize(
    "payload",
    [
        [],
        {"type": "block_actions", "user": {"id": OPERATOR}, "actions": ["approve"]},
        {"type": "view_submission", "user": {"id": OPERATOR}, "view": []},
        {
            "type": "view_submission",
            "user": {"id": OPERATOR},
            "view": {"callback_id": "approve-changed", "private_metadata": "1", "state": []},
        },
    ],
)
async def test_signed_interactions_of_another_shape_are_400(api: Api, payload: Any) -> None:
    status, refused = await interact(api, payload)
    assert status == 400 and refused["code"] == "invalid"


async def test_text_relay_did_not_write_is_escaped_on_slack(
    api: Api, slack: tuple[FakeSlack, str]
) -> None:
    """No ping, no disguised link: ``&``, ``<`` and ``>`` of agents' and enrollers' text are
    Slack's escapes, in messages, cards and their updates."""
    fake, _ = slack
    ping = "<!channel> look"
    link = "<https://evil.example/login|https://github.com/acme/app/pull/42>"
    await api.post("/v1/notify", {"text": f"{ping} & {link}"}, as_="alice", expect=201)
    await api.post("/v1/approvals", {"title": ping, "detail": link}, as_="alice", expect=201)
    await api.post("/v1/enroll", {"agent_id": "newbie", "reason": link}, token="", expect=201)
    posted = fake.called("chat.postMessage")
    assert len(posted) == 3
    for call in posted:
        texts = [call["text"], *(b["text"]["text"] for b in call.get("blocks", []) if "text" in b)]
        for text in texts:
            assert "<!channel>" not in text and "<https://evil" not in text
    assert posted[0]["text"] == (
        "&lt;!channel&gt; look &amp; "
        "&lt;https://evil.example/login|https://github.com/acme/app/pull/42&gt;"
    )
    assert "&lt;https://evil.example/login|" in posted[2]["text"]


async def test_a_long_command_is_shown_as_its_head_and_tail(
    api: Api, slack: tuple[FakeSlack, str]
) -> None:
    fake, _ = slack
    command = "echo " + "x" * 3500 + " | sh"
    payload = {"tool_name": "Bash", "tool_input": {"command": command}}
    await api.post("/v1/approvals", {"title": "Bash", "payload": payload}, as_="alice", expect=201)
    [posted] = fake.called("chat.postMessage")
    text = posted["text"]
    assert len(text) <= 2900
    command_line = next(line for line in text.splitlines() if line.startswith("Command: "))
    assert command_line.startswith("Command: echo xxx") and command_line.endswith("x | sh")
    assert "characters left out" in command_line
