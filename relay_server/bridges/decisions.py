"""What the operator's platforms share on the way back in: a reply that decides an approval, and
the fingerprint that makes a platform's event once."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from relay_api.errors import RelayError
from relay_api.models import ApprovalDecision
from relay_api.prompts import with_command
from relay_core.auth import OPERATOR_CALLER
from relay_core.services import Services

# A reply to an approval's message: "approve", "reject", "always" (approve, and remember it as
# a policy), "stop" (reject, and ask the agent to stop what it is doing), with a note after it
# or not; or "undo" (forget what "always" remembered).
DECISION = re.compile(r"^\s*(approve|reject|always|stop)\b\s*(.*)$", re.IGNORECASE | re.DOTALL)
UNDO = re.compile(r"^\s*undo\s*$", re.IGNORECASE)
UNDO_SECONDS = 600  # how long after an "always" its card's one tap undoes it
# A reply that changes the command of a request before approving it: "edit <command>".
EDIT = re.compile(r"^\s*edit\s+(\S.*?)\s*$", re.IGNORECASE | re.DOTALL)


async def decide(
    services: Services, approval_id: int, verb: str, note: str | None, decided_by: str
) -> str:
    """Approve, reject, approve and remember (``always``), or reject and ask the agent to stop
    (``stop``) as the operator, recording who on which platform; a short word on how it
    went."""
    decision = ApprovalDecision(
        note=note or None,
        remember=verb == "always",
        interrupt=verb == "stop",
        decided_by=decided_by[:200],
    )
    rejects = verb in ("reject", "stop")
    method = services.approvals.reject if rejects else services.approvals.approve
    try:
        decided = await method(OPERATOR_CALLER, approval_id, decision)
    except RelayError as exc:
        return exc.detail
    if decided.remembered_policy_id is not None:
        return (
            f"approved #{decided.approval_id}, remembered as policy #{decided.remembered_policy_id}"
        )
    return f"{decided.status} #{decided.approval_id}"


async def forget(services: Services, approval_id: int) -> str:
    """Undo an approval's "always" within ``UNDO_SECONDS`` of it: its policy disabled; a short
    word on how it went."""
    try:
        approval = await services.approvals.show(OPERATOR_CALLER, approval_id)
        policy_id = approval.remembered_policy_id
        if policy_id is None or approval.decided_at is None:
            return f"Approval #{approval_id} remembered nothing."
        if (services.approvals.now() - approval.decided_at).total_seconds() > UNDO_SECONDS:
            return (
                f"Too late for one tap: disable policy #{policy_id} in the console, or with"
                f" relay policies disable {policy_id}."
            )
        await services.policies.disable(OPERATOR_CALLER, policy_id)
    except RelayError as exc:
        return exc.detail
    return f"Policy #{policy_id} disabled: approval #{approval_id} is no longer remembered."


async def approve_changed(
    services: Services, approval_id: int, command: str, decided_by: str
) -> str | None:
    """Approve the request to run ``command`` instead of the command it asked; why not, if
    not."""
    try:
        approval = await services.approvals.show(OPERATOR_CALLER, approval_id)
        payload = with_command(approval.payload, command)
        decision = ApprovalDecision(payload=payload, decided_by=decided_by[:200])
        await services.approvals.approve(OPERATOR_CALLER, approval_id, decision)
    except RelayError as exc:
        return exc.detail
    except ValueError as exc:  # pydantic's ValidationError among them
        return str(exc)
    return None


def fields(value: object) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one. What a platform sends is read field
    by field through this, so a field of another shape than its documentation says (a string
    where an object belongs) reads as absent rather than failing the update."""
    return value if isinstance(value, dict) else {}


def text_of(value: object) -> str:
    """``value`` if it is a string, else empty: a platform's text field of another shape."""
    return value if isinstance(value, str) else ""


def fingerprint(replied_to: str, text: str) -> str:
    """What a platform event asked, as a ``RetryKey`` records it (a fixed-size hash)."""
    return hashlib.sha256(f"{replied_to}\0{text}".encode()).hexdigest()
