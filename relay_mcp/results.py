"""What a tool answers: structured content for the application, a short text for the model, and
one line on what is waiting for the agent, so that it learns of new mail without polling.

A Relay error is a tool error (``isError``) carrying Relay's ``code`` and ``detail``: the model
reads it and may try again; the session goes on. A tool is a module-level function whose first
parameter is the client it acts through; ``serve_tools`` injects the caller's.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import sys
import time
import typing
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, InputRequiredResult, TextContent, ToolAnnotations
from mcp.types import Resource as MCPResource
from mcp.types import Tool as MCPTool
from pydantic import ValidationError

from relay_client import AsyncRelayClient, errors
from relay_client.tracing import in_trace
from relay_mcp.answers import Answer
from relay_mcp.confirmation import Refused
from relay_mcp.schemas import lean, lean_answer

log = logging.getLogger("relay.mcp")
T = TypeVar("T")
# How often a long call tells the client it goes on (hosts reset their time-outs on it).
PROGRESS_SECONDS = 10.0


# Where each agent's feed was read up to, to tell of what was decided since its last answer.
_seen: WeakKeyDictionary[AsyncRelayClient, int] = WeakKeyDictionary()


async def watch_from_now(relay: AsyncRelayClient) -> None:
    """Start ``relay``'s waiting line at the feed's head now (a process's start), so that the
    first answer tells of what was decided since, not only of what is decided after it."""
    if relay.config.agent_id is not None and relay not in _seen:
        _seen[relay] = (await relay.events.list(limit=1)).cursor


async def waiting(relay: AsyncRelayClient) -> str | None:
    """One line on what waits for the calling agent: its unread messages (from its heartbeat:
    a tool call is a sign of life) and its approvals decided since its last answer (from its
    feed); none for the operator, who has neither."""
    if relay.config.agent_id is None:
        return None
    beat = await relay.agents.heartbeat()
    feed = await relay.events.list(after=_seen.get(relay), limit=1000)
    _seen[relay] = feed.cursor
    unread = beat.pending_messages or 0
    line = f"{unread} unread message{'' if unread == 1 else 's'}"
    decided = sum(event.kind == "approval.decided" for event in feed.events)
    if decided:
        line += f", {decided} approval{'' if decided == 1 else 's'} decided"
    return line


async def answer(relay: AsyncRelayClient, value: Answer) -> CallToolResult:
    """A tool's answer: ``value`` with what waits for the agent, as structured content and, the
    same JSON, as the text (what the specification asks of a tool with an output schema)."""
    value.waiting = await waiting(relay)
    content = value.model_dump(mode="json", exclude_none=True)
    text = json.dumps(content, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=content)


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


def invalid(exc: ValidationError) -> CallToolResult:
    """Arguments the schema refuses, as ``validation_error: <argument>: <reason>`` (each)."""
    problems = [
        f"{'.'.join(str(part) for part in error['loc']) or 'arguments'}: {error['msg']}"
        for error in exc.errors(include_url=False)
    ]
    return refusal("validation_error", "; ".join(problems))


@contextmanager
def tool_span(name: str, agent_id: str | None) -> Iterator[None]:
    """A span of a tool call, as OpenTelemetry's GenAI conventions name it (``execute_tool``),
    in a process that traces (it has imported OpenTelemetry: ``relay serve`` with tracing on);
    nothing otherwise, and nothing imported."""
    if "opentelemetry.trace" not in sys.modules:
        yield
        return
    from opentelemetry import trace

    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
    if agent_id is not None:
        attributes["gen_ai.agent.id"] = agent_id
    tracer = trace.get_tracer("relay_mcp")
    with tracer.start_as_current_span(f"execute_tool {name}", attributes=attributes):
        yield


class RelayMCPServer(MCPServer):
    """The SDK's server, with the clients its calls act through and whether the operator's
    decisions are confirmed by the human first (``relay_mcp.confirmation``), answering every
    failure of a tool call as Relay's tool errors: refused arguments as ``validation_error``
    (the SDK's text is pydantic's whole report), a crash as ``internal_error`` (its text is
    the tool's name alone)."""

    def __init__(
        self, name: str, clients: Clients, *, confirm_decisions: bool = True, **options: Any
    ) -> None:
        super().__init__(name, **options)
        self.clients = clients
        self.confirm_decisions = confirm_decisions
        self.listed: list[MCPResource] = []
        self.workspace: str | None = None  # the repository the reservation tools speak of

    async def list_resources(self) -> list[MCPResource]:
        """The resources, and those served by a template that are listed too (``listed``)."""
        return [*await super().list_resources(), *self.listed]

    async def list_tools(self) -> list[MCPTool]:
        """The tools, their schemas ``lean``: bytes of every host's context that say nothing
        the schema does not say otherwise."""
        return [
            tool.model_copy(
                update={
                    "input_schema": lean(tool.input_schema),
                    "output_schema": tool.output_schema and lean_answer(tool.output_schema),
                }
            )
            for tool in await super().list_tools()
        ]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        # The caller's trace, as MCP clients send it (params._meta.traceparent): the tool's
        # requests to Relay continue it.
        meta = context.request_context.meta if context is not None else None
        traceparent = (meta or {}).get("traceparent")
        with in_trace(traceparent if isinstance(traceparent, str) else None):
            with tool_span(name, self.clients(context).config.agent_id if context else None):
                return await self._answered(name, arguments, context)

    async def _answered(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            log.exception("tool %s failed", name)
            return refusal("internal_error", f"{name} failed; the server's log says why")
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                return invalid(exc.__cause__)
            refused = next((e for e in (exc, exc.__cause__) if isinstance(e, Refused)), None)
            if refused is not None:
                return refusal(refused.code, refused.detail)
            raise


async def reporting(ctx: Context, call: Awaitable[T]) -> T:
    """``call``'s result; while it runs, a progress notification every ``PROGRESS_SECONDS``
    (the seconds it has run), so that a host that resets its time-out on progress lets a long
    wait finish. Nothing is sent when the caller asked for no progress."""
    work = asyncio.ensure_future(call)
    started = time.monotonic()
    try:
        while not (await asyncio.wait({work}, timeout=PROGRESS_SECONDS))[0]:
            ran = round(time.monotonic() - started)
            await ctx.report_progress(ran, message=f"still waiting ({ran} s)")
        return work.result()
    finally:
        work.cancel()  # the call is cancelled with it (a host that gave up): its waits end


ToolFunction = TypeVar("ToolFunction", bound=Callable[..., Awaitable[CallToolResult]])
# The client a tool call acts through: the one agent's (stdio), or the caller's (HTTP).
Clients = Callable[[Context], AsyncRelayClient]


@dataclass(frozen=True)
class Tool:
    """A tool: a module-level function whose first parameter is the calling agent's client,
    its title for people, and its hints."""

    function: Callable[..., Awaitable[CallToolResult]]
    title: str
    annotations: ToolAnnotations


def listed_in(
    tools: list[Tool],
) -> Callable[[ToolAnnotations, str], Callable[[ToolFunction], ToolFunction]]:
    """A decorator that lists a function in ``tools`` with its hints and title."""

    def hinted(annotations: ToolAnnotations, title: str) -> Callable[[ToolFunction], ToolFunction]:
        def register(function: ToolFunction) -> ToolFunction:
            tools.append(Tool(function, title, annotations))
            return function

        return register

    return hinted


def serve_tools(server: MCPServer, tools: list[Tool], clients: Clients) -> None:
    """Register ``tools`` on ``server``, each call acting through ``clients(ctx)`` and its Relay
    errors answered as tool errors."""
    for each in tools:
        server.tool(title=each.title, annotations=each.annotations)(
            _injected(each.function, clients)
        )


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
            return await reporting(ctx, function(clients(ctx), **arguments))
        except errors.RelayError as exc:
            return failure(exc)

    call.__name__ = function.__name__
    call.__qualname__ = function.__qualname__
    call.__doc__ = " ".join((function.__doc__ or "").split())  # one line, as a model reads it
    answered = hints["return"]  # Annotated[CallToolResult, <its answer>]: the output schema
    call.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[context, *shown], return_annotation=answered
    )
    call.__annotations__ = {"ctx": Context} | {p.name: p.annotation for p in shown}
    call.__annotations__["return"] = answered
    return call
