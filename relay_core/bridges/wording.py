"""How every platform words an approval for the operator, and its outcome once decided."""

from __future__ import annotations

from relay_core import models as m


def describe(approval: m.Approval, limit: int, strong: str = "") -> str:
    """The approval in a few lines, at most ``limit`` characters; ``strong`` wraps its first
    words where the platform marks text up (``*`` on Slack)."""
    lines = [
        f"{strong}Approval #{approval.approval_id}{strong} ({approval.kind}) "
        f"from {approval.requested_by}",
        approval.title,
    ]
    if approval.detail:
        lines.append(approval.detail)
    return "\n".join(lines)[:limit]


def outcome(approval: m.Approval, strong: str = "") -> str:
    """How it was decided, by whom, with the note: ``APPROVED by slack:U0AB: go ahead``."""
    said = f"{strong}{approval.status.upper()}{strong} by {approval.decided_by or 'operator'}"
    return f"{said}: {approval.note}" if approval.note else said
