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
from relay_api import params as p
from relay_api.elision import elide
from relay_api.models import Message
from relay_client import AsyncRelayClient, ConflictError, PermissionDeniedError
from relay_mcp import answers as a
from relay_mcp.arguments import agent, cursor, integer_id, like, limits_of, resource_id
from relay_mcp.results import Clients, Tool, answer, listed_in, refusal, serve_tools

# Every tool acts on Relay alone: openWorldHint false (its default, true, would be wrong). A
# write says whether a repeat changes anything and whether it ends something for good (a host
# may ask before it runs); for a read neither means anything. A hint is left out where the
# specification's default is the truth (readOnlyHint false, idempotentHint false,
# destructiveHint true).
READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(destructive_hint=False, open_world_hint=False)
REPEATABLE = ToolAnnotations(destructive_hint=False, idempotent_hint=True, open_world_hint=False)
FINAL = ToolAnnotations(idempotent_hint=True, open_world_hint=False)
# Under the tool-call timeouts of common MCP clients (60 s): a wait answers in time.
MAX_WAIT = 50.0
TITLE = int(limits_of(m.ApprovalRequest, "title")["maxLength"])  # a question's, at most

Wait = Annotated[float, Field(ge=0, le=MAX_WAIT, description="seconds to wait")]
Limit = Annotated[int, Field(ge=1, le=200, description="how many at most")]
Cursor = Annotated[str | None, cursor()]
# A page's size where the model does not choose it (an argument would cost every host's
# listing its bytes: docs/mcp.md): lines of a list, messages whole, search hits with snippets.
PAGE, MESSAGES, HITS = 50, 20, 10
Text = Annotated[str, like(m.MessageCreate, "text", "the message")]
ReplyTo = Annotated[int | None, integer_id("the message answered")]
TaskId = Annotated[int, integer_id("a task's id")]
InterventionId = Annotated[str, resource_id("the incident's id")]


AGENT_TOOLS: list[Tool] = []
agent_tool = listed_in(AGENT_TOOLS)


def add_agent_tools(server: MCPServer, clients: Clients) -> None:
    """Register every agent tool on ``server``; each call acts through ``clients(ctx)``, the
    calling agent's client."""
    serve_tools(server, AGENT_TOOLS, clients)


@agent_tool(READ, "Who am I")
async def whoami(relay: AsyncRelayClient) -> Annotated[CallToolResult, a.Me]:
    """You: presence, unread count, tasks held, approvals awaited."""
    me = relay.config.agent_id
    beat = await relay.agents.heartbeat()
    held = [
        task.task_id
        for status in ("claimed", "in_progress")
        for task in (await relay.tasks.list(claimed_by=me, status=status)).tasks
    ]
    waiting = await relay.approvals.list(status="pending")
    mine = [a.approval_id for a in waiting.approvals if a.requested_by == me]
    assert me is not None  # an agent's tool
    value = a.Me(
        agent_id=me,
        presence=beat.presence,
        unread=beat.pending_messages or 0,
        held_tasks=held,
        pending_approvals=mine,
    )
    return await answer(relay, value)


@agent_tool(WRITE, "Send a message")
async def send_message(
    relay: AsyncRelayClient,
    to: Annotated[str, agent("the recipient")],
    text: Text,
    subject: Annotated[str | None, like(m.MessageCreate, "subject", "a short subject line")] = None,
    reply_to: ReplyTo = None,
) -> Annotated[CallToolResult, a.Sent]:
    """Send a direct message to another agent."""
    sent = await relay.messages.send(text, to=to, subject=subject, reply_to=reply_to)
    return await answer(relay, a.Sent(message_id=sent.message_id))


@agent_tool(READ, "Read my inbox")
async def read_inbox(
    relay: AsyncRelayClient, limit: Limit = 20, wait_seconds: Wait = 0
) -> Annotated[CallToolResult, a.Inbox]:
    """Your unacknowledged messages, oldest first (waits for a first)."""
    box = await relay.agents.inbox(limit=limit, wait=wait_seconds or None)
    ids = [message.message_id for message in box.messages]
    next_ = f"ack_messages({ids}) once handled, or they come back" if ids else None
    return await answer(relay, a.Inbox(messages=a.lines(a.Mail, box.messages), next=next_))


@agent_tool(REPEATABLE, "Acknowledge messages")
async def ack_messages(
    relay: AsyncRelayClient,
    message_ids: Annotated[
        list[m.IntegerId],
        Field(min_length=1, max_length=200, description="the messages handled"),
    ],
) -> Annotated[CallToolResult, a.Acked]:
    """Acknowledge handled messages (twice is fine)."""
    acked = [(await relay.messages.ack(i)).message_id for i in message_ids]
    return await answer(relay, a.Acked(acked=acked))


@agent_tool(READ, "List rooms")
async def list_rooms(
    relay: AsyncRelayClient, cursor: Cursor = None
) -> Annotated[CallToolResult, a.Rooms]:
    """Rooms by id, a page at a time."""
    page = await relay.rooms.list(limit=PAGE, cursor=cursor)
    rooms = [room.room_id for room in page.rooms]
    return await answer(relay, a.Rooms(rooms=rooms, next_cursor=page.next_cursor))


RoomId = Annotated[str, resource_id("a room's id")]


@agent_tool(REPEATABLE, "Join a room")
async def join_room(
    relay: AsyncRelayClient, room_id: RoomId
) -> Annotated[CallToolResult, a.Joined]:
    """Join a room (created when new)."""
    member = await relay.rooms.join(room_id)
    return await answer(relay, a.Joined(room_id=member.room_id))


@agent_tool(WRITE, "Post to a room")
async def post_to_room(
    relay: AsyncRelayClient, room_id: RoomId, text: Text, reply_to: ReplyTo = None
) -> Annotated[CallToolResult, a.Sent]:
    """Post to a room you joined."""
    posted = await relay.messages.send(text, room_id=room_id, reply_to=reply_to)
    return await answer(relay, a.Sent(message_id=posted.message_id))


@agent_tool(READ, "Read a room")
async def read_room(
    relay: AsyncRelayClient, room_id: RoomId
) -> Annotated[CallToolResult, a.RoomPage]:
    """A room's newest messages."""
    page = await relay.rooms.messages(room_id, limit=MESSAGES)
    messages = a.lines(a.Mail, page.messages)
    return await answer(relay, a.RoomPage(messages=messages))


@agent_tool(READ, "Read a conversation")
async def read_thread(
    relay: AsyncRelayClient,
    message_id: Annotated[int, integer_id("any message of it")],
    cursor: Cursor = None,
) -> Annotated[CallToolResult, a.Thread]:
    """A message's conversation, oldest first, as far as you may read it."""
    page = await relay.messages.thread(message_id, limit=MESSAGES, cursor=cursor)
    messages = a.lines(a.Mail, page.messages)
    thread = a.Thread(thread_id=page.thread_id, messages=messages, next_cursor=page.next_cursor)
    return await answer(relay, thread)


@agent_tool(READ, "Search")
async def search(
    relay: AsyncRelayClient,
    q: Annotated[str, like(p.SearchQuery, "q", 'words; "a phrase", -word, OR')],
    kinds: Annotated[
        str | None, like(p.SearchQuery, "kinds", "e.g. 'message,task'; none: all kinds")
    ] = None,
    cursor: Cursor = None,
) -> Annotated[CallToolResult, a.Found]:
    """Find messages, tasks, approvals, actions you may read, by their words."""
    page = await relay.search(q, kinds=kinds, limit=HITS, cursor=cursor)
    hits = a.lines(a.Hit, page.hits)
    return await answer(relay, a.Found(hits=hits, next_cursor=page.next_cursor))


@agent_tool(READ, "List tasks")
async def list_tasks(
    relay: AsyncRelayClient,
    status: Annotated[m.TaskStatus | None, Field(description="only tasks in this state")] = None,
    cursor: Cursor = None,
) -> Annotated[CallToolResult, a.Tasks]:
    """Tasks by id, a page at a time."""
    page = await relay.tasks.list(status=status, limit=PAGE, cursor=cursor)
    tasks = a.lines(a.TaskLine, page.tasks)
    return await answer(relay, a.Tasks(tasks=tasks, next_cursor=page.next_cursor))


@agent_tool(WRITE, "Create a task")
async def create_task(
    relay: AsyncRelayClient,
    title: Annotated[str, like(m.TaskCreate, "title", "what to do, one line")],
    description: Annotated[str | None, like(m.TaskCreate, "description", "the details")] = None,
    assignee: Annotated[str | None, agent("only this agent may claim it")] = None,
    priority: Annotated[
        int | None, like(m.TaskCreate, "priority", "higher is claimed first")
    ] = None,
) -> Annotated[CallToolResult, a.TaskDone]:
    """Create an open task."""
    task = await relay.tasks.create(
        title, description=description, assignee=assignee, priority=priority
    )
    next_ = f"wait_for_events to hear when task {task.task_id} is done"
    return await answer(relay, _done(task, next_))


@agent_tool(WRITE, "Claim a task")
async def claim_task(
    relay: AsyncRelayClient,
    task_id: Annotated[int | None, integer_id("none: the next open one")] = None,
) -> Annotated[CallToolResult, a.TaskState]:
    """Claim a task; no id: the next open one you may take."""
    me = relay.config.agent_id
    if task_id is not None:
        task = await relay.tasks.claim(task_id)
        return await answer(relay, _state(task, HELD))
    for candidate in (await relay.tasks.list(status="open", limit=100)).tasks:
        if candidate.assignee not in (None, me):
            continue
        try:
            task = await relay.tasks.claim(candidate.task_id)
        except (ConflictError, PermissionDeniedError):
            continue  # another agent was quicker, or it is not ours
        return await answer(relay, _state(task, HELD))
    return await answer(relay, a.TaskState(next="no open task to claim; try again later"))


@agent_tool(WRITE, "Report progress")
async def report_progress(
    relay: AsyncRelayClient,
    task_id: TaskId,
    progress: Annotated[
        int | None, Field(ge=0, le=100, description="percent done, 0 to 100")
    ] = None,
    message: Annotated[str | None, like(m.TaskEventCreate, "message", "what happened")] = None,
) -> Annotated[CallToolResult, a.Progress]:
    """Report progress on a task you hold (renews the lease)."""
    event = await relay.tasks.event(task_id, progress=progress, message=message)
    return await answer(relay, a.Progress(task_id=task_id, event_id=event.event_id))


@agent_tool(REPEATABLE, "Complete a task")
async def complete_task(
    relay: AsyncRelayClient,
    task_id: TaskId,
    result: Annotated[dict[str, Any] | None, Field(description="what it produced")] = None,
) -> Annotated[CallToolResult, a.TaskDone]:
    """Complete a task you hold."""
    task = await relay.tasks.complete(task_id, result=result)
    return await answer(relay, _done(task))


@agent_tool(FINAL, "Fail a task")
async def fail_task(
    relay: AsyncRelayClient,
    task_id: TaskId,
    error: Annotated[str, like(m.TaskFinish, "error", "why it failed")],
    retry: Annotated[bool, Field(description="reopen it if attempts are left")] = False,
) -> Annotated[CallToolResult, a.TaskDone]:
    """Fail a task you hold."""
    task = await relay.tasks.fail(task_id, error=error, retry=retry)
    return await answer(relay, _done(task))


@agent_tool(WRITE, "Record an action")
async def record_action(
    relay: AsyncRelayClient,
    action: Annotated[str, like(m.ActionCreate, "action", "what you did, e.g. 'restarted nginx'")],
    target: Annotated[str | None, like(m.ActionCreate, "target", "what it was done to")] = None,
    outcome: Annotated[str | None, like(m.ActionCreate, "outcome", "how it ended")] = None,
    params: Annotated[dict[str, Any] | None, Field(description="its parameters")] = None,
) -> Annotated[CallToolResult, a.Recorded]:
    """Append what you did to the audit log."""
    recorded = await relay.actions.record(action, target=target, outcome=outcome, params=params)
    return await answer(relay, a.Recorded(action_id=recorded.action_id))


@agent_tool(WRITE, "Ask the operator")
async def ask_operator(
    relay: AsyncRelayClient,
    text: Annotated[str, like(m.NotifyText, "text", "the question for the human")],
    options: Annotated[
        list[m.OptionLabel] | None,
        Field(min_length=2, max_length=10, description="choices to reply with"),
    ] = None,
    wait_seconds: Wait = MAX_WAIT,
) -> Annotated[CallToolResult, a.Reply]:
    """Ask the human operator; waits for the reply, else answers pending."""
    if options is not None:
        return await _choice(relay, text, options, wait_seconds)
    cursor = (await relay.events.list(limit=1)).cursor
    sent = await relay.notify.send(text)
    reply = await _reply(relay, sent.notification_id, cursor, wait_seconds)
    return await _replied(relay, sent.notification_id, reply)


@agent_tool(READ, "Check the operator's reply")
async def check_operator_reply(
    relay: AsyncRelayClient,
    notification_id: Annotated[int, integer_id("the id ask_operator answered")],
) -> Annotated[CallToolResult, a.Reply]:
    """The operator's reply to an earlier ask_operator, if it has come."""
    if not await _asked(relay, notification_id):
        return refusal("not_found", f"notification {notification_id} does not exist")
    reply = await _reply(relay, notification_id, None, 0)
    return await _replied(relay, notification_id, reply)


Approval = m.InterventionApprovalRequest


@agent_tool(WRITE, "Ask for approval")
async def ask_approval(
    relay: AsyncRelayClient,
    title: Annotated[str, like(m.ApprovalRequest, "title", "what you are about to do, one line")],
    detail: Annotated[
        str | None, like(m.ApprovalRequest, "detail", "why, and what it touches")
    ] = None,
    payload: Annotated[dict[str, Any] | None, Field(description="the same, as JSON")] = None,
    expires_in: Annotated[
        int | None, like(m.ApprovalRequest, "expires_in", "seconds until unanswered is no")
    ] = None,
) -> Annotated[CallToolResult, a.ApprovalState]:
    """Ask the operator to approve what you are about to do."""
    asked = await relay.approvals.request(
        title, detail=detail, payload=payload, expires_in=expires_in
    )
    return await answer(relay, _approval_state(asked))


@agent_tool(WRITE, "Request a remediation's approval")
async def request_approval(
    relay: AsyncRelayClient,
    intervention_id: InterventionId,
    title: Annotated[str, like(Approval, "title", "what is to be approved, one line")],
    reason: Annotated[str, like(Approval, "reason", "why it is needed")],
    proposed_action: Annotated[str, like(Approval, "proposed_action", "what you will do")],
    risk: Annotated[m.Risk | None, Field(description="how risky it is; default medium")] = None,
) -> Annotated[CallToolResult, a.ApprovalState]:
    """Ask the operator to approve a remediation of an intervention."""
    asked = await relay.interventions.request_approval(
        intervention_id,
        title=title,
        reason=reason,
        proposed_action=proposed_action,
        risk=risk,
    )
    return await answer(relay, _approval_state(asked.approval, intervention_id))


@agent_tool(READ, "Check an approval")
async def check_approval(
    relay: AsyncRelayClient,
    approval_id: Annotated[int | None, integer_id("the approval's id")] = None,
    intervention_id: Annotated[str | None, resource_id("or the intervention's")] = None,
    wait_seconds: Wait = 0,
) -> Annotated[CallToolResult, a.ApprovalState]:
    """An approval's state, by its id or its intervention's (it may wait)."""
    if (approval_id is None) == (intervention_id is None):
        detail = "arguments: give approval_id or intervention_id, not both"
        return refusal("validation_error", detail)
    if approval_id is not None:
        approval = await relay.approvals.show(approval_id, wait=wait_seconds or None)
        return await answer(relay, _approval_state(approval))
    assert intervention_id is not None
    deadline = time.monotonic() + wait_seconds
    cursor = (await relay.events.list(limit=1)).cursor
    approval = await relay.interventions.approval(intervention_id)
    while approval.status == "pending" and time.monotonic() < deadline:
        remaining = max(0.0, deadline - time.monotonic())
        cursor = (await relay.events.list(after=cursor, wait=remaining)).cursor
        approval = await relay.interventions.approval(intervention_id)
    return await answer(relay, _approval_state(approval, intervention_id))


def _approval_state(approval: m.Approval, intervention_id: str | None = None) -> a.ApprovalState:
    """An approval as an agent acts on it: its state, and what to do next."""
    again = (
        f"intervention_id='{intervention_id}'"
        if intervention_id
        else f"approval_id={approval.approval_id}"
    )
    approved = (
        "act as approved, then record_remediation with evidence"
        if intervention_id
        else "go ahead, as asked"
        if approval.approved_payload is None
        else "go ahead, but as the operator changed it (approved_payload), not as asked"
    )
    answer = ", ".join(approval.answer or [])
    next_ = {
        "pending": f"check_approval({again}, wait_seconds=50) later; act only once decided",
        "answered": f"the operator answered your question: {answer}",
        "approved": approved,
        "rejected": "stop what you are doing and wait for the operator's instructions; the note"
        " says why"
        if approval.interrupt
        else "do not do it; the note says why",
        "expired": "it expired unanswered: do not do it; ask again if it is still needed",
        "withdrawn": "it was withdrawn (nobody waits for it): do not do it on its strength",
    }.get(approval.status)
    state = a.ApprovalState.model_validate(approval, from_attributes=True)
    state.next = next_
    return state


@agent_tool(WRITE, "Upload a diagnostic")
async def upload_diagnostic(
    relay: AsyncRelayClient,
    intervention_id: InterventionId,
    summary: Annotated[str, like(m.DiagnosticUpload, "summary", "what you found, in short")],
    details: Annotated[
        str | None, Field(max_length=1_000_000, description="the full findings, e.g. logs")
    ] = None,
) -> Annotated[CallToolResult, a.Kept]:
    """Keep a diagnostic of an intervention (opened if new)."""
    kept = await relay.interventions.diagnostic(
        intervention_id, summary=summary, content=details or summary
    )
    return await answer(relay, a.Kept(diagnostic_id=kept.diagnostic_id))


Evidence = Annotated[m.Evidence | None, Field(description="text or JSON")]


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
) -> Annotated[CallToolResult, a.Kept]:
    """Record what an approved remediation did, with evidence."""
    trace = await relay.interventions.action(
        intervention_id,
        action=action,
        status=status,
        evidence_before=evidence_before or "",
        evidence_after=evidence_after or "",
        link=link,
    )
    return await answer(relay, a.Kept(action_id=trace.action_id))


@agent_tool(READ, "Wait for events")
async def wait_for_events(
    relay: AsyncRelayClient,
    after: Annotated[int | None, integer_id("the last answer's cursor; none: now")] = None,
    wait_seconds: Wait = 30,
) -> Annotated[CallToolResult, a.Events]:
    """What happened after a cursor (none: from now)."""
    if after is not None:
        head = (await relay.events.list(limit=1)).cursor
        if after > head:
            detail = f"after: {after} is past the feed's newest event ({head})"
            return refusal("validation_error", detail)
    page = await relay.events.list(after=after, wait=wait_seconds or None)
    events = a.lines(a.EventLine, page.events)
    next_ = f"wait_for_events(after={page.cursor}) for what comes next"
    return await answer(relay, a.Events(events=events, cursor=page.cursor, next=next_))


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


async def _choice(
    relay: AsyncRelayClient, text: str, options: list[str], wait: float
) -> CallToolResult:
    """Ask the operator a question with options (an approval of kind question); the option
    chosen, or where it stands."""
    title = elide(text.splitlines()[0] if text.strip() else text, TITLE)
    detail = text if title != text else None
    asked = await relay.approvals.ask(title, options, detail=detail)
    if asked.status == "pending" and wait:
        asked = await relay.approvals.show(asked.approval_id, wait=wait)
    approval_id = asked.approval_id
    if asked.status == "answered":
        value = a.Reply(approval_id=approval_id, pending=False, reply=", ".join(asked.answer or []))
    elif asked.status == "pending":
        next_ = f"check_approval({approval_id}) later"
        value = a.Reply(approval_id=approval_id, pending=True, next=next_)
    else:
        why = f": {asked.note}" if asked.note else ""
        value = a.Reply(approval_id=approval_id, pending=False, next=f"{asked.status}{why}")
    return await answer(relay, value)


async def _replied(
    relay: AsyncRelayClient, notification_id: int, reply: Message | None
) -> CallToolResult:
    if reply is None:
        next_ = f"check_operator_reply({notification_id}) later"
        return await answer(
            relay, a.Reply(notification_id=notification_id, pending=True, next=next_)
        )
    await relay.messages.ack(reply.message_id)
    value = a.Reply(notification_id=notification_id, pending=False, reply=reply.text)
    return await answer(relay, value)


# What a claimed task's answer says to do.
HELD = "report_progress as you go (it renews the lease), then complete_task or fail_task"


def _state(task: m.Task, next_: str | None = None) -> a.TaskState:
    """A claimed task's answer: what it is and where it stands."""
    return a.TaskState.model_validate(task, from_attributes=True).model_copy(update={"next": next_})


def _done(task: m.Task, next_: str | None = None) -> a.TaskDone:
    """A created or finished task's answer: where it stands."""
    return a.TaskDone(task_id=task.task_id, status=task.status, next=next_)
