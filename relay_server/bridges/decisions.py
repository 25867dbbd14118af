"""What the operator's platforms share on the way back in: a reply or a button that decides an
approval, answers a question, approves a command changed or undoes an "always"; and the
fingerprint that makes a platform's event once."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from relay_api import models as m
from relay_api.errors import RelayError
from relay_api.models import ApprovalAnswer, ApprovalDecision
from relay_core.auth import OPERATOR_CALLER
from relay_core.services import Services
from relay_server.bridges.wording import answer_hint

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
        policy = await services.policies.show(OPERATOR_CALLER, decided.remembered_policy_id)
        return (
            f"approved #{decided.approval_id}, remembered as policy #{policy.policy_id}:"
            f" {policy.name}"
        )
    return f"{decided.status} #{decided.approval_id}"


# A reply naming a question's options by their numbers: "2", "1 3", "1, 3".
NUMBERS = re.compile(r"^\s*\d+(\s*[, ]\s*\d+)*\s*$")


def chosen_in(question: m.Approval, reply: str) -> list[str] | None:
    """What a reply to a question's card answers: the options it numbers, or, where the
    question allows it, the reply's own words; None when it answers nothing."""
    labels = [option.label for option in question.options or []]
    if NUMBERS.match(reply):
        numbers = [int(n) for n in re.findall(r"\d+", reply)]
        if all(1 <= n <= len(labels) for n in numbers):
            return [labels[n - 1] for n in numbers]
    if reply.strip() in labels:
        return [reply.strip()]
    return [reply.strip()] if question.allow_other and reply.strip() else None


async def answer(services: Services, approval_id: int, chosen: list[str], decided_by: str) -> str:
    """Answer a question as the operator, recording who on which platform; a short word on
    how it went."""
    try:
        given = ApprovalAnswer(answer=chosen, decided_by=decided_by[:200])
        answered = await services.approvals.answer(OPERATOR_CALLER, approval_id, given)
    except RelayError as exc:
        return exc.detail
    except ValueError as exc:  # pydantic's ValidationError among them
        return str(exc)
    if not answered.changed:
        return f"#{approval_id} was already {answered.status}"
    return f"answered #{approval_id}: {', '.join(answered.answer or [])}"


async def answer_option(services: Services, approval_id: int, index: str, who: str) -> str:
    """An option's button (its index among the question's options): answer with it."""
    try:
        question = await services.approvals.show(OPERATOR_CALLER, approval_id)
    except RelayError as exc:
        return exc.detail
    options = question.options or []
    if not index.isdigit() or int(index) >= len(options):
        return "Not an option of this question."
    return await answer(services, approval_id, [options[int(index)].label], who)


async def pressed(services: Services, approval_id: int, verb: str, who: str) -> str | None:
    """A card's button, the same on every platform: approve, reject, always, forget (undo an
    "always"), ``answer:<index>`` (a question's option). A short word on how it went; None for
    a verb no shared card offers."""
    if verb in ("approve", "reject", "always"):
        return await decide(services, approval_id, verb, None, who)
    if verb == "forget":
        return await forget(services, approval_id)
    if verb.startswith("answer:"):
        return await answer_option(services, approval_id, verb.removeprefix("answer:"), who)
    return None


async def apply_reply(
    services: Services, approval: m.Approval, text: str, who: str
) -> tuple[bool, str | None]:
    """Apply the operator's reply to an approval's card, the same on every platform: a
    decision, an answer to a question, an undo. Whether it was one (else the platform delivers
    it as any reply), and what to tell the operator (None: the card's update says it)."""
    decision, undo = DECISION.match(text), UNDO.match(text)
    verb = decision[1].lower() if decision else None
    if approval.kind == "question" and verb not in ("reject", "stop"):
        chosen = chosen_in(approval, text)
        if chosen is None:
            return True, answer_hint(approval)
        return True, await answer(services, approval.approval_id, chosen, who)
    if decision and verb is not None:
        said = await decide(services, approval.approval_id, verb, decision[2], who)
        return True, said if verb == "always" else None  # what was remembered, or why not
    if undo:
        return True, await forget(services, approval.approval_id)
    return False, None


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
        decision = ApprovalDecision(command=command, decided_by=decided_by[:200])
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
