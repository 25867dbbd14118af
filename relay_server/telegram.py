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
from relay_server.keys import SERVICES, SETTINGS

log = logging.getLogger("relay.telegram")


async def apply(services: Services, bridge: TelegramBridge, update: dict[str, Any]) -> None:
    """Hand one update to the services: only messages in the operator's chat count."""
    message = update.get("message") or {}
    chat_id = (message.get("chat") or {}).get("id")
    text = message.get("text")
    if chat_id != bridge.chat_id or not text:
        text, replied_to = None, None  # not the operator's: only the offset moves
    else:
        replied = message.get("reply_to_message") or {}
        replied_to = platform_id(chat_id, replied["message_id"]) if replied else None
    if text is None:
        await services.notify.receive_update(bridge.name, int(update["update_id"]), None, "")
        return
    await services.notify.receive_update(bridge.name, int(update["update_id"]), replied_to, text)


async def poll(
    services: Services, bridge: TelegramBridge, timeout: int = 25, idle: float = 1.0
) -> None:
    """Long-poll getUpdates forever, resuming after the last update applied; after an empty
    answer, pause ``idle`` seconds so a platform that answers at once is not hammered."""
    while True:
        offset = await services.notify.last_update_id(bridge.name) + 1
        try:
            updates = await bridge.get_updates(offset, timeout=timeout)
        except BridgeError as exc:
            log.warning("getUpdates failed: %s; retrying in 5 s", exc.detail)
            await asyncio.sleep(5)
            continue
        for update in updates:
            await apply(services, bridge, update)
        if not updates:
            await asyncio.sleep(idle)


async def webhook(request: web.Request) -> web.Response:
    """POST /v1/bridges/telegram/webhook: Telegram's push, checked against the shared secret."""
    settings = request.app[SETTINGS]
    expected = settings.telegram_webhook_secret
    given = request.headers.get("X-Telegram-Bot-Api-Secret-Token", "")
    if expected is None or not hmac.compare_digest(given, expected.get_secret_value()):
        return web.json_response(
            {"detail": "the webhook secret does not match", "code": "forbidden"}, status=403
        )
    services = request.app[SERVICES]
    bridge = services.ctx.bridge
    if not isinstance(bridge, TelegramBridge):
        return web.json_response(
            {"detail": "the Telegram bridge is not configured", "code": "not_found"}, status=404
        )
    try:
        update = await request.json()
        await apply(services, bridge, update)
    except (ValueError, KeyError, TypeError):
        return web.json_response({"detail": "not a Telegram update", "code": "invalid"}, status=400)
    return web.json_response({"ok": True})
