"""The Slack bridge, on Slack's own SDK (``slack-sdk``): Web API calls with its rate-limit retry.

A message's platform id is ``"<channel>:<ts>"``: a Slack message is named by its channel and its
timestamp. Replies come back through the Events API and button clicks through interactivity,
both to the server (``relay_server.bridges.slack``). The bot token travels only in the Authorization
header the SDK sends; no error Relay raises carries it.
"""

from __future__ import annotations

from typing import Any

from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from relay_api import models as m
from relay_api.elision import elide, fit
from relay_api.errors import BridgeError
from relay_core.ports import BridgeCapabilities
from relay_server.bridges.wording import (
    answer_hint,
    describe,
    edit_hint,
    editable_command,
    hints,
    outcome,
    rememberable,
    reminder,
    stop_hint,
)
from relay_server.tracing import platform_call

DEFAULT_API_URL = "https://slack.com/api/"
EDIT_VIEW = "approve-changed"  # the modal's callback_id
EDIT_BLOCK = "command"  # its input's block_id and action_id
MAX_INPUT = 3000  # characters a plain_text_input holds
RATE_LIMIT_RETRIES = 3  # each waits the Retry-After Slack sent with its 429


def escaped(text: str) -> str:
    """Text Relay did not write, as Slack's mrkdwn shows it literally: ``<!channel>`` and
    ``<https://evil|https://github.com/…>`` are text, not a ping or a disguised link."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def platform_id(channel: str, ts: str) -> str:
    """The id Relay keeps for a Slack message."""
    return f"{channel}:{ts}"


def split_platform_id(platform_message_id: str) -> tuple[str, str]:
    """A kept id's channel and timestamp."""
    channel, _, ts = platform_message_id.partition(":")
    return channel, ts


class SlackBridge:
    """Posts to one operator channel; replies in a message's thread and button clicks come
    back to the server."""

    name = "slack"
    capabilities = BridgeCapabilities(topics=False, replies=True)

    def __init__(self, bot_token: str, channel: str, *, api_url: str = DEFAULT_API_URL) -> None:
        self.channel = channel
        self._client = AsyncWebClient(
            token=bot_token,
            base_url=api_url.rstrip("/") + "/",
            retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES)],
        )

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        """One Web API call; its answer, or ``BridgeError`` saying what went wrong."""
        with platform_call("slack", method):
            return await self._call(method, **params)

    async def _call(self, method: str, **params: Any) -> dict[str, Any]:
        try:
            answer = await self._client.api_call(method, json=params)
        except SlackApiError as exc:
            error = exc.response.get("error", "unknown_error")
            if exc.response.status_code == 429:
                raise BridgeError(f"Slack still rate-limits {method} after waiting") from None
            raise BridgeError(f"Slack refused {method}: {error}") from None
        except SlackClientError as exc:
            raise BridgeError(f"cannot reach Slack ({type(exc).__name__})") from None
        except OSError as exc:  # aiohttp's connection errors
            raise BridgeError(f"cannot reach Slack ({type(exc).__name__})") from None
        return dict(answer.data) if isinstance(answer.data, dict) else {}

    async def start(self) -> None:
        return None

    async def send(self, text: str, *, reference: str) -> str:
        shown = fit(text, 40000, escaped)
        posted = await self.call("chat.postMessage", channel=self.channel, text=shown)
        return platform_id(posted["channel"], posted["ts"])

    async def ensure_topic(self, room: m.Room, space: m.Space | None) -> str:
        raise BridgeError("Slack rooms are not mirrored: Relay posts to one channel")

    async def mirror(self, platform_thread_id: str, text: str) -> None:
        raise BridgeError("Slack rooms are not mirrored: Relay posts to one channel")

    async def ask(self, approval: m.Approval) -> str | None:
        text = describe(approval, 2900, strong="*", escape=escaped)
        if approval.kind == "question":
            hint = f"{answer_hint(approval)} (in the thread)"
            buttons = [] if approval.multiple else _option_buttons(approval)
            buttons.append(_button("Reject", "reject", approval, "danger"))
        else:
            hint = hints(
                "Click a button, or reply in the thread `approve [note]` / `reject [note]`.",
                edit_hint(approval, how=""),
                stop_hint(approval),
            )
            buttons = _decision_buttons(approval)
        blocks = [
            {"type": "section", "text": {"type": "mrkdwn", "text": text}},
            {"type": "context", "elements": [{"type": "mrkdwn", "text": hint}]},
            {
                "type": "actions",
                "block_id": f"approval-{approval.approval_id}",
                "elements": buttons,
            },
        ]
        posted = await self.call("chat.postMessage", channel=self.channel, text=text, blocks=blocks)
        return platform_id(posted["channel"], posted["ts"])

    async def open_edit(self, trigger_id: str, approval: m.Approval, command: str) -> None:
        """Open the modal in which the operator changes ``approval``'s command and approves
        it changed (``EDIT_VIEW`` comes back as a ``view_submission``)."""
        view = {
            "type": "modal",
            "callback_id": EDIT_VIEW,
            "private_metadata": str(approval.approval_id),
            "title": {"type": "plain_text", "text": "Approve changed"},
            "submit": {"type": "plain_text", "text": "Approve"},
            "close": {"type": "plain_text", "text": "Cancel"},
            "blocks": [
                {
                    "type": "section",
                    "text": {"type": "mrkdwn", "text": describe(approval, 2900, "*", escaped)},
                },
                {
                    "type": "input",
                    "block_id": EDIT_BLOCK,
                    "label": {"type": "plain_text", "text": "Command to approve"},
                    "element": {
                        "type": "plain_text_input",
                        "action_id": EDIT_BLOCK,
                        "multiline": True,
                        "initial_value": command,
                        "max_length": MAX_INPUT,
                    },
                },
            ],
        }
        await self.call("views.open", trigger_id=trigger_id, view=view)

    async def settle(self, platform_message_id: str, approval: m.Approval) -> None:
        channel, ts = split_platform_id(platform_message_id)
        said = outcome(approval, strong="*", escape=escaped)
        text = f"{describe(approval, 2900, strong='*', escape=escaped)}\n\n{said}"
        blocks: list[dict[str, Any]] = [
            {"type": "section", "text": {"type": "mrkdwn", "text": text}}
        ]
        if approval.remembered_policy_id is not None:  # one button left: undo the "always"
            undo = _button("Undo always", "forget", approval)
            blocks.append({"type": "actions", "elements": [undo]})
        await self.call("chat.update", channel=channel, ts=ts, text=text, blocks=blocks)

    async def remind(self, platform_message_id: str, approval: m.Approval) -> None:
        """A reply in the card's thread, also sent to the channel (``reply_broadcast``): it
        notifies like a new message and quotes the card."""
        channel, ts = split_platform_id(platform_message_id)
        text = reminder(approval, strong="*", escape=escaped)
        await self.call(
            "chat.postMessage", channel=channel, thread_ts=ts, reply_broadcast=True, text=text
        )

    async def say_in_thread(self, platform_message_id: str, text: str) -> None:
        """A line in the thread of one of Relay's messages (an answer to a click)."""
        channel, ts = split_platform_id(platform_message_id)
        shown = fit(text, 40000, escaped)
        await self.call("chat.postMessage", channel=channel, thread_ts=ts, text=shown)

    async def answered(self, platform_message_id: str, text: str, answer: str) -> None:
        channel, ts = split_platform_id(platform_message_id)
        await self.call(
            "chat.update",
            channel=channel,
            ts=ts,
            text=f"{fit(text, 30000, escaped)}\n\n*Answered:* {fit(answer, 9000, escaped)}",
        )

    async def close(self) -> None:
        return None  # the SDK opens and closes an HTTP session for each call


def editable(approval: m.Approval) -> str | None:
    """The command of a request the operator may approve changed in a modal, if it is one and
    short enough for Slack's text input."""
    command = editable_command(approval)
    return command if command is not None and len(command) <= MAX_INPUT else None


def _decision_buttons(approval: m.Approval) -> list[dict[str, Any]]:
    """Approve and Reject, and, on a coding agent's request, Edit & approve and Always allow."""
    buttons = [
        _button("Approve", "approve", approval, "primary"),
        _button("Reject", "reject", approval, "danger"),
    ]
    if editable(approval) is not None:
        buttons.append(_button("Edit & approve", "edit", approval))
    if rememberable(approval):
        buttons.append(_button("Always allow", "always", approval))
    return buttons


def _option_buttons(question: m.Approval) -> list[dict[str, Any]]:
    """A button for each of a question's options (``answer:<index>``)."""
    return [
        _button(elide(option.label, 75), f"answer:{n}", question)  # a button: 75 at most
        for n, option in enumerate(question.options or [])
    ]


def _button(
    label: str, verb: str, approval: m.Approval, style: str | None = None
) -> dict[str, Any]:
    button = {
        "type": "button",
        "text": {"type": "plain_text", "text": label},
        "action_id": verb,
        "value": str(approval.approval_id),
    }
    return button | {"style": style} if style else button
