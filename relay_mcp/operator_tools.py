"""The small set the operator's token gives: triage with an LLM at the operator's side."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.types import CallToolResult
from pydantic import Field, ValidationError

from relay_api import models as m
from relay_api.elision import elide
from relay_api.prompts import command_of
from relay_client import AsyncRelayClient
from relay_mcp import answers as a
from relay_mcp.agent_tools import AGENT_TOOLS, FINAL, PAGE, READ, WRITE, Cursor
from relay_mcp.arguments import agent, integer_id, like
from relay_mcp.confirmation import Confirmation, Refused, ask, require_confirmed
from relay_mcp.results import Clients, Tool, answer, listed_in, refusal, serve_tools

Note = Annotated[str | None, like(m.ApprovalDecision, "note", "why, for the agent")]
ApprovalId = Annotated[int, integer_id("the approval's id")]


OPERATOR_TOOLS: list[Tool] = []
operator_tool = listed_in(OPERATOR_TOOLS)


def add_operator_tools(server: MCPServer, clients: Clients) -> None:
    """Register the operator's tools on ``server``; each call acts through ``clients(ctx)``."""
    serve_tools(server, OPERATOR_TOOLS, clients)


@operator_tool(READ, "Fleet status")
async def fleet_status(relay: AsyncRelayClient) -> Annotated[CallToolResult, a.Fleet]:
    """Agents online, unread messages, open tasks, pending approvals."""
    counts = (await relay.status()).counts
    return await answer(relay, a.Fleet.model_validate(counts, from_attributes=True))


@operator_tool(READ, "Pending approvals")
async def list_pending_approvals(
    relay: AsyncRelayClient, cursor: Cursor = None
) -> Annotated[CallToolResult, a.Approvals]:
    """Approvals awaiting a decision, newest first."""
    page = await relay.approvals.list(status="pending", limit=PAGE, cursor=cursor)
    approvals = a.lines(a.ApprovalLine, page.approvals)
    return await answer(relay, a.Approvals(approvals=approvals, next_cursor=page.next_cursor))


QUESTION_FIELD = 2000  # characters of each long field in the question: its head and its tail


async def _question(
    ctx: Context,
    verb: str,
    approval_id: int,
    note: str | None,
    changed: str | None = None,
    answer: list[str] | None = None,
) -> str:
    """What the human is asked before ``verb`` (approve, reject, answer) of the approval, with
    the ``changed`` command it would run instead, or a question's ``answer``."""
    relay = ctx.mcp_server.clients(ctx)  # type: ignore[attr-defined]
    asked = await relay.approvals.show(approval_id)
    command = command_of(asked.payload)
    shown = [f"Command: {elide(command, QUESTION_FIELD)}"] if command is not None else []
    if changed is not None:
        shown.append(f"Changed, it runs instead: {elide(changed, QUESTION_FIELD)}")
    if asked.detail:
        shown.append(elide(asked.detail, QUESTION_FIELD))
    if asked.payload:
        payload = json.dumps(asked.payload, ensure_ascii=False, sort_keys=True)
        shown.append(f"Payload: {elide(payload, QUESTION_FIELD)}")
    if asked.options:
        shown.append("Options: " + ", ".join(option.label for option in asked.options))
    if answer is not None:
        shown.append(f"The answer: {elide(', '.join(answer), QUESTION_FIELD)}")
    if note:
        shown.append(f"Note for the agent: {note}")
    return "\n\n".join(
        [
            f"{verb.capitalize()} approval {approval_id}, asked by {asked.requested_by}: "
            f"{asked.title}?",
            *shown,
        ]
    )


async def _confirm_approve(
    ctx: Context,
    approval_id: int,
    note: str | None,
    command: str | None,
    answer: list[str] | None,
) -> Elicit[Confirmation] | Confirmation:
    if answer is not None and command is not None:
        raise Refused("validation_error", "arguments: a question takes answer, a request command")
    verb = "approve" if answer is None else "answer"
    return ask(ctx, await _question(ctx, verb, approval_id, note, command, answer))


async def _confirm_reject(
    ctx: Context, approval_id: int, note: str | None
) -> Elicit[Confirmation] | Confirmation:
    return ask(ctx, await _question(ctx, "reject", approval_id, note))


@operator_tool(FINAL, "Approve")
async def approve(
    relay: AsyncRelayClient,
    approval_id: ApprovalId,
    note: Note = None,
    command: Annotated[
        str | None,
        Field(
            description="to run this command instead",
            min_length=1,
            max_length=m.MAX_JSON_BYTES,  # it goes in the payload, bounded as a whole
        ),
    ] = None,
    answer: Annotated[
        list[m.AnswerText] | None,
        like(m.ApprovalAnswer, "answer", "a question's: options or words"),
    ] = None,
    *,
    confirmed: Annotated[ElicitationResult[Confirmation], Resolve(_confirm_approve)],
) -> Annotated[CallToolResult, a.Decided]:
    """Approve (its command changed, if given) or answer a question, once the human confirms."""
    verb: Verb = "approve" if answer is None else "answer"
    return await _decide(relay, verb, approval_id, note, confirmed, command, answer)


@operator_tool(FINAL, "Reject")
async def reject(
    relay: AsyncRelayClient,
    approval_id: ApprovalId,
    note: Note = None,
    *,
    confirmed: Annotated[ElicitationResult[Confirmation], Resolve(_confirm_reject)],
) -> Annotated[CallToolResult, a.Decided]:
    """Reject a pending approval, once the human confirms it."""
    return await _decide(relay, "reject", approval_id, note, confirmed)


Verb = Literal["approve", "reject", "answer"]


async def _decide(
    relay: AsyncRelayClient,
    verb: Verb,
    approval_id: int,
    note: str | None,
    confirmed: ElicitationResult[Confirmation],
    command: str | None = None,
    chosen: list[str] | None = None,
) -> CallToolResult:
    """``verb`` the approval (to run ``command`` instead of the one asked; a question with the
    ``chosen`` answer), if the human confirmed it."""
    require_confirmed(confirmed, f"{verb.removesuffix('e')}ing approval {approval_id}")
    if verb == "reject":
        decided = await relay.approvals.reject(approval_id, note=note)
    elif verb == "answer":
        decided = await relay.approvals.answer(approval_id, chosen or [], note=note)
    else:
        decided = await relay.approvals.approve(approval_id, note=note, command=command)
    return await answer(relay, a.Decided.model_validate(decided, from_attributes=True))


@operator_tool(READ, "Notifications")
async def list_notifications(
    relay: AsyncRelayClient, cursor: Cursor = None
) -> Annotated[CallToolResult, a.Notifications]:
    """What agents asked you, newest first, with reply counts."""
    page = await relay.notify.list(limit=PAGE, cursor=cursor)
    notifications = a.lines(a.NotificationLine, page.notifications)
    listed = a.Notifications(notifications=notifications, next_cursor=page.next_cursor)
    return await answer(relay, listed)


@operator_tool(WRITE, "Reply to an agent")
async def reply_to_notification(
    relay: AsyncRelayClient,
    notification_id: Annotated[int, integer_id("the notification's id")],
    text: Annotated[str, like(m.NotifyReply, "text", "the answer")],
) -> Annotated[CallToolResult, a.Sent]:
    """Answer what an agent asked (to its inbox)."""
    async for notification in relay.notify.iterate():  # newest first
        if notification.notification_id == notification_id:
            break
    else:
        return refusal("not_found", f"notification {notification_id} does not exist")
    if notification.platform_message_id is None:
        detail = f"notification {notification_id} never reached the operator"
        return refusal("conflict", detail)
    reply = await relay.notify.reply(notification.platform_message_id, text)
    return await answer(relay, a.Sent(message_id=reply.message_id, to=reply.to))


@operator_tool(READ, "Policies")
async def list_policies(
    relay: AsyncRelayClient, cursor: Cursor = None
) -> Annotated[CallToolResult, a.Policies]:
    """The policies deciding routine approvals, in the order tried."""
    page = await relay.policies.list(limit=PAGE, cursor=cursor)
    policies = a.lines(a.PolicyLine, page.policies)
    return await answer(relay, a.Policies(policies=policies, next_cursor=page.next_cursor))


@operator_tool(READ, "Simulate policies")
async def simulate_policy(
    relay: AsyncRelayClient,
    agent_id: Annotated[str, agent("the agent that would ask")],
    title: Annotated[str, like(m.PolicySimulation, "title", "its title")],
    payload: Annotated[
        dict[str, Any] | None,
        Field(description="what it would ask about"),
    ] = None,
) -> Annotated[CallToolResult, a.Verdict]:
    """What policies would do with such a request; creates nothing."""
    verdict = await relay.policies.simulate(agent_id, title, payload=payload)
    return await answer(relay, a.Verdict.model_validate(verdict, from_attributes=True))


Policy = m.PolicyCreate
Match = m.ApprovalMatch
# What set_policy makes: an answer or ask policy is made with the API or the CLI (the tool
# listing stays within its budget); changing one here keeps its decision and its fields.
Decision = Literal["approve", "reject"]


async def _proposed(
    ctx: Context,
    policy_id: int | None,
    name: str | None,
    decision: Decision | None,
    note: str | None,
    priority: int | None,
    enabled: bool | None,
    kinds: list[m.ApprovalKind] | None,
    agents: list[str] | None,
    title: str | None,
    limit: m.PolicyLimit | None,
) -> m.PolicyCreate:
    """The policy as ``set_policy`` would leave it: the one it changes (its fields not given
    kept as they are), or a new one, which needs a name and a decision."""
    given: dict[str, Any] = {"name": name, "decision": decision, "note": note}
    given |= {"priority": priority, "enabled": enabled, "limit": limit}
    matched = {"kinds": kinds, "agents": agents, "title": title}
    if policy_id is None:
        if name is None or decision is None:
            raise Refused("validation_error", "arguments: a new policy needs name and decision")
        current: dict[str, Any] = {"match": {}}
    else:
        relay = ctx.mcp_server.clients(ctx)  # type: ignore[attr-defined]
        shown = (await relay.policies.show(policy_id)).model_dump(exclude_none=True)
        current = {k: v for k, v in shown.items() if k in m.PolicyCreate.model_fields}
    current["match"] |= {k: v for k, v in matched.items() if v is not None}
    changed = current | {k: v for k, v in given.items() if v is not None}
    try:
        return m.PolicyCreate.model_validate(changed)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        raise Refused("validation_error", f"{where}: {first['msg']}") from None


def _confirm_policy(
    ctx: Context,
    policy_id: int | None,
    proposed: Annotated[m.PolicyCreate, Resolve(_proposed)],
) -> Elicit[Confirmation] | Confirmation:
    what = f"Change policy {policy_id}" if policy_id is not None else "Create a policy"
    shown = proposed.model_dump_json(exclude_none=True, indent=1)
    return ask(ctx, f"{what}? It will decide approvals as follows:\n\n{shown}")


@operator_tool(WRITE, "Set a policy")
async def set_policy(
    relay: AsyncRelayClient,
    policy_id: Annotated[int | None, integer_id("the policy to change (else a new one)")] = None,
    name: Annotated[str | None, like(Policy, "name", "what it is for")] = None,
    decision: Annotated[Decision | None, Field(description="what it decides")] = None,
    note: Annotated[str | None, like(Policy, "note", "why, for the agents")] = None,
    priority: Annotated[int | None, like(Policy, "priority", "higher is tried first")] = None,
    enabled: Annotated[bool | None, Field(description="false: it stops deciding")] = None,
    kinds: Annotated[
        list[m.ApprovalKind] | None, like(Match, "kinds", "only approvals of these kinds")
    ] = None,
    agents: Annotated[
        list[m.AgentPattern] | None, like(Match, "agents", "only from these agents, '*' any")
    ] = None,
    title: Annotated[str | None, like(Match, "title", "a regex the title matches")] = None,
    limit: Annotated[m.PolicyLimit | None, Field(description="at most count per agent")] = None,
    *,
    proposed: Annotated[m.PolicyCreate, Resolve(_proposed)],
    confirmed: Annotated[ElicitationResult[Confirmation], Resolve(_confirm_policy)],
) -> Annotated[CallToolResult, a.PolicyState]:
    """Create or change a policy, once the human confirms."""
    require_confirmed(confirmed, "the policy change")
    fields = proposed.model_dump(exclude_none=True)
    if policy_id is None:
        kept = await relay.policies.create(**fields)
    else:
        kept = await relay.policies.replace(policy_id, **fields)
    return await answer(relay, a.PolicyState.model_validate(kept, from_attributes=True))


# The operator hands out work and writes to agents as they do, with the same tools.
SHARED = ("send_message", "create_task", "list_tasks")
OPERATOR_TOOLS.extend(tool for tool in AGENT_TOOLS if tool.function.__name__ in SHARED)
