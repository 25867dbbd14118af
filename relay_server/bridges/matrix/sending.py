"""The Matrix bridge, on httpx over the client-server API (a handful of endpoints; no SDK).

A message's platform id is ``"<room_id>:<event_id>"``; room ids hold colons themselves, so it is
split at the last ``":$"`` (an event id begins with ``$``). The access token travels only in the
Authorization header; no error Relay raises carries it. End-to-end encrypted rooms are out of
scope: ``start`` refuses one.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any
from urllib.parse import quote

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

MAX_RETRY_AFTER = 10.0  # seconds of M_LIMIT_EXCEEDED worth waiting out
# The content key of the bot's echo of an operator's "edit <command>": the approval and the
# command a ✅ on the echo approves (namespaced, as the specification asks of custom keys).
EDIT_KEY = "dev.relay.approve_changed"


def platform_id(room_id: str, event_id: str) -> str:
    """The id Relay keeps for a Matrix event."""
    return f"{room_id}:{event_id}"


def split_platform_id(platform_message_id: str) -> tuple[str, str]:
    """A kept id's room and event."""
    room_id, _, event = platform_message_id.rpartition(":$")
    return room_id, f"${event}"


class MatrixBridge:
    """Sends to one operator room as a bot user; replies and reactions come back by /sync."""

    name = "matrix"
    capabilities = BridgeCapabilities(topics=True, replies=True)

    def __init__(
        self,
        homeserver: str,
        user_id: str,
        access_token: str,
        room_id: str,
        *,
        operators: list[str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.user_id = user_id
        self.room_id = room_id
        self.operators = list(operators or [])  # invited to the rooms spaces sync makes
        self.server_name = user_id.partition(":")[2]
        self._http = httpx.AsyncClient(
            base_url=f"{homeserver.rstrip('/')}/_matrix/client/v3/",
            headers={"Authorization": f"Bearer {access_token}"},
            timeout=60,
            transport=transport,
        )

    async def call(
        self, method: str, path: str, body: Any = None, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """One client-server API call; its JSON, or ``BridgeError`` saying what went wrong."""
        # Named by the path's first part: the rest names rooms and transactions.
        with platform_call("matrix", f"{method} {path.split('/')[0]}"):
            return await self._call(method, path, body, params)

    async def _call(
        self, method: str, path: str, body: Any, params: dict[str, Any] | None
    ) -> dict[str, Any]:
        for _ in range(2):
            try:
                response = await self._http.request(method, path, json=body, params=params)
            except httpx.TimeoutException:
                raise BridgeError(f"the Matrix homeserver did not answer {path} in time") from None
            except httpx.TransportError as exc:
                raise BridgeError(
                    f"cannot reach the Matrix homeserver ({type(exc).__name__})"
                ) from None
            try:
                answer: dict[str, Any] = response.json()
            except ValueError:
                raise BridgeError(
                    f"the homeserver answered {response.status_code} to {path}"
                ) from None
            if response.is_success:
                return answer
            wait = answer.get("retry_after_ms")
            if answer.get("errcode") == "M_LIMIT_EXCEEDED" and wait is not None:
                if wait / 1000 <= MAX_RETRY_AFTER:
                    await asyncio.sleep(wait / 1000)
                    continue
            raise BridgeError(
                f"Matrix refused {path.split('/')[0]}: {answer.get('errcode')} "
                f"{answer.get('error', '')}".strip()
            )
        raise BridgeError("the Matrix homeserver still limits Relay after waiting")

    def _room(self, *rest: str, room_id: str | None = None) -> str:
        """A path under the operator room (or ``room_id``), each part escaped."""
        parts = [room_id or self.room_id, *rest]
        return "/".join(["rooms", *(quote(part, safe="") for part in parts)])

    async def start(self) -> None:
        """Join the operator room, and refuse it if it is end-to-end encrypted."""
        await self.call("POST", self._room("join"), {})
        try:
            await self.call("GET", self._room("state", "m.room.encryption", ""))
        except BridgeError as exc:
            if "M_NOT_FOUND" in exc.detail:
                return
            raise
        raise BridgeError(
            f"the Matrix room {self.room_id} is end-to-end encrypted, which Relay does not "
            "support: use an unencrypted room for the operator"
        )

    async def _post(self, content: dict[str, Any]) -> str:
        path = self._room("send", "m.room.message", uuid.uuid4().hex)
        sent = await self.call("PUT", path, content)
        return platform_id(self.room_id, str(sent["event_id"]))

    async def send(self, text: str, *, reference: str) -> str:
        return await self._post({"msgtype": "m.text", "body": text})

    async def ensure_topic(self, room: m.Room, space: m.Space | None) -> str:
        """The Matrix room of a Relay room, inside the Matrix space of its Relay space, each
        found by its alias (``#relay-room-<id>``, ``#relay-space-<id>``) or made once."""
        child = await self._room_by_alias(f"relay-room-{room.room_id}", room.name, room.topic)
        if space is not None:
            parent = await self._room_by_alias(
                f"relay-space-{space.space_id}", space.name, None, True
            )
            path = "/".join(
                ["rooms", quote(parent, safe=""), "state", "m.space.child", quote(child, safe="")]
            )
            await self.call("PUT", path, {"via": [self.server_name]})
        return child

    async def _room_by_alias(
        self, alias: str, name: str, topic: str | None, space: bool = False
    ) -> str:
        full = quote(f"#{alias}:{self.server_name}", safe="")
        try:
            return str((await self.call("GET", f"directory/room/{full}"))["room_id"])
        except BridgeError as exc:
            if "M_NOT_FOUND" not in exc.detail:
                raise
        body: dict[str, Any] = {
            "name": name,
            "room_alias_name": alias,
            "preset": "private_chat",
            "invite": self.operators,
        }
        if topic:
            body["topic"] = topic
        if space:
            body["creation_content"] = {"type": "m.space"}
        return str((await self.call("POST", "createRoom", body))["room_id"])

    async def mirror(self, platform_thread_id: str, text: str) -> None:
        path = "/".join(
            [
                "rooms",
                quote(platform_thread_id, safe=""),
                "send",
                "m.room.message",
                uuid.uuid4().hex,
            ]
        )
        await self.call("PUT", path, {"msgtype": "m.text", "body": text})

    async def ask(self, approval: m.Approval) -> str | None:
        hint = (
            answer_hint(approval)
            if approval.kind == "question"
            else hints(
                "Reply 'approve [note]' / 'reject [note]', or react ✅ / ❌.",
                edit_hint(approval),
                "Reply 'always' to approve it, and this exact line in this directory from now on."
                if rememberable(approval)
                else "",
                stop_hint(approval),
            )
        )
        return await self._post(
            {"msgtype": "m.text", "body": f"{describe(approval, 4000)}\n\n{hint}"}
        )

    async def reply(self, event_id: str, text: str, extra: dict[str, Any] | None = None) -> None:
        """A message in reply to the event ``event_id``, with ``extra`` content keys."""
        reference = {"m.in_reply_to": {"event_id": event_id}}
        await self._post(
            {"msgtype": "m.text", "body": text, "m.relates_to": reference} | (extra or {})
        )

    async def confirm_edit(self, approval: m.Approval, command: str, reply_to: str) -> None:
        """Echo, in reply to the operator's ``edit`` message (event ``reply_to``), what the
        request would run, and ask for a ✅ on the echo to approve it so. The echo's content
        holds the approval and the command (``EDIT_KEY``): the reaction reads them back from
        the bot's own event (``edit_of``)."""
        body = (
            f"Approve #{approval.approval_id} changed? It runs:\n{command}\n\n"
            "React ✅ to this message to approve it so."
        )
        echoed = {"approval_id": approval.approval_id, "command": command}
        await self.reply(reply_to, body, {EDIT_KEY: echoed})

    async def edit_of(self, event_id: str) -> tuple[int, str] | None:
        """The approval and command of the bot's echo of an edit, if ``event_id`` is one."""
        try:
            event = await self.call("GET", self._room("event", event_id))
        except BridgeError as exc:
            if "M_NOT_FOUND" in exc.detail or "M_FORBIDDEN" in exc.detail:
                return None  # a reaction to an event the bot cannot see is none of its echoes
            raise
        content = event.get("content")
        if event.get("sender") != self.user_id or not isinstance(content, dict):
            return None
        echoed = content.get(EDIT_KEY)
        if not isinstance(echoed, dict):
            return None
        approval_id, command = echoed.get("approval_id"), echoed.get("command")
        if type(approval_id) is not int or not isinstance(command, str):
            return None
        return approval_id, command

    async def _edit(self, platform_message_id: str, text: str) -> None:
        _, event_id = split_platform_id(platform_message_id)
        new = {"msgtype": "m.text", "body": text}
        await self._post(
            {
                **new,
                "body": f"* {text}",
                "m.new_content": new,
                "m.relates_to": {"rel_type": "m.replace", "event_id": event_id},
            }
        )

    async def settle(self, platform_message_id: str, approval: m.Approval) -> None:
        said = outcome(approval)
        if approval.remembered_policy_id is not None:
            said += "\nReply 'undo' within ten minutes to forget it."
        await self._edit(platform_message_id, f"{describe(approval, 4000)}\n\n{said}")

    async def remind(self, platform_message_id: str, approval: m.Approval) -> None:
        """A new message in reply to the card (a client shows the card quoted above it)."""
        _, event_id = split_platform_id(platform_message_id)
        await self.reply(event_id, reminder(approval))

    async def answered(self, platform_message_id: str, text: str, answer: str) -> None:
        await self._edit(platform_message_id, f"{text}\n\nAnswered: {answer}")

    async def sync(self, since: str | None, timeout_ms: int) -> dict[str, Any]:
        """One /sync of the operator room's messages and reactions, long-polled."""
        only = {
            "room": {
                "rooms": [self.room_id],
                "timeline": {"types": ["m.room.message", "m.reaction"], "limit": 100},
                "state": {"types": []},
                "ephemeral": {"types": []},
                "account_data": {"types": []},
            },
            "presence": {"types": []},
            "account_data": {"types": []},
        }
        params: dict[str, Any] = {"timeout": timeout_ms, "filter": json.dumps(only)}
        if since is not None:
            params["since"] = since
        return await self.call("GET", "sync", params=params)

    async def close(self) -> None:
        await self._http.aclose()
