"""The README's curl walkthrough through the client openapi-python-client generates from the
served document (package ``relay_generated``), checked with ``mypy --strict``. RELAY_URL and
RELAY_TOKEN (the operator's) come from the environment; it prints what it saw as one JSON line."""

from __future__ import annotations

import json
import os
from typing import TypeVar

from relay_generated import AuthenticatedClient, Client
from relay_generated.api.agents import agents_inbox, agents_register
from relay_generated.api.approvals import approvals_approve
from relay_generated.api.enroll import enroll_request, enroll_status
from relay_generated.api.messages import messages_ack, messages_send
from relay_generated.api.tasks import tasks_claim, tasks_complete, tasks_create
from relay_generated.models import (
    AgentRegister,
    AgentRegistered,
    Approval,
    ApprovalDecision,
    EnrollmentCreated,
    EnrollmentState,
    EnrollRequest,
    InboxResponse,
    Message,
    MessageAck,
    MessageCreate,
    Task,
    TaskClaim,
    TaskCreate,
    TaskFinish,
    TaskFinishResultType0,
)

T = TypeVar("T")
URL = os.environ.get("RELAY_URL", "http://127.0.0.1:8765")


def must(answer: object, kind: type[T]) -> T:
    """The answer if it is what success looks like; an error body otherwise."""
    if not isinstance(answer, kind):
        raise SystemExit(f"expected {kind.__name__}, got {answer!r}")
    return answer


def agent(token: object) -> AuthenticatedClient:
    return AuthenticatedClient(base_url=URL, token=must(token, str))


def main() -> None:
    op = AuthenticatedClient(base_url=URL, token=os.environ["RELAY_TOKEN"])

    # The operator registers two agents; each gets its token once.
    register = agents_register.sync
    alice_registered = register(client=op, body=AgentRegister(agent_id="alice"))
    bob_registered = register(client=op, body=AgentRegister(agent_id="bob"))
    alice = agent(must(alice_registered, AgentRegistered).token)
    bob = agent(must(bob_registered, AgentRegistered).token)

    # Alice messages Bob; Bob reads his inbox and acknowledges.
    sent = messages_send.sync(client=alice, body=MessageCreate(to="bob", text="build 7 is green"))
    message = must(sent, Message)
    inbox = must(agents_inbox.sync("bob", client=bob), InboxResponse)
    acked = must(
        messages_ack.sync(message.message_id, client=bob, body=MessageAck(agent_id="bob")), Message
    )

    # A task: created, claimed by exactly one agent, completed.
    task = must(tasks_create.sync(client=op, body=TaskCreate(title="reindex search")), Task)
    claimed = must(tasks_claim.sync(task.task_id, client=bob, body=TaskClaim(agent_id="bob")), Task)
    result = TaskFinishResultType0.from_dict({"docs": 1200})
    finish = TaskFinish(agent_id="bob", result=result)
    completed = must(tasks_complete.sync(task.task_id, client=bob, body=finish), Task)

    # A new agent enrolls without a token; the operator approves; its first poll has its token.
    public = Client(base_url=URL)
    asked = enroll_request.sync(client=public, body=EnrollRequest(agent_id="carol", reason="x"))
    enrolled = must(asked, EnrollmentCreated)
    decision = ApprovalDecision(note="welcome")
    approved = must(
        approvals_approve.sync(enrolled.approval_id, client=op, body=decision), Approval
    )
    polled = enroll_status.sync(enrolled.enroll_id, client=public, claim=enrolled.claim)
    state = must(polled, EnrollmentState)

    print(
        json.dumps(
            {
                "inbox": [m.text for m in inbox.messages],
                "acked": str(acked.status),
                "claimed_by": claimed.claimed_by,
                "completed": str(completed.status),
                "approval": str(approved.status),
                "enrollment": str(state.status),
                "carol_has_token": isinstance(state.token, str) and bool(state.token),
            }
        )
    )


if __name__ == "__main__":
    main()
