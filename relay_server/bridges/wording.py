"""How every platform words an approval for the operator, and its outcome once decided."""

from __future__ import annotations

import json
from collections.abc import Callable

from relay_api import models as m
from relay_api.elision import fit
from relay_api.prompts import command_of, unchangeable

TITLE_SHARE = 600  # a title has at most 500 characters: whole, but for escaping


def _plain(text: str) -> str:
    return text


def describe(
    approval: m.Approval, limit: int, strong: str = "", escape: Callable[[str], str] = _plain
) -> str:
    """The approval in a few lines, at most ``limit`` characters: every text the requester
    wrote ``escape``d for the platform, and a long one shown as its head and its tail around a
    mark of what was left out (the command of a payload first, then its detail, then the whole
    payload). ``strong`` wraps the first words where the platform marks text up."""
    head = (
        f"{strong}Approval #{approval.approval_id}{strong} ({approval.kind}) "
        f"from {escape(approval.requested_by)}"
    )
    lines = [head, fit(approval.title, TITLE_SHARE, escape), *options_of(approval, escape)]
    if approval.escalated_to is not None:
        lines.append(f"Escalated: unanswered since {approval.created_at:%Y-%m-%d %H:%M} UTC")
    expiry = (
        f"Expires {approval.expires_at:%Y-%m-%d %H:%M:%S} UTC unanswered"
        if approval.expires_at is not None
        else None
    )
    long_parts = [f"Command: {command}" for command in [command_of(approval.payload)] if command]
    if approval.detail:
        long_parts.append(approval.detail)
    if approval.payload:
        long_parts.append(json.dumps(approval.payload, ensure_ascii=False, sort_keys=True))
    room = limit - sum(len(line) + 1 for line in lines) - (len(expiry) + 1 if expiry else 0)
    for n, part in enumerate(long_parts):
        share = room // (len(long_parts) - n)
        shown = fit(part, max(share - 1, 0), escape)
        lines.append(shown)
        room -= len(shown) + 1
    if expiry:
        lines.append(expiry)
    return "\n".join(lines)[:limit]


def reminder(approval: m.Approval, strong: str = "", escape: Callable[[str], str] = _plain) -> str:
    """The reminder of an approval still unanswered, said in reply to its card."""
    return (
        f"{strong}Reminder:{strong} approval #{approval.approval_id} from "
        f"{escape(approval.requested_by)} still waits for you (asked "
        f"{approval.created_at:%Y-%m-%d %H:%M} UTC): {fit(approval.title, TITLE_SHARE, escape)}"
    )


def options_of(approval: m.Approval, escape: Callable[[str], str] = _plain) -> list[str]:
    """A question's options, numbered as a reply names them (``2. SQLite: the local file``)."""
    return [
        f"{n}. {escape(option.label)}"
        + (f": {escape(option.description)}" if option.description else "")
        for n, option in enumerate(approval.options or [], start=1)
    ]


def answer_hint(approval: m.Approval) -> str:
    """How a question's card says to answer it."""
    how = (
        "Reply with the numbers of your answers (1 3)"
        if approval.multiple
        else "Reply with its number"
    )
    other = ", or in your own words" if approval.allow_other else ""
    return f"{how}{other}; 'reject [note]' declines."


def editable_command(approval: m.Approval) -> str | None:
    """The command of an agent's request the operator may approve changed, if it is one: a
    request to run a command whose host can run it changed."""
    if approval.kind != "request" or unchangeable(approval.payload) is not None:
        return None
    return command_of(approval.payload)


def edit_hint(
    approval: m.Approval, how: str = "Reply 'edit <command>' to approve it changed."
) -> str:
    """What a card says of approving its command changed: ``how``, or why it cannot be."""
    if approval.kind != "request" or command_of(approval.payload) is None:
        return ""
    why = unchangeable(approval.payload)
    return f"No edit: {why}." if why else how


def rememberable(approval: m.Approval) -> bool:
    """Whether the operator is offered "always allow this": a coding agent's tool request (the
    server refuses, saying why, one it cannot narrow)."""
    return approval.kind == "request" and isinstance((approval.payload or {}).get("tool_name"), str)


def hints(*said: str) -> str:
    """A card's hints in one line, the empty ones left out."""
    return " ".join(hint for hint in said if hint)


def stop_hint(approval: m.Approval) -> str:
    """How a card says to reject an agent's request and stop the agent, where it can be."""
    return (
        "Reply 'stop [note]' to reject it and stop the agent." if approval.kind == "request" else ""
    )


def edit_refused(approval: m.Approval) -> str | None:
    """Why the operator's ``edit <command>`` cannot change ``approval``, if it cannot."""
    if approval.status != "pending":
        return f"Approval #{approval.approval_id} is already {approval.status}."
    if editable_command(approval) is None:
        why = unchangeable(approval.payload) or "it asks to run no command"
        return f"Approval #{approval.approval_id} can only be approved as asked: {why}."
    return None


def outcome(approval: m.Approval, strong: str = "", escape: Callable[[str], str] = _plain) -> str:
    """How it was decided, by whom, with the note: ``APPROVED by slack:U0AB: go ahead``."""
    if approval.status == "expired" and approval.decided_by == "deadline":
        return f"{strong}EXPIRED{strong}: nobody answered in time"
    if approval.status == "withdrawn":
        why = escape(approval.note or "the agent no longer asks")
        return f"{strong}WITHDRAWN{strong}: {why}"
    by = escape(approval.decided_by or "operator")
    if approval.status == "answered":
        said = f"{strong}ANSWERED{strong} by {by}: {escape(', '.join(approval.answer or []))}"
        return f"{said} ({escape(approval.note)})" if approval.note else said
    said = f"{strong}{approval.status.upper()}{strong} by {by}"
    if approval.approved_payload is not None:
        command = command_of(approval.approved_payload)
        said += f", changed: it runs {escape(command)}" if command else ", changed"
    if approval.remembered_policy_id is not None:
        said += f", and remembered as policy #{approval.remembered_policy_id}"
    if approval.interrupt:
        said += ", and the agent asked to stop"
    return f"{said}: {escape(approval.note)}" if approval.note else said
