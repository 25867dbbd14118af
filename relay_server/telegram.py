"""Telegram's way back in: a long-polling loop (default) or a webhook, both feeding
``NotifyService.receive_update``, which applies each update exactly once."""

from __future__ import annotations

import asyncio
import hmac
import logging
from typing import Any

from aiohttp import web

from relay_core.bridges.telegram import TelegramBridge, platform_id
from relay_core.errors import BridgeError
from relay_core.services import Services
from relay_server.background import on_one_instance
from relay_server.decisions import DECISION, decide
from relay_server.keys import SERVICES, SETTINGS
from relay_server.middleware import error_response

log = logging.getLogger("relay.telegram")

RETRY_SECONDS = 5.0


async def apply(services: Services, bridge: TelegramBridge, update: dict[str, Any]) -> None:
    """Hand one update to the services: only the operator's chat may answer or decide."""
    callback = update.get("callback_query")
    if callback is not None:
        await _tapped(services, bridge, callback)
        await services.notify.receive_update(bridge.name, int(update["update_id"]), None, "")
        return
    message = update.get("message") or {}
    chat_id = (message.get("chat") or {}).get("id")
    text = message.get("text")
    if chat_id != bridge.chat_id or not text:
        text, replied_to = None, None  # not the operator's: only the offset moves
    else:
        replied = message.get("reply_to_message") or {}
        replied_to = platform_id(chat_id, replied["message_id"]) if replied else None
        decision = DECISION.match(text)
        if replied_to and decision:
            approval = await services.approvals.by_platform_message(bridge.name, replied_to)
            if approval is not None:
                who = (message.get("from") or {}).get("username") or "operator"
                verb, note = decision[1].lower(), decision[2]
                await decide(services, approval.approval_id, verb, note, f"telegram:{who}")
                text = None  # handled: only the offset moves
    # An empty text moves only the offset: the update is accounted for, nothing is delivered.
    await services.notify.receive_update(
        bridge.name, int(update["update_id"]), replied_to if text else None, text or ""
    )


async def _tapped(services: Services, bridge: TelegramBridge, callback: dict[str, Any]) -> None:
    """An Approve / Reject button: decide, then close the button's spinner."""
    chat_id = ((callback.get("message") or {}).get("chat") or {}).get("id")
    verb, _, approval_id = str(callback.get("data", "")).partition(":")
    if chat_id != bridge.chat_id:
        answer = "Only the operator's chat may decide."
    elif verb in ("approve", "reject") and approval_id.isdigit():
        who = (callback.get("from") or {}).get("username") or "operator"
        answer = await decide(services, int(approval_id), verb, None, f"telegram:{who}")
    else:
        answer = "Not a decision Relay knows."
    try:
        await bridge.answer_callback(str(callback.get("id", "")), answer)
    except BridgeError as exc:
        log.warning("answerCallbackQuery failed: %s", exc.detail)


async def poll(
    services: Services,
    bridge: TelegramBridge,
    timeout: int = 25,
    idle: float = 1.0,
    standby: float = 5.0,
) -> None:
    """Poll Telegram from exactly one instance: whoever holds the storage's lock polls, the
    others look again every ``standby`` seconds (Telegram answers getUpdates to one caller)."""
    await on_one_instance(
        services.ctx.storage,
        f"{bridge.name}-poller",
        lambda: _poll_updates(services, bridge, timeout, idle),
        standby,
    )


async def _poll_updates(
    services: Services, bridge: TelegramBridge, timeout: int, idle: float
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
                await apply(services, bridge, update)
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
        update = await request.json()
        await apply(services, bridge, update)
    except (ValueError, KeyError, TypeError, RecursionError):
        return error_response(400, "invalid", "not a Telegram update")
    return web.json_response({"ok": True})
