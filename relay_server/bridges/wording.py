"""How every platform words an approval for the operator, and its outcome once decided."""

from __future__ import annotations

import json

from relay_api import models as m


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
    if approval.payload:
        lines.append(json.dumps(approval.payload, ensure_ascii=False, sort_keys=True))
    if approval.expires_at is not None:
        lines.append(f"Expires {approval.expires_at:%Y-%m-%d %H:%M:%S} UTC unanswered")
    return "\n".join(lines)[:limit]


def outcome(approval: m.Approval, strong: str = "") -> str:
    """How it was decided, by whom, with the note: ``APPROVED by slack:U0AB: go ahead``."""
    if approval.status == "expired" and approval.decided_by == "deadline":
        return f"{strong}EXPIRED{strong}: nobody answered in time"
    said = f"{strong}{approval.status.upper()}{strong} by {approval.decided_by or 'operator'}"
    return f"{said}: {approval.note}" if approval.note else said
