"""The Telegram Bot API bridge, on httpx (a handful of methods; no bot framework).

A notification's platform message id is ``"<chat_id>:<message_id>"``: Telegram message ids are
unique only within a chat. The bot token is part of every API URL, so no URL, and no text of an
httpx error (which carries the URL), ever reaches a log line, an error body or the database.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx

from relay_api import models as m
from relay_api.errors import BridgeError
from relay_core.ports import BridgeCapabilities
from relay_server.bridges.wording import (
    answer_hint,
    describe,
    edit_hint,
    hints,
    outcome,
    rememberable,
    reminder,
    stop_hint,
)
from relay_server.tracing import platform_call

log = logging.getLogger("relay.telegram")

DEFAULT_API_URL = "https://api.telegram.org"


class _RedactToken(logging.Filter):
    """httpx logs every request URL (at INFO); a Telegram URL carries the bot token."""

    def __init__(self, secret: str) -> None:
        super().__init__()
        self.secret = secret

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secret in record.getMessage():
            record.msg = record.getMessage().replace(self.secret, "<bot-token>")
            record.args = None
        return True


MAX_TEXT = 4096  # characters of a message's text
EDIT_ECHO = "Approve #{} changed? It runs:"  # then the command, on the lines below


def edited_command(echo: str, approval_id: int) -> str | None:
    """The command an edit's echo (``TelegramBridge.confirm_edit``) holds, if it is one."""
    head = EDIT_ECHO.format(approval_id) + "\n"
    return echo.removeprefix(head) if echo.startswith(head) else None


def platform_id(chat_id: int | str, message_id: int | str) -> str:
    """The id Relay keeps for a Telegram message."""
    return f"{chat_id}:{message_id}"


class TelegramBridge:
    """Sends to one operator chat; replies come back through ``get_updates`` or a webhook."""

    name = "telegram"

    def __init__(
        self,
        bot_token: str,
        chat_id: int,
        *,
        api_url: str = DEFAULT_API_URL,
        max_retry_after: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.chat_id = chat_id
        self.max_retry_after = max_retry_after
        self.is_forum = False
        self._redact = _RedactToken(bot_token)
        logging.getLogger("httpx").addFilter(self._redact)
        self._http = httpx.AsyncClient(
            base_url=f"{api_url.rstrip('/')}/bot{bot_token}/", timeout=40, transport=transport
        )

    @property
    def capabilities(self) -> BridgeCapabilities:
        """Topics only where the operator's chat is a forum."""
        return BridgeCapabilities(topics=self.is_forum, replies=True)

    async def start(self) -> None:
        """Ask Telegram whether the operator's chat is a forum (one topic per room)."""
        try:
            chat = await self.call("getChat", chat_id=self.chat_id)
        except BridgeError as exc:
            log.warning("getChat failed, assuming no forum topics: %s", exc.detail)
            return
        self.is_forum = bool(chat.get("is_forum"))

    async def mirror(self, platform_thread_id: str, text: str) -> None:
        chat_id, thread_id = platform_thread_id.split(":", 1)
        await self.call(
            "sendMessage", chat_id=int(chat_id), message_thread_id=int(thread_id), text=text[:4096]
        )

    async def call(self, method: str, **params: Any) -> Any:
        """One Bot API call; its ``result``, or ``BridgeError`` saying what went wrong."""
        with platform_call("telegram", method):
            return await self._call(method, **params)

    async def _call(self, method: str, **params: Any) -> Any:
        for _ in range(2):
            try:
                response = await self._http.post(method, json=params)
            except httpx.TimeoutException:
                raise BridgeError(f"Telegram did not answer {method} in time") from None
            except httpx.TransportError as exc:
                # str(exc) may hold the URL, and the URL holds the token: name the class only.
                raise BridgeError(f"cannot reach Telegram ({type(exc).__name__})") from None
            try:
                body = response.json()
            except ValueError:
                raise BridgeError(f"Telegram answered {response.status_code} to {method}") from None
            if body.get("ok"):
                return body.get("result")
            retry_after = (body.get("parameters") or {}).get("retry_after")
            if body.get("error_code") == 429 and retry_after is not None:
                if float(retry_after) <= self.max_retry_after:
                    await asyncio.sleep(float(retry_after))
                    continue
                raise BridgeError(f"Telegram asks to wait {retry_after} s before {method}")
            raise BridgeError(self._explain(method, body))
        raise BridgeError(f"Telegram still limits {method} after waiting")

    @staticmethod
    def _explain(method: str, body: dict[str, Any]) -> str:
        code, description = body.get("error_code"), body.get("description", "")
        if code == 403 and "initiate" in description:
            return (
                "Telegram refused: the bot may not write first. Open the chat with the bot and "
                "press Start (or add the bot to the group), then retry."
            )
        return f"Telegram refused {method}: {code} {description}".strip()

    async def send(self, text: str, *, reference: str) -> str:
        message = await self.call("sendMessage", chat_id=self.chat_id, text=text)
        return platform_id(message["chat"]["id"], message["message_id"])

    async def ensure_topic(self, room: m.Room, space: m.Space | None) -> str:
        topic = await self.call("createForumTopic", chat_id=self.chat_id, name=room.name[:128])
        return platform_id(self.chat_id, topic["message_thread_id"])

    async def ask(self, approval: m.Approval) -> str | None:
        if approval.kind == "question":
            return await self._ask_question(approval)
        hint = hints(
            "Tap a button, or reply 'approve [note]' / 'reject [note]'.",
            edit_hint(approval),
            stop_hint(approval),
        )
        text = f"{describe(approval, 3500)}\n\n{hint}"
        row = [
            {"text": "Approve", "callback_data": f"approve:{approval.approval_id}"},
            {"text": "Reject", "callback_data": f"reject:{approval.approval_id}"},
        ]
        if rememberable(approval):
            row.append({"text": "Always allow", "callback_data": f"always:{approval.approval_id}"})
        keyboard = [row]
        message = await self.call(
            "sendMessage",
            chat_id=self.chat_id,
            text=text,
            reply_markup={"inline_keyboard": keyboard},
        )
        return platform_id(message["chat"]["id"], message["message_id"])

    async def _ask_question(self, question: m.Approval) -> str:
        """A question's card: its options numbered, a button for each where one is chosen."""
        text = f"{describe(question, 3500)}\n\n{answer_hint(question)}"
        qid = question.approval_id
        rows = (
            []
            if question.multiple  # several are chosen in one reply: "1 3"
            else [
                [{"text": option.label, "callback_data": f"answer:{qid}:{n}"}]
                for n, option in enumerate(question.options or [])
            ]
        )
        rows.append([{"text": "Reject", "callback_data": f"reject:{qid}"}])
        message = await self.call(
            "sendMessage", chat_id=self.chat_id, text=text, reply_markup={"inline_keyboard": rows}
        )
        return platform_id(message["chat"]["id"], message["message_id"])

    async def confirm_edit(self, approval: m.Approval, command: str, reply_to: int) -> None:
        """Echo, in reply to the operator's ``edit`` message, what the request would run, with
        one more button to approve it so. The echo holds the command: the tap reads it back
        from the bot's own message (``edited_command``)."""
        text = f"{EDIT_ECHO.format(approval.approval_id)}\n{command}"
        if len(text) > MAX_TEXT:
            text = (
                f"The command is too long to change here: use the console, or relay approvals"
                f" approve {approval.approval_id} --command …"
            )
            keyboard = []
        else:
            data = f"approve-changed:{approval.approval_id}"
            keyboard = [[{"text": "Approve changed", "callback_data": data}]]
        await self.call(
            "sendMessage",
            chat_id=self.chat_id,
            text=text,
            reply_parameters={"message_id": reply_to},
            reply_markup={"inline_keyboard": keyboard},
        )

    async def settle(self, platform_message_id: str, approval: m.Approval) -> None:
        """The card's outcome; an "always" keeps one button, to undo it (``forget``)."""
        chat_id, message_id = platform_message_id.split(":", 1)
        said = outcome(approval)
        undo = (
            [[{"text": "Undo always", "callback_data": f"forget:{approval.approval_id}"}]]
            if approval.remembered_policy_id is not None
            else []
        )
        await self.call(
            "editMessageText",
            chat_id=int(chat_id),
            message_id=int(message_id),
            text=f"{describe(approval, 3500)}\n\n{said}",
            reply_markup={"inline_keyboard": undo},
        )

    async def remind(self, platform_message_id: str, approval: m.Approval) -> None:
        """A new message (it notifies, where an edit does not) in reply to the card."""
        chat_id, message_id = platform_message_id.split(":", 1)
        await self.call(
            "sendMessage",
            chat_id=int(chat_id),
            text=reminder(approval),
            reply_parameters={"message_id": int(message_id), "allow_sending_without_reply": True},
        )

    async def answered(self, platform_message_id: str, text: str, answer: str) -> None:
        chat_id, message_id = platform_message_id.split(":", 1)
        await self.call(
            "editMessageText",
            chat_id=int(chat_id),
            message_id=int(message_id),
            text=f"{text}\n\nAnswered: {answer}"[:4096],
        )

    async def answer_callback(self, callback_query_id: str, text: str) -> None:
        """Close the spinner on a tapped button, with a short word."""
        await self.call("answerCallbackQuery", callback_query_id=callback_query_id, text=text[:200])

    async def get_updates(self, offset: int, timeout: int = 25) -> list[dict[str, Any]]:
        """Updates after ``offset`` (long polling, up to ``timeout`` seconds)."""
        result = await self.call(
            "getUpdates",
            offset=offset,
            timeout=timeout,
            allowed_updates=["message", "callback_query"],
        )
        return list(result or [])

    async def close(self) -> None:
        await self._http.aclose()
        logging.getLogger("httpx").removeFilter(self._redact)
