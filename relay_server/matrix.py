"""Matrix's way back in: /sync long polling, from exactly one instance (under the storage's
lock), resuming from the ``next_batch`` stored after each batch is applied.

In the operator room, from an operator (``RELAY_MATRIX_OPERATORS``; empty: anyone there):
- a reply (``m.relates_to.m.in_reply_to``) to an approval's message saying ``approve [note]`` /
  ``reject [note]`` decides it; a reaction ✅ / ❌ on it decides it too;
- a reply to a notification reaches its agent. Each event's id makes it once (kept like an
  ``Idempotency-Key``), so a batch applied again after a crash delivers nothing twice.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from relay_core.bridges.matrix import MatrixBridge, platform_id
from relay_core.errors import BridgeError, NotFound
from relay_core.idempotency import Once, Replay
from relay_core.services import Services
from relay_server.background import on_one_instance
from relay_server.decisions import DECISION, decide, fingerprint

log = logging.getLogger("relay.matrix")

REACTIONS = {"✅": "approve", "✔️": "approve", "👍": "approve", "❌": "reject", "👎": "reject"}
SYNC_TIMEOUT_MS = 25_000
RETRY_SECONDS = 5.0


async def sync_forever(
    services: Services, bridge: MatrixBridge, operators: list[str], standby: float = 5.0
) -> None:
    """Follow the operator room from the one instance holding the lock."""
    await on_one_instance(
        services.ctx.storage,
        f"{bridge.name}-sync",
        lambda: _follow(services, bridge, operators),
        standby,
    )


async def _follow(services: Services, bridge: MatrixBridge, operators: list[str]) -> None:
    since = await services.notify.sync_cursor(bridge.name)
    if since is None:  # first start: what happened before Relay was here is not for it
        since = str((await bridge.sync(None, 0))["next_batch"])
        await services.notify.keep_sync_cursor(bridge.name, since)
    while True:
        try:
            batch = await bridge.sync(since, SYNC_TIMEOUT_MS)
            room = ((batch.get("rooms") or {}).get("join") or {}).get(bridge.room_id) or {}
            for event in (room.get("timeline") or {}).get("events") or []:
                await apply(services, bridge, operators, event)
        except BridgeError as exc:
            log.warning("/sync failed: %s; retrying in %s s", exc.detail, RETRY_SECONDS)
            await asyncio.sleep(RETRY_SECONDS)
            continue
        except Exception:  # the batch is fetched again from the same token; nothing is lost
            log.exception("applying a Matrix batch failed; retrying in %s s", RETRY_SECONDS)
            await asyncio.sleep(RETRY_SECONDS)
            continue
        since = str(batch["next_batch"])
        await services.notify.keep_sync_cursor(bridge.name, since)


async def apply(
    services: Services, bridge: MatrixBridge, operators: list[str], event: dict[str, Any]
) -> None:
    """Hand one timeline event to the services."""
    sender = str(event.get("sender", ""))
    if sender == bridge.user_id or (operators and sender not in operators):
        return
    content = event.get("content") or {}
    relates = content.get("m.relates_to") or {}
    who = f"matrix:{sender}"
    if event.get("type") == "m.reaction":
        verb = REACTIONS.get(str(relates.get("key", "")))
        if relates.get("rel_type") == "m.annotation" and verb is not None:
            await _decide_on(services, bridge, str(relates.get("event_id", "")), verb, None, who)
        return
    replied = (relates.get("m.in_reply_to") or {}).get("event_id")
    if event.get("type") != "m.room.message" or not replied or relates.get("rel_type"):
        return  # not a reply (or an edit of one)
    text = _without_quote(str(content.get("body", "")))
    decision = DECISION.match(text)
    if decision and await _decide_on(
        services, bridge, str(replied), decision[1].lower(), decision[2], who
    ):
        return
    replied_to = platform_id(bridge.room_id, str(replied))
    once = Once("matrix-events", str(event.get("event_id", "")), fingerprint(replied_to, text))
    try:
        await services.notify.receive_reply(bridge.name, replied_to, text, once)
    except Replay:
        pass  # applied before a crash kept its batch's next_batch: delivered already
    except NotFound:
        log.info("a reply to %s matches no notification", replied_to)


async def _decide_on(
    services: Services,
    bridge: MatrixBridge,
    event_id: str,
    verb: str,
    note: str | None,
    who: str,
) -> bool:
    """Decide the approval shown as that event, if it is one."""
    shown = platform_id(bridge.room_id, event_id)
    approval = await services.approvals.by_platform_message(bridge.name, shown)
    if approval is None:
        return False
    await decide(services, approval.approval_id, verb, note, who)
    return True


def _without_quote(body: str) -> str:
    """A reply's own text: clients put the replied-to message first, as "> " lines."""
    lines = body.splitlines()
    while lines and lines[0].startswith(">"):
        lines.pop(0)
    return "\n".join(lines).strip()
