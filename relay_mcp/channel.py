"""``relay mcp`` as a Claude Code channel: what Relay has for the agent is pushed into its running
session (``notifications/claude/channel``), and the session's permission prompts become approval
requests whose decisions go back (``notifications/claude/channel/permission``).

The channel follows the agent's event feed. Its cursor is kept in the agent's state directory,
so a session that restarts gets what it missed, in order, and nothing it was given before; a
direct message is read through the API as it is pushed, which is its delivery receipt, and one
acknowledged meanwhile is not pushed. Only what Relay authenticated reaches the session, and
each event says who wrote it: another agent, or the operator.

Nothing is ever allowed by default: a permission prompt that nobody decides, a server that
cannot be reached, or any error sends nothing, and the terminal's own prompt stays.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.session import ServerSession
from mcp.types import NotificationParams
from platformdirs import user_state_dir
from pydantic import BaseModel, ConfigDict

from relay_api import models as m
from relay_api.prompts import prompt_payload, title_of
from relay_client import AsyncRelayClient, errors
from relay_client.coding_agents import (
    FRAMING,
    SOURCE_CHANNEL,
    approval_news,
    contest_news,
    denial_news,
    message_news,
    task_news,
)
from relay_client.kept_files import Cursor, file_name, server_folder

CAPABILITIES: dict[str, dict[str, Any]] = {"claude/channel": {}, "claude/channel/permission": {}}
PUSH = "notifications/claude/channel"
PERMISSION_REQUEST = "notifications/claude/channel/permission_request"
PERMISSION = "notifications/claude/channel/permission"
# The hosts that load a stdio server as a channel: another host would drop the pushes, and a
# message handed to it would be receipted as delivered to a session that never saw it.
CHANNEL_HOSTS = frozenset({"claude-code"})
FEED_WAIT = 50.0
RETRY_SECONDS = 2.0
PERMISSION_SECONDS = 120  # an approval for a prompt the host may answer at its terminal
SESSION_ENDED = "the Claude Code session ended before an answer"
# Claude Code's mark in a preview it cut: the command is not whole, so no policy may read it.
ELIDED = re.compile(r"⋯ [\d,]+ code points elided ⋯|…$")

INSTRUCTIONS = (
    'Events from Relay arrive as <channel source="relay" kind="..."> tags. Each says who wrote '
    f"it: another agent or the operator (the human who runs Relay). {FRAMING} kind is message "
    "(a direct message to you: answer with send_message to its from, reply_to its message_id; "
    "ack_messages with its message_id once handled), post (a post in a room you joined: "
    "answer with post_to_room to its room_id, reply_to its message_id, only when you have "
    "something to add), task (a task assigned to you: claim_task with its task_id), or "
    "approval (the decision on an approval you asked for). A text cut short says which tool "
    "reads it whole."
)

log = logging.getLogger("relay.mcp")

Behavior = Literal["allow", "deny"]


class PermissionRequestParams(NotificationParams):
    """What Claude Code sends when a permission dialog opens (the channels reference): its
    fields are snake_case, where MCP's own are camelCase."""

    model_config = ConfigDict(alias_generator=None)

    request_id: str
    tool_name: str
    description: str = ""
    input_preview: str = ""


def cursor_path(url: str, agent_id: str) -> Path:
    """``~/.local/state/relay/channels/<host>-<port>/<agent_id>.json`` (per platform)."""
    root = Path(user_state_dir("relay", appauthor=False))
    return root / "channels" / server_folder(url) / f"{file_name(agent_id)}.json"


class Channel:
    """The channel of one ``relay mcp`` process: it starts pushing once a host that loads
    channels has connected, and answers that host's permission prompts."""

    def __init__(
        self,
        relay: AsyncRelayClient,
        cursor: Cursor,
        *,
        rooms: bool = True,
        forced: bool = False,
        permission_seconds: int = PERMISSION_SECONDS,
    ) -> None:
        assert relay.config.agent_id is not None
        self.relay = relay
        self.me = relay.config.agent_id
        self.cursor = cursor
        self.rooms = rooms
        self.forced = forced
        self.permission_seconds = permission_seconds
        self._session: ServerSession | None = None
        self._host: str | None = None
        self._connected = asyncio.Event()
        # What the first session pushed from the inbox: the feed may tell of them again.
        self._from_inbox: set[int] = set()
        self._prompts: set[asyncio.Task[None]] = set()
        self._asked: dict[str, int] = {}  # a prompt's request id: its approval, while pending

    # ------------------------------------------------------------ the host's connection

    async def middleware(
        self, ctx: ServerRequestContext[Any, Any], call_next: Callable[..., Awaitable[Any]]
    ) -> Any:
        """Learn the host's name from its first message, and its session once it is past the
        handshake (a push before then would be dropped)."""
        if self._host is None:
            self._host = _client_name(ctx)
        result = await call_next(ctx)
        if ctx.method != "initialize" and self._session is None:
            self._session = ctx.session
            self._connected.set()
        return result

    @property
    def active(self) -> bool:
        return self.forced or self._host in CHANNEL_HOSTS

    async def _send(self, method: str, params: dict[str, Any]) -> None:
        assert self._session is not None
        # The SDK has no typed seat for a vendor's notification: it goes on the connection's
        # own outbound line, as the SDK sends its own.
        await self._session._connection.notify(method, params)

    # ------------------------------------------------------------ pushing

    async def run(self) -> None:
        """Push what the agent's feed brings, from the kept cursor (or, the first time, what
        waits in the inbox and then from now), until cancelled or the token is refused."""
        await self._connected.wait()
        if not self.active:
            return
        try:
            await self._follow()
        except errors.AuthenticationError as exc:  # rotated or revoked: no retry will pass
            log.error("channel stopped: %s", exc)

    async def _follow(self) -> None:
        cursor = self.cursor.load()
        while cursor is None:
            try:
                cursor = (await self.relay.events.list(limit=1)).cursor
                await self._push_inbox()
            except errors.AuthenticationError:
                raise
            except errors.RelayError as exc:
                log.warning("channel: %s; trying again", exc)
                cursor = None
                await asyncio.sleep(RETRY_SECONDS)
        self.cursor.keep(cursor)
        while True:
            try:
                page = await self.relay.events.list(after=cursor, wait=FEED_WAIT)
                for event in page.events:
                    await self._push_event(event)
                    cursor = event.event_id
                    self.cursor.keep(cursor)
            except errors.AuthenticationError:
                raise
            except errors.RelayError as exc:  # the event is pushed again from the cursor
                log.warning("channel: %s; trying again", exc)
                await asyncio.sleep(RETRY_SECONDS)
                continue
            if page.cursor != cursor:
                cursor = page.cursor
                self.cursor.keep(cursor)

    async def _push_inbox(self) -> None:
        box = await self.relay.agents.inbox(limit=100)
        for message in box.messages:
            await self._push_message(message)
            self._from_inbox.add(message.message_id)

    async def _push_event(self, event: m.Event) -> None:
        if event.kind == "message.created" and event.audience == self.me:
            await self._push_message_id(int(event.subject_id))
        elif event.kind == "message.posted" and self.rooms:
            if event.data.get("from_agent") != self.me:
                await self._push_message_id(int(event.subject_id))
        elif event.kind.startswith("task.") and _offered(event, self.me):
            task = await self.relay.tasks.get(int(event.subject_id))
            await self._send(PUSH, _params(task_news(_record(task))))
        elif event.kind == "approval.decided" and event.audience == self.me:
            news = approval_news(_record(await self.relay.approvals.show(int(event.subject_id))))
            if news is not None:
                await self._send(PUSH, _params(news))
        elif event.kind == "reservation.contested" and event.audience == self.me:
            await self._send(PUSH, _params(contest_news(_record(event))))

    async def _push_message_id(self, message_id: int) -> None:
        if message_id in self._from_inbox:
            return
        try:
            message = await self.relay.messages.show(message_id)  # the recipient's: a delivery
        except errors.NotFoundError:  # left the room, or gone
            return
        await self._push_message(message)

    async def _push_message(self, message: m.Message) -> None:
        if message.status != "acked":
            await self._send(PUSH, _params(message_news(_record(message))))

    # ------------------------------------------------------------ permission prompts

    async def on_permission_request(
        self, ctx: ServerRequestContext[Any, Any], params: PermissionRequestParams
    ) -> None:
        """File the prompt as an approval request and answer it once decided, on a task of its
        own (the host waits on nothing: it races the terminal)."""
        prompt = asyncio.create_task(self._answer(params))
        self._prompts.add(prompt)
        prompt.add_done_callback(self._prompts.discard)

    async def _answer(self, params: PermissionRequestParams) -> None:
        try:
            approval = await self._decided(params)
        except Exception as exc:  # the terminal's own prompt stays: never an allow by default
            log.warning("permission prompt %s: no decision (%s)", params.request_id, exc)
            return
        behavior = _verdict(approval)
        if behavior is not None:
            await self._send(PERMISSION, {"request_id": params.request_id, "behavior": behavior})
        why = denial_news(_record(approval))
        if why is not None:  # the verdict has no room for the reason: said in the session
            await self._send(PUSH, _params(why))

    async def _decided(self, params: PermissionRequestParams) -> m.Approval:
        """The prompt filed as an approval request, once decided (or no longer waited on)."""
        tool_input = _whole_input(params.input_preview)
        cwd = os.getcwd()
        payload = prompt_payload(
            SOURCE_CHANNEL,
            params.tool_name,
            tool_input,
            cwd,
            description=params.description,
            input_preview=params.input_preview,
            request_id=params.request_id,
        )
        described = tool_input if tool_input is not None else {"description": params.description}
        approval = await self.relay.approvals.request(
            title_of(params.tool_name, described, cwd),
            payload=payload,
            expires_in=self.permission_seconds,
        )
        loop = asyncio.get_running_loop()
        ends = loop.time() + self.permission_seconds + 5
        self._asked[params.request_id] = approval.approval_id
        while approval.status == "pending" and loop.time() < ends:
            approval = await self.relay.approvals.show(
                approval.approval_id, wait=min(ends - loop.time(), FEED_WAIT)
            )
        # Not reached when the session ends first (this task is cancelled) or Relay fails:
        # close() withdraws it.
        del self._asked[params.request_id]
        return approval

    def install(self, server: MCPServer) -> None:
        """Hear ``server``'s host's permission prompts."""
        # MCPServer has no public seat for a vendor's notification: the lowlevel server's
        # handler table is where the SDK serves methods it does not know.
        server._lowlevel_server.add_notification_handler(
            PERMISSION_REQUEST, PermissionRequestParams, self.on_permission_request
        )

    async def close(self) -> None:
        """Stop answering prompts, and withdraw the approvals still asked for them: the session
        that would have read the answer is gone (their deadline ends them if Relay cannot be
        reached now)."""
        for prompt in list(self._prompts):
            prompt.cancel()
        await asyncio.gather(*self._prompts, return_exceptions=True)
        for approval_id in self._asked.values():
            try:
                await self.relay.approvals.withdraw(approval_id, reason=SESSION_ENDED)
            except errors.RelayError as exc:
                log.warning("approval %s not withdrawn: %s", approval_id, exc)


def _verdict(approval: m.Approval) -> Behavior | None:
    """The channel's verdict on a prompt filed as ``approval``: None while nobody answered."""
    if approval.status == "approved":
        # Approved changed (Relay refuses that for a channel's prompts): not as asked.
        return "allow" if approval.approved_payload is None else None
    if approval.status == "rejected":
        return "deny"
    return None  # expired: nobody answered in time


def _record(model: BaseModel) -> dict[str, Any]:
    """A model as the API answers it: what relay_client.coding_agents reads."""
    return model.model_dump(mode="json")


def _params(news: tuple[str, dict[str, str]]) -> dict[str, Any]:
    content, meta = news
    return {"content": content, "meta": meta}


def _offered(event: m.Event, agent_id: str) -> bool:
    """Whether a task event offers the task to the agent: created for it, or open for it again
    (a lapsed lease, a retry)."""
    return event.data.get("assignee") == agent_id and event.data.get("status") == "open"


def _whole_input(preview: str) -> dict[str, Any] | None:
    """The tool's arguments, when the preview holds them whole; None when it was cut (a policy
    must not judge a command it cannot read in full) or is no JSON object."""
    if ELIDED.search(preview):
        return None
    try:
        parsed = json.loads(preview)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _client_name(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The host's name, from ``initialize`` (the 2025 protocol) or any request's ``_meta``
    (the 2026 protocol)."""
    params = ctx.params or {}
    info = params.get("clientInfo")
    if not isinstance(info, dict):
        meta = params.get("_meta")
        info = meta.get("io.modelcontextprotocol/clientInfo") if isinstance(meta, dict) else None
    name = info.get("name") if isinstance(info, dict) else None
    return name if isinstance(name, str) else None
