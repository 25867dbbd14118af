"""Telegram's way back in: a long-polling loop (default) or a webhook, both feeding
``NotifyService.receive_update``, which applies each update exactly once."""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
from collections.abc import Sequence
from typing import Any

from aiohttp import web

from relay_api import models as m
from relay_api.errors import BridgeError
from relay_core.services import Services
from relay_server.app_keys import SERVICES, SETTINGS
from relay_server.background import on_one_instance
from relay_server.bridges.decisions import (
    EDIT,
    apply_reply,
    approve_changed,
    fields,
    pressed,
    text_of,
)
from relay_server.bridges.telegram.sending import TelegramBridge, edited_command, platform_id
from relay_server.bridges.wording import edit_refused
from relay_server.middleware import error_response
from relay_server.validation import read_body

log = logging.getLogger("relay.telegram")

RETRY_SECONDS = 5.0


class NotAnUpdate(ValueError):
    """What came is no Telegram update (not an object, or no integer ``update_id``)."""


def update_id_of(update: object) -> int:
    """The update's id, which every Telegram update has."""
    update_id = fields(update).get("update_id")
    if not isinstance(update_id, int) or isinstance(update_id, bool):
        raise NotAnUpdate("not a Telegram update")
    return update_id


def _may_answer(sender: dict[str, Any], operators: Sequence[int]) -> bool:
    """Whether the sender may answer and decide: anyone in the operator's chat, or only the
    user ids listed (``RELAY_TELEGRAM_OPERATORS``: a group chat has other members)."""
    return not operators or sender.get("id") in operators


async def apply(
    services: Services, bridge: TelegramBridge, update: object, operators: Sequence[int] = ()
) -> None:
    """Hand one update to the services: only the operator's chat, and in it only an operator,
    may answer or decide. A field of another shape than Telegram documents reads as absent."""
    update_id = update_id_of(update)
    callback = fields(update).get("callback_query")
    if callback is not None:
        await _tapped(services, bridge, fields(callback), operators)
        await services.notify.receive_update(bridge.name, update_id, None, "")
        return
    message = fields(fields(update).get("message"))
    chat_id = fields(message.get("chat")).get("id")
    text = text_of(message.get("text"))
    sender = fields(message.get("from"))
    replied_to = None
    if chat_id != bridge.chat_id or not _may_answer(sender, operators):
        text = ""  # not the operator's: only the offset moves
    elif text:
        replied = fields(message.get("reply_to_message")).get("message_id")
        replied_to = platform_id(chat_id, replied) if isinstance(replied, int) else None
        approval = (
            await services.approvals.by_platform_message(bridge.name, replied_to)
            if replied_to
            else None
        )
        who = f"telegram:{text_of(sender.get('username')) or 'operator'}"
        if approval is not None and await _reply_to_approval(
            services, bridge, approval, text, who, message.get("message_id")
        ):
            text = ""  # handled: only the offset moves
    # An empty text moves only the offset: the update is accounted for, nothing is delivered.
    await services.notify.receive_update(bridge.name, update_id, replied_to if text else None, text)


async def _reply_to_approval(
    services: Services,
    bridge: TelegramBridge,
    approval: m.Approval,
    text: str,
    who: str,
    message_id: object,
) -> bool:
    """Apply the operator's reply to an approval's card (``apply_reply``, and an edit to echo);
    whether it was one (else it is delivered as any reply)."""
    edit = EDIT.match(text)
    if edit and approval.kind != "question":
        await _echo_edit(bridge, approval, edit[1], message_id)
        return True
    handled, said = await apply_reply(services, approval, text, who)
    if said is not None:
        await _say(bridge, said)
    return handled


async def _say(bridge: TelegramBridge, text: str) -> None:
    try:
        await bridge.send(text, reference="")
    except BridgeError as exc:
        log.warning("cannot answer the operator on Telegram: %s", exc.detail)


async def _echo_edit(
    bridge: TelegramBridge, approval: m.Approval, command: str, reply_to: object
) -> None:
    """Answer an ``edit <command>`` reply to an approval's card: the command it would run and
    a button to approve it so, or why it cannot be changed."""
    try:
        if not isinstance(reply_to, int):
            return
        refused = edit_refused(approval)
        if refused is not None:
            await bridge.send(refused, reference="")
        else:
            await bridge.confirm_edit(approval, command, reply_to)
    except BridgeError as exc:
        log.warning("cannot answer an edit on Telegram: %s", exc.detail)


async def _tapped(
    services: Services, bridge: TelegramBridge, callback: dict[str, Any], operators: Sequence[int]
) -> None:
    """A button (Approve, Reject, Always allow, an option…): decide, then close the button's
    spinner with a word on how it went."""
    chat_id = fields(fields(callback.get("message")).get("chat")).get("id")
    sender = fields(callback.get("from"))
    verb, _, approval_id = text_of(callback.get("data")).partition(":")
    if verb == "answer":  # answer:<approval>:<index>
        approval_id, _, index = approval_id.partition(":")
        verb = f"answer:{index}"
    who = f"telegram:{text_of(sender.get('username')) or 'operator'}"
    said: str | None
    if chat_id != bridge.chat_id:
        said = "Only the operator's chat may decide."
    elif not _may_answer(sender, operators):
        said = "Only the operator may decide."
    elif not approval_id.isdigit():
        said = None
    elif verb == "approve-changed":
        echo = text_of(fields(callback.get("message")).get("text"))
        command = edited_command(echo, int(approval_id))
        refused = (
            await approve_changed(services, int(approval_id), command, who)
            if command is not None
            else "Not a decision Relay knows."
        )
        said = refused or f"approved #{approval_id} changed"
    else:
        said = await pressed(services, int(approval_id), verb, who)
    said = said or "Not a decision Relay knows."
    try:
        await bridge.answer_callback(text_of(callback.get("id")), said)
    except BridgeError as exc:
        log.warning("answerCallbackQuery failed: %s", exc.detail)


async def poll(
    services: Services,
    bridge: TelegramBridge,
    timeout: int = 25,
    idle: float = 1.0,
    standby: float = 5.0,
    operators: Sequence[int] = (),
) -> None:
    """Poll Telegram from exactly one instance: whoever holds the storage's lock polls, the
    others look again every ``standby`` seconds (Telegram answers getUpdates to one caller)."""
    await on_one_instance(
        services.ctx.storage,
        f"{bridge.name}-poller",
        lambda: _poll_updates(services, bridge, timeout, idle, operators),
        standby,
    )


async def _poll_updates(
    services: Services,
    bridge: TelegramBridge,
    timeout: int,
    idle: float,
    operators: Sequence[int],
) -> None:
    """Long-poll getUpdates forever, resuming after the last update applied; after an empty
    answer, pause ``idle`` seconds so a platform that answers at once is not hammered."""
    while True:
        offset = await services.notify.last_update_id(bridge.name) + 1
        try:
            updates = await bridge.get_updates(offset, timeout=timeout)
        except BridgeError as exc:
            log.warning("getUpdates failed: %s; retrying in %s s", exc.detail, RETRY_SECONDS)
            await asyncio.sleep(RETRY_SECONDS)
            continue
        try:
            for update in updates:
                await apply(services, bridge, update, operators)
        except Exception:  # fetched again from the last update applied: nothing is lost
            log.exception("applying a Telegram update failed; retrying in %s s", RETRY_SECONDS)
            await asyncio.sleep(RETRY_SECONDS)
            continue
        if not updates:
            await asyncio.sleep(idle)


async def webhook(request: web.Request) -> web.Response:
    """POST /v1/bridges/telegram/webhook: Telegram's push, checked against the shared secret."""
    settings = request.app[SETTINGS]
    expected = settings.telegram.webhook_secret
    given = request.headers.get("X-Telegram-Bot-Api-Secret-Token", "")
    # Bytes, not str: compare_digest refuses non-ASCII text, and a header may carry any byte.
    presented = given.encode("utf-8", "surrogateescape")
    if expected is None or not hmac.compare_digest(presented, expected.get_secret_value().encode()):
        return error_response(403, "forbidden", "the webhook secret does not match")
    services = request.app[SERVICES]
    bridge = services.ctx.bridge_named(TelegramBridge.name)
    if not isinstance(bridge, TelegramBridge):
        return error_response(404, "not_found", "the Telegram bridge is not configured")
    try:
        update = json.loads(await read_body(request))
        update_id_of(update)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or no update
        return error_response(400, "invalid", "not a Telegram update")
    await apply(services, bridge, update, settings.telegram.operators)
    return web.json_response({"ok": True})
