"""The tools an agent's token gives, over ``relay_client``: their names are the interface.

Each is a short description, an input schema from its type hints, and an answer built by
``results.answer``. Reads carry ``readOnlyHint``; every create goes through the SDK, which sends
one ``Idempotency-Key`` through all its retries.
"""

from __future__ import annotations

import time
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from relay_api import models as m
from relay_api.models import Message
from relay_client import AsyncRelayClient, ConflictError, PermissionDeniedError
from relay_mcp.arguments import agent, cursor, integer_id, like, resource_id
from relay_mcp.results import Clients, Tool, answer, listed_in, refusal, serve_tools

# Every tool acts on Relay alone (a closed world), and says whether a repeat changes anything.
READ = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
REPEATABLE = WRITE.model_copy(update={"idempotent_hint": True})
# Ends something for good (a task failed, a decision made): a host may ask before it runs.
FINAL = REPEATABLE.model_copy(update={"destructive_hint": True})
# Under the tool-call timeouts of common MCP clients (60 s): a wait answers in time.
MAX_WAIT = 50.0

Wait = Annotated[float, Field(ge=0, le=MAX_WAIT, description="seconds to wait, 0 to 50")]
Limit = Annotated[int, Field(ge=1, le=200, description="how many at most, 1 to 200")]
Cursor = Annotated[str | None, cursor()]
Text = Annotated[str, like(m.MessageCreate, "text", "the message, plain text or Markdown")]
TaskId = Annotated[int, integer_id("a task's id, e.g. 7")]
InterventionId = Annotated[
    str, resource_id("the intervention's id, your own name for the incident, e.g. 'disk-full-db1'")
]


AGENT_TOOLS: list[Tool] = []
agent_tool = listed_in(AGENT_TOOLS)


def add_agent_tools(server: MCPServer, clients: Clients) -> None:
    """Register every agent tool on ``server``; each call acts through ``clients(ctx)``, the
    calling agent's client."""
    serve_tools(server, AGENT_TOOLS, clients)


@agent_tool(READ, "Who am I")
async def whoami(relay: AsyncRelayClient) -> CallToolResult:
    """Who this agent is: presence, unread count, tasks it holds, approvals it waits on."""
    me = relay.config.agent_id
    beat = await relay.agents.heartbeat()
    held = [
        task.task_id
        for status in ("claimed", "in_progress")
        for task in (await relay.tasks.list(claimed_by=me, status=status)).tasks
    ]
    waiting = await relay.approvals.list(status="pending")
    mine = [a.approval_id for a in waiting.approvals if a.requested_by == me]
    value = {
        "agent_id": me,
        "presence": beat.presence,
        "unread": beat.pending_messages or 0,
        "held_tasks": held,
        "pending_approvals": mine,
    }
    text = f"{me}: {len(held)} task(s) held, {len(mine)} approval(s) pending"
    return await answer(relay, text, value)


@agent_tool(WRITE, "Send a message")
async def send_message(
    relay: AsyncRelayClient,
    to: Annotated[str, agent("the recipient agent's id, e.g. 'builder-2'")],
    text: Text,
    subject: Annotated[str | None, like(m.MessageCreate, "subject", "a short subject line")] = None,
    reply_to: Annotated[int | None, integer_id("the id of the message this answers")] = None,
) -> CallToolResult:
    """Send a direct message to another agent."""
    sent = await relay.messages.send(text, to=to, subject=subject, reply_to=reply_to)
    return await answer(relay, f"message {sent.message_id} sent to {to}", sent)


@agent_tool(READ, "Read my inbox")
async def read_inbox(
    relay: AsyncRelayClient, limit: Limit = 20, wait_seconds: Wait = 0
) -> CallToolResult:
    """Unacknowledged messages, oldest first; wait_seconds waits for the first one. Ack what
    you handled with ack_messages, or it comes back."""
    box = await relay.agents.inbox(limit=limit, wait=wait_seconds or None)
    lines = [f"#{m.message_id} from {m.from_agent}: {m.text}" for m in box.messages]
    return await answer(relay, "\n".join(lines) or "inbox empty", box)


@agent_tool(REPEATABLE, "Acknowledge messages")
async def ack_messages(
    relay: AsyncRelayClient,
    message_ids: Annotated[
        list[Annotated[int, integer_id("a message's id")]],
        Field(min_length=1, max_length=200, description="the messages handled, e.g. [12, 13]"),
    ],
) -> CallToolResult:
    """Acknowledge messages handled; acknowledging twice is fine."""
    acked = [(await relay.messages.ack(i)).message_id for i in message_ids]
    return await answer(relay, f"acknowledged {len(acked)}", {"acked": acked})


@agent_tool(READ, "List rooms")
async def list_rooms(
    relay: AsyncRelayClient, limit: Limit = 100, cursor: Cursor = None
) -> CallToolResult:
    """Rooms, by id; a page at a time."""
    rooms = await relay.rooms.list(limit=limit, cursor=cursor)
    text = ", ".join(r.room_id for r in rooms.rooms) or "no rooms"
    return await answer(relay, text, rooms)


RoomId = Annotated[str, resource_id("a room's id, e.g. 'release-train'")]


@agent_tool(REPEATABLE, "Join a room")
async def join_room(relay: AsyncRelayClient, room_id: RoomId) -> CallToolResult:
    """Join a room (created when new)."""
    member = await relay.rooms.join(room_id)
    return await answer(relay, f"in room {room_id}", member)


@agent_tool(WRITE, "Post to a room")
async def post_to_room(relay: AsyncRelayClient, room_id: RoomId, text: Text) -> CallToolResult:
    """Post to a room you joined."""
    posted = await relay.messages.send(text, room_id=room_id)
    return await answer(relay, f"posted {posted.message_id} to {room_id}", posted)


@agent_tool(READ, "Read a room")
async def read_room(relay: AsyncRelayClient, room_id: RoomId, limit: Limit = 20) -> CallToolResult:
    """A room's newest messages, oldest of them first."""
    page = await relay.rooms.messages(room_id, limit=limit)
    lines = [f"#{m.message_id} {m.from_agent}: {m.text}" for m in page.messages]
    return await answer(relay, "\n".join(lines) or "no messages", page)


@agent_tool(READ, "List tasks")
async def list_tasks(
    relay: AsyncRelayClient,
    status: Annotated[m.TaskStatus | None, Field(description="only tasks in this state")] = None,
    limit: Limit = 20,
    cursor: Cursor = None,
) -> CallToolResult:
    """Tasks, by id, optionally of one status; a page at a time."""
    page = await relay.tasks.list(status=status, limit=limit, cursor=cursor)
    lines = [f"#{t.task_id} [{t.status}] {t.title}" for t in page.tasks]
    return await answer(relay, "\n".join(lines) or "no tasks", page)


@agent_tool(WRITE, "Create a task")
async def create_task(
    relay: AsyncRelayClient,
    title: Annotated[str, like(m.TaskCreate, "title", "what to do, one line")],
    description: Annotated[
        str | None, like(m.TaskCreate, "description", "the details the claimer needs")
    ] = None,
    assignee: Annotated[str | None, agent("the only agent that may claim it, if any")] = None,
    priority: Annotated[
        int | None, like(m.TaskCreate, "priority", "higher is claimed first; default 0")
    ] = None,
) -> CallToolResult:
    """Create an open task for another agent to claim (only assignee may, if given);
    higher priority is claimed first."""
    task = await relay.tasks.create(
        title, description=description, assignee=assignee, priority=priority
    )
    return await answer(relay, f"created task {task.task_id}: {task.title}", task)


@agent_tool(WRITE, "Claim a task")
async def claim_task(
    relay: AsyncRelayClient,
    task_id: Annotated[int | None, integer_id("the task to claim; none: the next open one")] = None,
) -> CallToolResult:
    """Claim a task; with no id, the next open task this agent may take."""
    me = relay.config.agent_id
    if task_id is not None:
        task = await relay.tasks.claim(task_id)
        return await answer(relay, f"claimed task {task.task_id}: {task.title}", task)
    for candidate in (await relay.tasks.list(status="open", limit=100)).tasks:
        if candidate.assignee not in (None, me):
            continue
        try:
            task = await relay.tasks.claim(candidate.task_id)
        except (ConflictError, PermissionDeniedError):
            continue  # another agent was quicker, or it is not ours
        return await answer(relay, f"claimed task {task.task_id}: {task.title}", task)
    return await answer(relay, "no open task to claim", {"task": None})


@agent_tool(WRITE, "Report progress")
async def report_progress(
    relay: AsyncRelayClient,
    task_id: TaskId,
    progress: Annotated[
        int | None, Field(ge=0, le=100, description="percent done, 0 to 100")
    ] = None,
    message: Annotated[str | None, like(m.TaskEventCreate, "message", "what happened")] = None,
) -> CallToolResult:
    """Report progress on a task you hold (renews its lease)."""
    event = await relay.tasks.event(task_id, progress=progress, message=message)
    return await answer(relay, f"progress noted on task {task_id}", event)


@agent_tool(REPEATABLE, "Complete a task")
async def complete_task(
    relay: AsyncRelayClient,
    task_id: TaskId,
    result: Annotated[
        dict[str, Any] | None, Field(description="what it produced, a JSON object under 64 KB")
    ] = None,
) -> CallToolResult:
    """Complete a task you hold."""
    task = await relay.tasks.complete(task_id, result=result)
    return await answer(relay, f"task {task_id} completed", task)


@agent_tool(FINAL, "Fail a task")
async def fail_task(
    relay: AsyncRelayClient,
    task_id: TaskId,
    error: Annotated[str, like(m.TaskFinish, "error", "why it failed")],
    retry: Annotated[
        bool, Field(description="reopen it for another attempt, if any are left")
    ] = False,
) -> CallToolResult:
    """Fail a task you hold; retry=true reopens it while attempts are left."""
    task = await relay.tasks.fail(task_id, error=error, retry=retry)
    return await answer(relay, f"task {task_id} is {task.status}", task)


@agent_tool(WRITE, "Record an action")
async def record_action(
    relay: AsyncRelayClient,
    action: Annotated[str, like(m.ActionCreate, "action", "what you did, e.g. 'restarted nginx'")],
    target: Annotated[str | None, like(m.ActionCreate, "target", "what it was done to")] = None,
    outcome: Annotated[str | None, like(m.ActionCreate, "outcome", "how it ended")] = None,
    params: Annotated[
        dict[str, Any] | None, Field(description="its parameters, a JSON object under 64 KB")
    ] = None,
) -> CallToolResult:
    """Append what you did to the audit log."""
    recorded = await relay.actions.record(action, target=target, outcome=outcome, params=params)
    return await answer(relay, f"action {recorded.action_id} recorded", recorded)


@agent_tool(WRITE, "Ask the operator")
async def ask_operator(
    relay: AsyncRelayClient,
    text: Annotated[str, like(m.NotifyText, "text", "the question for the human")],
    wait_seconds: Wait = MAX_WAIT,
) -> CallToolResult:
    """Ask the human operator and wait for the reply; if none comes in time, the answer is
    pending with a notification_id for check_operator_reply."""
    cursor = (await relay.events.list(limit=1)).cursor
    sent = await relay.notify.send(text)
    reply = await _reply(relay, sent.notification_id, cursor, wait_seconds)
    return await _replied(relay, sent.notification_id, reply)


@agent_tool(READ, "Check the operator's reply")
async def check_operator_reply(
    relay: AsyncRelayClient,
    notification_id: Annotated[int, integer_id("the id ask_operator answered")],
) -> CallToolResult:
    """The operator's reply to an earlier ask_operator, if it has come."""
    if not await _asked(relay, notification_id):
        return refusal("not_found", f"notification {notification_id} does not exist")
    reply = await _reply(relay, notification_id, None, 0)
    return await _replied(relay, notification_id, reply)


Approval = m.InterventionApprovalRequest


@agent_tool(WRITE, "Request approval")
async def request_approval(
    relay: AsyncRelayClient,
    intervention_id: InterventionId,
    title: Annotated[str, like(Approval, "title", "what is to be approved, one line")],
    reason: Annotated[str, like(Approval, "reason", "why it is needed")],
    proposed_action: Annotated[str, like(Approval, "proposed_action", "what you will do")],
    risk: Annotated[m.Risk | None, Field(description="how risky it is; default medium")] = None,
) -> CallToolResult:
    """Ask the operator to approve a remediation of an intervention."""
    asked = await relay.interventions.request_approval(
        intervention_id,
        title=title,
        reason=reason,
        proposed_action=proposed_action,
        risk=risk,
    )
    return await answer(relay, f"approval {asked.approval_id} requested", asked)


@agent_tool(READ, "Check an approval")
async def check_approval(
    relay: AsyncRelayClient, intervention_id: InterventionId, wait_seconds: Wait = 0
) -> CallToolResult:
    """The intervention's approval: pending, approved or rejected (with the operator's
    note); wait_seconds waits for a decision."""
    deadline = time.monotonic() + wait_seconds
    cursor = (await relay.events.list(limit=1)).cursor
    approval = await relay.interventions.approval(intervention_id)
    while approval.status == "pending" and time.monotonic() < deadline:
        remaining = max(0.0, deadline - time.monotonic())
        cursor = (await relay.events.list(after=cursor, wait=remaining)).cursor
        approval = await relay.interventions.approval(intervention_id)
    note = f" ({approval.note})" if approval.note else ""
    return await answer(relay, f"approval {approval.status}{note}", approval)


@agent_tool(WRITE, "Upload a diagnostic")
async def upload_diagnostic(
    relay: AsyncRelayClient,
    intervention_id: InterventionId,
    summary: Annotated[str, like(m.DiagnosticUpload, "summary", "what you found, in short")],
    details: Annotated[
        str | None, Field(max_length=1_000_000, description="the full findings, e.g. logs")
    ] = None,
) -> CallToolResult:
    """Keep a diagnostic for an intervention (opened when new)."""
    kept = await relay.interventions.diagnostic(
        intervention_id, summary=summary, content=details or summary
    )
    return await answer(relay, f"diagnostic kept for {intervention_id}", kept)


Evidence = Annotated[
    m.Evidence | None, Field(description="what showed the state: text, or a JSON object")
]


@agent_tool(WRITE, "Record a remediation")
async def record_remediation(
    relay: AsyncRelayClient,
    intervention_id: InterventionId,
    action: Annotated[str, like(m.InterventionActionCreate, "action", "what you did")],
    status: Annotated[m.RemediationStatus, Field(description="how it went")],
    evidence_before: Evidence = None,
    evidence_after: Evidence = None,
    link: Annotated[
        str | None, like(m.InterventionActionCreate, "link", "where to see more, a URL")
    ] = None,
) -> CallToolResult:
    """Record what an approved remediation did, with evidence before and after."""
    trace = await relay.interventions.action(
        intervention_id,
        action=action,
        status=status,
        evidence_before=evidence_before or "",
        evidence_after=evidence_after or "",
        link=link,
    )
    return await answer(relay, f"remediation of {intervention_id}: {status}", trace)


@agent_tool(READ, "Wait for events")
async def wait_for_events(
    relay: AsyncRelayClient,
    after: Annotated[
        int | None, integer_id("the cursor of the last answer; none: from now")
    ] = None,
    wait_seconds: Wait = 30,
) -> CallToolResult:
    """What happened after the cursor (none: from now); pass the answer's cursor next time."""
    if after is not None:
        head = (await relay.events.list(limit=1)).cursor
        if after > head:
            detail = f"after: {after} is past the feed's newest event ({head})"
            return refusal("validation_error", detail)
    page = await relay.events.list(after=after, wait=wait_seconds or None)
    lines = [f"{e.kind} {e.subject_id}" for e in page.events]
    text = "\n".join(lines) or "nothing new"
    return await answer(relay, f"{text}\ncursor: {page.cursor}", page)


async def _asked(relay: AsyncRelayClient, notification_id: int) -> bool:
    """Whether the notification exists (the list is newest first: read down to its id)."""
    async for notification in relay.notify.iterate():
        if notification.notification_id <= notification_id:
            return notification.notification_id == notification_id
    return False


async def _reply(
    relay: AsyncRelayClient, notification_id: int, cursor: int | None, wait: float
) -> Message | None:
    """The operator's reply to the notification in the inbox, waiting up to ``wait`` seconds
    (woken by the agent's event feed, not by polling)."""
    deadline = time.monotonic() + wait
    while True:
        box = await relay.agents.inbox(limit=1000, peek=True)  # delivers none of the others
        for message in box.messages:
            if message.reply_to_notification == notification_id:
                return message
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        cursor = (await relay.events.list(after=cursor, wait=min(remaining, MAX_WAIT))).cursor


async def _replied(
    relay: AsyncRelayClient, notification_id: int, reply: Message | None
) -> CallToolResult:
    if reply is None:
        pending = {"pending": True, "notification_id": notification_id}
        text = f"no reply yet; check_operator_reply({notification_id}) later"
        return await answer(relay, text, pending)
    await relay.messages.ack(reply.message_id)
    value = {"pending": False, "notification_id": notification_id, "reply": reply.text}
    return await answer(relay, f"operator: {reply.text}", value)
