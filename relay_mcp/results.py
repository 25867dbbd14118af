"""What a tool answers: structured content for the application, a short text for the model, and
one line on what is waiting for the agent, so that it learns of new mail without polling.

A Relay error is a tool error (``isError``) carrying Relay's ``code`` and ``detail``: the model
reads it and may try again; the session goes on. ``tool`` registers a function so.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel

from relay_client import AsyncRelayClient, errors


def structured(value: BaseModel | dict[str, Any]) -> dict[str, Any]:
    """A result's structured content (JSON-ready)."""
    if isinstance(value, BaseModel):
        dumped: dict[str, Any] = value.model_dump(mode="json")
        return dumped
    return value


# Where each agent's feed was read up to, to tell of what was decided since its last answer.
_seen: WeakKeyDictionary[AsyncRelayClient, int] = WeakKeyDictionary()


async def waiting(relay: AsyncRelayClient) -> str:
    """One line on what waits for the calling agent: its unread messages (from its heartbeat:
    a tool call is a sign of life) and its approvals decided since its last answer (from its
    feed); empty for the operator, who has neither."""
    if relay.config.agent_id is None:
        return ""
    beat = await relay.agents.heartbeat()
    feed = await relay.events.list(after=_seen.get(relay), limit=1000)
    _seen[relay] = feed.cursor
    unread = beat.pending_messages or 0
    line = f"{unread} unread message{'' if unread == 1 else 's'}"
    decided = sum(event.kind == "approval.decided" for event in feed.events)
    if decided:
        line += f", {decided} approval{'' if decided == 1 else 's'} decided"
    return line


async def answer(
    relay: AsyncRelayClient, text: str, value: BaseModel | dict[str, Any]
) -> CallToolResult:
    """A tool's answer: ``text`` and the waiting line for the model, ``value`` for the
    application (with the waiting line under ``waiting``)."""
    line = await waiting(relay)
    content = structured(value) | ({"waiting": line} if line else {})
    shown = f"{text}\n[{line}]" if line else text
    return CallToolResult(
        content=[TextContent(type="text", text=shown)], structured_content=content
    )


def failure(exc: errors.RelayError) -> CallToolResult:
    """A Relay error as a tool error the model can read."""
    if isinstance(exc, errors.APIStatusError):
        return refusal(exc.code, exc.message)
    return refusal("unreachable", str(exc))


def refusal(code: str, detail: str) -> CallToolResult:
    """A tool error with Relay's ``code`` and ``detail``."""
    return CallToolResult(
        content=[TextContent(type="text", text=f"{code}: {detail}")],
        structured_content={"code": code, "detail": detail},
        is_error=True,
    )


ToolFunction = TypeVar("ToolFunction", bound=Callable[..., Awaitable[CallToolResult]])


def tool(server: MCPServer, annotations: ToolAnnotations) -> Callable[[ToolFunction], ToolFunction]:
    """Register a function as a tool of ``server``, its Relay errors answered as tool errors."""

    def register(function: ToolFunction) -> ToolFunction:
        @functools.wraps(function)
        async def call(*args: Any, **kwargs: Any) -> CallToolResult:
            try:
                return await function(*args, **kwargs)
            except errors.RelayError as exc:
                return failure(exc)

        server.tool(annotations=annotations)(call)
        return function

    return register
