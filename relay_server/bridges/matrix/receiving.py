"""Matrix's way back in: /sync long polling, from exactly one instance (under the storage's
lock), resuming from the ``next_batch`` stored after each batch is applied.

In the operator room, from an operator (``RELAY_MATRIX_OPERATORS``; empty: anyone there):
- a reply (``m.relates_to.m.in_reply_to``) to an approval's message saying ``approve [note]`` /
  ``reject [note]`` decides it; a reaction ✅ / ❌ on it decides it too;
- a reply ``always [note]`` approves a request and remembers it as a policy, and ``undo`` within
  ten minutes disables that policy; ``stop [note]`` rejects it and asks the agent to stop;
- a reply to a question's card answers it: the numbers of its options (``2``, ``1 3``), or
  the operator's own words where it allows them;
- a reply ``edit <command>`` to a request's message is echoed (the command it would run) and a
  ✅ on the echo approves the request with that command;
- a reply to a notification reaches its agent. Each event's id makes it once (kept like an
  ``Idempotency-Key``), so a batch applied again after a crash delivers nothing twice.
"""

from __future__ import annotations

import asyncio
import logging

from relay_api import models as m
from relay_api.errors import BridgeError, NotFound, StorageUnavailable
from relay_core.idempotency import Replay, RetryKey, answering
from relay_core.services import Services
from relay_server.background import on_one_instance
from relay_server.bridges.decisions import (
    EDIT,
    apply_reply,
    approve_changed,
    decide,
    fields,
    fingerprint,
    text_of,
)
from relay_server.bridges.matrix.sending import MatrixBridge, platform_id
from relay_server.bridges.wording import edit_refused

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
            room = fields(fields(fields(batch.get("rooms")).get("join")).get(bridge.room_id))
            events = fields(room.get("timeline")).get("events")
            for event in events if isinstance(events, list) else []:
                await _apply_or_skip(services, bridge, operators, event)
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


async def _apply_or_skip(
    services: Services, bridge: MatrixBridge, operators: list[str], event: object
) -> None:
    """Apply one event; one that cannot be applied for what it is (not for the store or the
    homeserver failing, which the batch is fetched again for) is skipped with one line, so
    that it cannot hold back every later reply and decision."""
    try:
        await apply(services, bridge, operators, event)
    except (StorageUnavailable, BridgeError):
        raise
    except Exception as exc:
        event_id = text_of(fields(event).get("event_id")) or "without an id"
        log.warning("skipped Matrix event %s, which could not be applied: %r", event_id, exc)


async def apply(
    services: Services, bridge: MatrixBridge, operators: list[str], event: object
) -> None:
    """Hand one timeline event to the services. A field of another shape than the Matrix
    specification gives it reads as absent."""
    event = fields(event)
    sender = text_of(event.get("sender"))
    if not sender or sender == bridge.user_id or (operators and sender not in operators):
        return
    content = fields(event.get("content"))
    relates = fields(content.get("m.relates_to"))
    who = f"matrix:{sender}"
    if event.get("type") == "m.reaction":
        verb = REACTIONS.get(text_of(relates.get("key")))
        reacted = text_of(relates.get("event_id"))
        if relates.get("rel_type") != "m.annotation" or verb is None:
            return
        if not await _decide_on(services, bridge, reacted, verb, who) and verb == "approve":
            await _approve_echo(services, bridge, reacted, who)
        return
    replied = text_of(fields(relates.get("m.in_reply_to")).get("event_id"))
    if event.get("type") != "m.room.message" or not replied or relates.get("rel_type"):
        return  # not a reply (or an edit of one)
    text = _without_quote(text_of(content.get("body")))
    reply_id = text_of(event.get("event_id"))
    replied_to = platform_id(bridge.room_id, replied)
    approval = await services.approvals.by_platform_message(bridge.name, replied_to)
    if approval is not None:
        edit = EDIT.match(text)
        if edit and approval.kind != "question":
            await _echo_edit(services, bridge, approval, edit[1], reply_id)
            return
        handled, said = await apply_reply(services, approval, text, who)
        if said is not None:
            await bridge.reply(reply_id, said)
        if handled:
            return
    once = RetryKey("matrix-events", reply_id, fingerprint(replied_to, text))
    try:
        with answering(once):
            await services.notify.receive_reply(bridge.name, replied_to, text)
    except Replay:
        pass  # applied before a crash kept its batch's next_batch: delivered already
    except NotFound:
        log.info("a reply to %s matches no notification", replied_to)


async def _decide_on(
    services: Services, bridge: MatrixBridge, event_id: str, verb: str, who: str
) -> bool:
    """Decide the approval shown as that event (a reaction on it), if it is one."""
    shown = platform_id(bridge.room_id, event_id)
    approval = await services.approvals.by_platform_message(bridge.name, shown)
    if approval is None:
        return False
    await decide(services, approval.approval_id, verb, None, who)
    return True


async def _echo_edit(
    services: Services, bridge: MatrixBridge, approval: m.Approval, command: str, reply_to: str
) -> None:
    """Answer an ``edit <command>`` reply to a request's card: the command it would run, to
    be approved with a ✅, or why it cannot be changed."""
    refused = edit_refused(approval)
    if refused is not None:
        await bridge.reply(reply_to, refused)
    else:
        await bridge.confirm_edit(approval, command, reply_to)


async def _approve_echo(services: Services, bridge: MatrixBridge, event_id: str, who: str) -> None:
    """A ✅ on the bot's echo of an edit: approve the request with the echoed command."""
    echoed = await bridge.edit_of(event_id)
    if echoed is None:
        return
    approval_id, command = echoed
    refused = await approve_changed(services, approval_id, command, who)
    if refused is not None:
        await bridge.send(
            f"Approval #{approval_id} was not approved changed: {refused}", reference=""
        )


def _without_quote(body: str) -> str:
    """A reply's own text: clients put the replied-to message first, as "> " lines."""
    lines = body.splitlines()
    while lines and lines[0].startswith(">"):
        lines.pop(0)
    return "\n".join(lines).strip()
