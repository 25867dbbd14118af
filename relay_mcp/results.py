"""What a tool answers: structured content for the application, a short text for the model, and
one line on what is waiting for the agent, so that it learns of new mail without polling.

A Relay error is a tool error (``isError``) carrying Relay's ``code`` and ``detail``: the model
reads it and may try again; the session goes on. A tool is a module-level function whose first
parameter is the client it acts through; ``serve_tools`` injects the caller's.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

from mcp.server.mcpserver import Context, MCPServer
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
# The client a tool call acts through: the one agent's (stdio), or the caller's (HTTP).
Clients = Callable[[Context], AsyncRelayClient]


@dataclass(frozen=True)
class Tool:
    """A tool: a module-level function whose first parameter is the calling agent's client,
    and its hints."""

    function: Callable[..., Awaitable[CallToolResult]]
    annotations: ToolAnnotations


def listed_in(
    tools: list[Tool],
) -> Callable[[ToolAnnotations], Callable[[ToolFunction], ToolFunction]]:
    """A decorator that lists a function in ``tools`` with its hints."""

    def hinted(annotations: ToolAnnotations) -> Callable[[ToolFunction], ToolFunction]:
        def register(function: ToolFunction) -> ToolFunction:
            tools.append(Tool(function, annotations))
            return function

        return register

    return hinted


def serve_tools(server: MCPServer, tools: list[Tool], clients: Clients) -> None:
    """Register ``tools`` on ``server``, each call acting through ``clients(ctx)`` and its Relay
    errors answered as tool errors."""
    for each in tools:
        server.tool(annotations=each.annotations)(_injected(each.function, clients))


def _injected(
    function: Callable[..., Awaitable[CallToolResult]], clients: Clients
) -> Callable[..., Awaitable[CallToolResult]]:
    """``function`` as the SDK calls it: with the request's context where the client was (the
    SDK reads the parameters and their hints, resolved here, from the signature)."""
    signature = inspect.signature(function)
    _, *parameters = signature.parameters.values()  # the client, injected
    hints = typing.get_type_hints(function, include_extras=True)
    context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Context)
    shown = [p.replace(annotation=hints[p.name]) for p in parameters]

    async def call(ctx: Context, **arguments: Any) -> CallToolResult:
        try:
            return await function(clients(ctx), **arguments)
        except errors.RelayError as exc:
            return failure(exc)

    call.__name__ = function.__name__
    call.__qualname__ = function.__qualname__
    call.__doc__ = function.__doc__
    call.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[context, *shown], return_annotation=CallToolResult
    )
    call.__annotations__ = {"ctx": Context} | {p.name: p.annotation for p in shown}
    call.__annotations__["return"] = CallToolResult
    return call
