"""Slack's way back in: the Events API (a reply in a message's thread) and interactivity (an
Approve / Reject click; Edit & approve, which opens a modal whose submission approves the
request with the command as the operator changed it). Every request is checked as Slack signs
it, with Slack's own verifier: ``X-Slack-Signature`` v0 over the timestamp and the raw body, and
a timestamp within 5 minutes. Anything else (a timestamp that is no number, a body that is not
UTF-8 included) is 401 and changes nothing, and is refused like a bad token: audited, and
counted against the address's refusal limit, past which it is 429 before any checking.

Slack retries an event it did not see acknowledged within 3 seconds; each event's id makes it
once (kept like an ``Idempotency-Key``), so a reply reaches the agent once, across restarts too.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import parse_qs

from aiohttp import web
from slack_sdk.signature import SignatureVerifier

from relay_api.errors import AuthenticationError, BridgeError, NotFound, RelayError
from relay_core.auth import OPERATOR_CALLER
from relay_core.idempotency import Replay, RetryKey, answering
from relay_core.services import Services
from relay_server.app_keys import REFUSALS, SERVICES, SETTINGS
from relay_server.bridges.decisions import (
    apply_reply,
    approve_changed,
    fingerprint,
    pressed,
)
from relay_server.bridges.slack.sending import (
    EDIT_BLOCK,
    EDIT_VIEW,
    SlackBridge,
    editable,
    platform_id,
)
from relay_server.middleware import error_response
from relay_server.validation import read_body

log = logging.getLogger("relay.slack")


async def _verified(request: web.Request) -> tuple[bytes, SlackBridge] | web.Response:
    """The raw body of a request Slack signed, and the bridge; else the answer to refuse it
    (an unsigned one is raised as AuthenticationError, which the middleware audits)."""
    settings = request.app[SETTINGS].slack
    bridge = request.app[SERVICES].ctx.bridge_named(SlackBridge.name)
    if not isinstance(bridge, SlackBridge) or settings.signing_secret is None:
        return error_response(404, "not_found", "the Slack bridge is not configured")
    request.app[REFUSALS].check(request)  # an address past its refusals: 429, no checking
    body = await read_body(request)
    verifier = SignatureVerifier(settings.signing_secret.get_secret_value())
    try:
        signed = verifier.is_valid(
            body,
            request.headers.get("X-Slack-Request-Timestamp"),
            request.headers.get("X-Slack-Signature"),
        )
    except (ValueError, TypeError):  # a timestamp that is no number, a body not UTF-8…
        signed = False
    if not signed:
        raise AuthenticationError("not signed by Slack, or too old")
    return body, bridge


async def events(request: web.Request) -> web.Response:
    """POST /v1/bridges/slack/events: the Events API."""
    checked = await _verified(request)
    if isinstance(checked, web.Response):
        return checked
    body, bridge = checked
    try:
        payload = json.loads(body)
        if payload.get("type") == "url_verification":
            return web.json_response({"challenge": str(payload["challenge"])})
        if payload.get("type") == "event_callback":
            operators = request.app[SETTINGS].slack.operators
            await _on_event(request.app[SERVICES], bridge, operators, payload)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return error_response(400, "invalid", "not a Slack event")
    return web.json_response({"ok": True})


async def _on_event(
    services: Services, bridge: SlackBridge, operators: list[str], payload: dict[str, Any]
) -> None:
    """A reply in the thread of one of Relay's messages, from an operator: a decision when
    the message is an approval and the text says so, else a reply to a notification."""
    event = payload["event"]
    thread_ts, ts = event.get("thread_ts"), event.get("ts")
    if (
        event.get("type") != "message"
        or event.get("subtype")  # edits, joins, the bot's own posts…
        or event.get("bot_id")
        or event.get("channel") != bridge.channel
        or not thread_ts
        or thread_ts == ts  # a thread's first message is no reply
    ):
        return
    user, text = str(event.get("user", "")), str(event.get("text", ""))
    if operators and user not in operators:
        log.info("a reply from %s, who is not among RELAY_SLACK_OPERATORS, was ignored", user)
        return
    replied_to = platform_id(bridge.channel, thread_ts)
    approval = await services.approvals.by_platform_message(bridge.name, replied_to)
    if approval is not None:
        handled, said = await apply_reply(services, approval, text, f"slack:{user}")
        if said is not None:
            await _say_in(bridge, replied_to, said)
        if handled:
            return
    once = RetryKey("slack-events", str(payload["event_id"]), fingerprint(replied_to, text))
    try:
        with answering(once):
            await services.notify.receive_reply(bridge.name, replied_to, text)
    except Replay:
        pass  # Slack sent this event again: its reply was delivered the first time
    except NotFound:
        log.info("a thread reply on %s matches no notification", replied_to)


async def interactions(request: web.Request) -> web.Response:
    """POST /v1/bridges/slack/interactions: a click on an approval's Approve / Reject / Edit &
    approve, and the submission of the edit's modal."""
    checked = await _verified(request)
    if isinstance(checked, web.Response):
        return checked
    body, bridge = checked
    command: object = None
    try:
        payload = json.loads(parse_qs(body.decode())["payload"][0])
        kind, user = payload.get("type"), str(payload["user"]["id"])
        if kind == "view_submission" and payload["view"]["callback_id"] == EDIT_VIEW:
            view = payload["view"]
            value = str(view["private_metadata"])
            command = view["state"]["values"][EDIT_BLOCK][EDIT_BLOCK]["value"]
            verb = "edited"
        elif kind == "block_actions":
            [action] = payload["actions"][:1]
            verb, value = action.get("action_id"), str(action.get("value", ""))
        else:
            return web.Response()
    except (
        ValueError,
        KeyError,
        TypeError,
        IndexError,
        AttributeError,
        UnicodeDecodeError,
        RecursionError,
    ):
        return error_response(400, "invalid", "not a Slack interaction")
    operators = request.app[SETTINGS].slack.operators
    services = request.app[SERVICES]
    if operators and user not in operators:
        log.info("a click by %s, who is not among RELAY_SLACK_OPERATORS, was ignored", user)
        return web.Response()
    if not value.isdigit():
        return web.Response()
    approval_id = int(value)
    if verb == "edit":
        await _open_edit(services, bridge, approval_id, str(payload.get("trigger_id", "")))
    elif verb == "edited" and isinstance(command, str):
        refused = await approve_changed(services, approval_id, command, f"slack:{user}")
        if refused is not None:  # shown under the input; the modal stays open
            return web.json_response(
                {"response_action": "errors", "errors": {EDIT_BLOCK: refused[:150]}}
            )
    elif isinstance(verb, str):
        said = await pressed(services, approval_id, verb, f"slack:{user}")
        if said is not None and verb not in ("approve", "reject"):  # the card's update says it
            await _say(bridge, payload, said)
    return web.Response()  # the message itself is updated by the decision (chat.update)


async def _say(bridge: SlackBridge, payload: dict[str, Any], text: str) -> None:
    """Answer a click in the thread of the message clicked on."""
    message, channel = payload.get("message"), payload.get("channel")
    if isinstance(message, dict) and isinstance(channel, dict):
        await _say_in(bridge, platform_id(str(channel.get("id")), str(message.get("ts"))), text)


async def _say_in(bridge: SlackBridge, platform_message_id: str, text: str) -> None:
    try:
        await bridge.say_in_thread(platform_message_id, text)
    except BridgeError as exc:
        log.warning("cannot answer the operator on Slack: %s", exc.detail)


async def _open_edit(
    services: Services, bridge: SlackBridge, approval_id: int, trigger_id: str
) -> None:
    """Open the edit's modal for a pending request the operator may approve changed."""
    try:
        approval = await services.approvals.show(OPERATOR_CALLER, approval_id)
        command = editable(approval)
        if approval.status == "pending" and command is not None:
            await bridge.open_edit(trigger_id, approval, command)
    except RelayError as exc:  # BridgeError among them
        log.warning("cannot open the edit of approval %s on Slack: %s", approval_id, exc)
