""" "Always allow this": the policy an operator's approval with ``remember`` creates, as narrow as
the request it approves.

A coding agent's request to run a command is remembered as that line, exactly (the same
commands, in the same order, with the same operators between them; nothing added), in the same
working directory unless the operator chose any directory (``RememberScope.directory``). Only a
plain line is remembered (nothing substituted in it, no variable set, nothing redirected out of
its directory): a line whose effect changes from one run to the next is approved once. A
request for another tool is remembered by its input, exactly. Anything else (no tool named, a
line that is not plain) cannot be narrowed so and is a conflict: approve it once, or write a
policy.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from relay_api import models as m
from relay_api.elision import elide
from relay_api.errors import Conflict
from relay_api.prompts import command_of
from relay_core import shell_commands


def remembered_policy(
    approval: m.Approval,
    approved_payload: m.JsonObject | None,
    scope: m.RememberScope,
    decided_by: str,
) -> m.PolicyCreate:
    """The policy that approves requests like ``approval`` from now on (the request as the
    operator approved it, ``approved_payload``, unless ``scope`` says as asked)."""
    where = f"approval {approval.approval_id}"
    if approval.kind != "request":
        raise Conflict(f"{where} is an {approval.kind}'s: only an agent's request is remembered")
    payload = approval.payload if scope.command == "asked" else approved_payload or approval.payload
    tool = (payload or {}).get("tool_name")
    if not isinstance(tool, str):
        raise Conflict(
            f"{where} names no tool (payload.tool_name): only a coding agent's tool request is"
            " remembered; write a policy for anything else"
        )
    condition: dict[str, Any] = {"/tool_name": {"eq": tool}}
    command = command_of(payload)
    if command is not None:
        cwd = (payload or {}).get("cwd")
        _require_plain(where, command, cwd if isinstance(cwd, str) else "")
        condition["/tool_input/command"] = {"eq": command}
        if scope.directory == "this":  # a request that named none: those that name none
            condition["/cwd"] = {"eq": cwd} if cwd is not None else {"exists": False}
    else:
        condition["/tool_input"] = {"eq": (payload or {}).get("tool_input")}
    match: dict[str, Any] = {"kinds": ["request"], "payload": condition}
    if scope.agents == "this":
        match["agents"] = [approval.requested_by]
    try:
        return m.PolicyCreate.model_validate(
            {
                "name": elide(f"Always allow {approves(approval, payload, scope)}", 200),
                "decision": "approve",
                "note": f"remembered from approval #{approval.approval_id} by {decided_by}",
                "match": match,
                "limit": scope.limit.model_dump() if scope.limit is not None else None,
            }
        )
    except ValidationError as exc:
        reason = exc.errors()[0]["msg"]
        raise Conflict(f"{where} cannot be remembered as a policy: {reason}") from None


def approves(approval: m.Approval, payload: m.JsonObject | None, scope: m.RememberScope) -> str:
    """What a remembered policy approves, in words (its name says it, and so every place that
    shows it): ``coder to run exactly `pytest -q && git push` in /home/dev/shop``."""
    who = approval.requested_by if scope.agents == "this" else "every agent"
    tool = (payload or {}).get("tool_name")
    command = command_of(payload)
    if command is None:
        return f"{who} {tool} with this input"
    cwd = (payload or {}).get("cwd")
    if scope.directory == "any":
        where = "in any directory"
    else:
        where = "naming no directory" if cwd is None else f"in {cwd}"
    return f"{who} to run exactly `{' '.join(command.split())}` {where} ({tool})"


def _require_plain(where: str, command: str, cwd: str) -> None:
    """A conflict unless ``command`` is a plain line of literal words."""
    line = shell_commands.read(command, cwd)
    if not line.plain or not line.commands or not all(c.literal for c in line.commands):
        raise Conflict(
            f"{where}'s command cannot be remembered: it is not a plain command line (it"
            " substitutes, sets a variable, redirects out of its directory, uses a construct"
            " other than lists and pipelines, or does not parse). Approve it once, or write a"
            " policy"
        )
