"""The small set the operator's token gives: triage with an LLM at the operator's side."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.elicitation import ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.types import CallToolResult
from pydantic import Field

from relay_api import models as m
from relay_client import AsyncRelayClient
from relay_mcp.agent_tools import AGENT_TOOLS, FINAL, READ, WRITE, Cursor, Limit
from relay_mcp.arguments import agent, integer_id, like
from relay_mcp.confirmation import Confirmation, ask, require_confirmed
from relay_mcp.results import Clients, Tool, answer, listed_in, refusal, serve_tools

Note = Annotated[str | None, like(m.ApprovalDecision, "note", "why, for the agent")]
ApprovalId = Annotated[int, integer_id("the approval's id, from list_pending_approvals")]


OPERATOR_TOOLS: list[Tool] = []
operator_tool = listed_in(OPERATOR_TOOLS)


def add_operator_tools(server: MCPServer, clients: Clients) -> None:
    """Register the operator's tools on ``server``; each call acts through ``clients(ctx)``."""
    serve_tools(server, OPERATOR_TOOLS, clients)


@operator_tool(READ, "Fleet status")
async def fleet_status(relay: AsyncRelayClient) -> CallToolResult:
    """Agents online, unread messages, open tasks and pending approvals."""
    status = await relay.status()
    c = status.counts
    text = (
        f"{c.online_agents}/{c.agents} agents online, {c.pending_messages} unread "
        f"messages, {c.open_tasks} open tasks, {c.pending_approvals} pending approvals"
    )
    return await answer(relay, text, status)


@operator_tool(READ, "Pending approvals")
async def list_pending_approvals(
    relay: AsyncRelayClient, limit: Limit = 50, cursor: Cursor = None
) -> CallToolResult:
    """Approvals waiting for a decision, newest first; a page at a time."""
    page = await relay.approvals.list(status="pending", limit=limit, cursor=cursor)
    lines = [f"#{a.approval_id} {a.title} (by {a.requested_by})" for a in page.approvals]
    return await answer(relay, "\n".join(lines) or "nothing pending", page)


async def _question(ctx: Context, verb: str, approval_id: int, note: str | None) -> str:
    """What the human is asked before ``verb`` (approve, reject) of the approval."""
    relay = ctx.mcp_server.clients(ctx)  # type: ignore[attr-defined]
    asked = await relay.approvals.show(approval_id)
    detail = f"\n\n{asked.detail}" if asked.detail else ""
    why = f"\n\nNote for the agent: {note}" if note else ""
    return (
        f"{verb.capitalize()} approval {approval_id}, asked by {asked.requested_by}: "
        f"{asked.title}?{detail}{why}"
    )


async def _confirm_approve(
    ctx: Context, approval_id: int, note: str | None
) -> Elicit[Confirmation] | Confirmation:
    return ask(ctx, await _question(ctx, "approve", approval_id, note))


async def _confirm_reject(
    ctx: Context, approval_id: int, note: str | None
) -> Elicit[Confirmation] | Confirmation:
    return ask(ctx, await _question(ctx, "reject", approval_id, note))


@operator_tool(FINAL, "Approve")
async def approve(
    relay: AsyncRelayClient,
    approval_id: ApprovalId,
    note: Note = None,
    *,
    confirmed: Annotated[ElicitationResult[Confirmation], Resolve(_confirm_approve)],
) -> CallToolResult:
    """Approve a pending approval, once the human confirms it."""
    require_confirmed(confirmed, f"approving approval {approval_id}")
    decided = await relay.approvals.approve(approval_id, note=note)
    return await answer(relay, f"approval {approval_id} is {decided.status}", decided)


@operator_tool(FINAL, "Reject")
async def reject(
    relay: AsyncRelayClient,
    approval_id: ApprovalId,
    note: Note = None,
    *,
    confirmed: Annotated[ElicitationResult[Confirmation], Resolve(_confirm_reject)],
) -> CallToolResult:
    """Reject a pending approval, once the human confirms it."""
    require_confirmed(confirmed, f"rejecting approval {approval_id}")
    decided = await relay.approvals.reject(approval_id, note=note)
    return await answer(relay, f"approval {approval_id} is {decided.status}", decided)


@operator_tool(READ, "Notifications")
async def list_notifications(
    relay: AsyncRelayClient,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> CallToolResult:
    """What agents asked the operator, newest first, with how many replies each got; a page
    at a time."""
    page = await relay.notify.list(limit=limit, cursor=cursor)
    lines = [
        f"#{n.notification_id} {n.agent_id or 'operator'}: {n.text} ({n.replies or 0} replies)"
        for n in page.notifications
    ]
    return await answer(relay, "\n".join(lines) or "no notifications", page)


@operator_tool(WRITE, "Reply to a notification")
async def reply_to_notification(
    relay: AsyncRelayClient,
    notification_id: Annotated[int, integer_id("the notification's id")],
    text: Annotated[str, like(m.NotifyReply, "text", "the answer, for the agent's inbox")],
) -> CallToolResult:
    """Answer an agent's notification; the reply reaches its inbox (and its ask_operator)."""
    async for notification in relay.notify.iterate():  # newest first
        if notification.notification_id == notification_id:
            break
    else:
        return refusal("not_found", f"notification {notification_id} does not exist")
    if notification.platform_message_id is None:
        detail = f"notification {notification_id} never reached the operator"
        return refusal("conflict", detail)
    reply = await relay.notify.reply(notification.platform_message_id, text)
    return await answer(relay, f"reply {reply.message_id} sent to {reply.to}", reply)


@operator_tool(READ, "Policies")
async def list_policies(
    relay: AsyncRelayClient, limit: Limit = 100, cursor: Cursor = None
) -> CallToolResult:
    """The policies that decide routine approvals, in the order they are tried; a page at a
    time."""
    page = await relay.policies.list(limit=limit, cursor=cursor)
    lines = [
        f"#{p.policy_id} {p.name}: {p.decision} (priority {p.priority}, "
        f"{'enabled' if p.enabled else 'disabled'}, v{p.version})"
        for p in page.policies
    ]
    return await answer(relay, "\n".join(lines) or "no policies", page)


@operator_tool(READ, "Simulate the policies")
async def simulate_policy(
    relay: AsyncRelayClient,
    agent_id: Annotated[str, agent("the agent that would ask, e.g. 'builder-2'")],
    title: Annotated[str, like(m.PolicySimulation, "title", "its title")],
    payload: Annotated[
        dict[str, Any] | None,
        Field(description="what it would ask about, a JSON object under 64 KB"),
    ] = None,
) -> CallToolResult:
    """What the policies would do with such a request (approve, reject or ask the operator),
    without creating anything."""
    verdict = await relay.policies.simulate(agent_id, title, payload=payload)
    return await answer(relay, f"{verdict.decision}: {verdict.reason}", verdict)


# The operator hands out work and writes to agents as they do, with the same tools.
SHARED = ("send_message", "create_task", "list_tasks")
OPERATOR_TOOLS.extend(tool for tool in AGENT_TOOLS if tool.function.__name__ in SHARED)
