""" "Always allow this": the policy an operator's approval with ``remember`` creates, as narrow as
the request it approves.

A coding agent's request to run a command is remembered through the ``command`` condition: one
``allow`` pattern per simple command of the line, each its program and its arguments exactly
(an argument's glob characters escaped, so ``ls *.py`` allows ``*.py`` as written, not every
file), so the policy approves that line again, alone: nothing chained to it, substituted in it
or redirected out of its directory. A request for another tool is remembered by its input,
exactly. Anything else (no tool named, a line that is not plain) cannot be narrowed so and is a
conflict: approve it once, or write a policy.
"""

from __future__ import annotations

import shlex
from typing import Any

from pydantic import ValidationError

from relay_api import models as m
from relay_api.elision import elide
from relay_api.errors import Conflict
from relay_api.prompts import command_of
from relay_core import shell_commands

# What fnmatch reads as a wildcard in a pattern's argument, and how it matches the character.
_GLOB_ESCAPES = str.maketrans({"[": "[[]", "*": "[*]", "?": "[?]"})


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
    command = command_of(payload)
    if command is not None:
        cwd = (payload or {}).get("cwd")
        patterns = _exact_patterns(where, command, cwd if isinstance(cwd, str) else "")
        condition: dict[str, Any] = {"/tool_input/command": {"command": {"allow": patterns}}}
        what = f"{tool}: {command}"
    else:
        condition = {"/tool_input": {"eq": (payload or {}).get("tool_input")}}
        what = f"{tool} with this input"
    match: dict[str, Any] = {"kinds": ["request"], "payload": {"/tool_name": {"eq": tool}}}
    match["payload"] |= condition
    if scope.agents == "this":
        match["agents"] = [approval.requested_by]
    who = approval.requested_by if scope.agents == "this" else "every agent"
    try:
        return m.PolicyCreate.model_validate(
            {
                "name": elide(f"Always allow {who} {what}", 200),
                "decision": "approve",
                "note": f"remembered from approval #{approval.approval_id} by {decided_by}",
                "match": match,
                "limit": scope.limit.model_dump() if scope.limit is not None else None,
            }
        )
    except ValidationError as exc:
        reason = exc.errors()[0]["msg"]
        raise Conflict(f"{where} cannot be remembered as a policy: {reason}") from None


def _exact_patterns(where: str, command: str, cwd: str) -> list[str]:
    """One ``allow`` pattern per simple command of the line, its words exactly; a conflict
    when the line is not one the ``command`` condition would allow again."""
    line = shell_commands.read(command, cwd)
    refused = Conflict(
        f"{where}'s command cannot be remembered: it is not a plain command line (it"
        " substitutes, sets a variable, redirects out of its directory, uses a construct"
        " other than lists and pipelines, or does not parse). Approve it once, or write a"
        " policy"
    )
    if not line.plain or not line.commands or not all(c.literal for c in line.commands):
        raise refused
    words = list(dict.fromkeys(c.words for c in line.commands))
    for program, *_ in words:
        if "/" in program or any(char in program for char in "*?["):
            raise Conflict(
                f"{where}'s command runs {program!r}, named by its path or with a wildcard:"
                " a remembered command names its programs plainly. Approve it once"
            )
    patterns = [
        shlex.join([program, *(arg.translate(_GLOB_ESCAPES) for arg in args)])
        for program, *args in words
    ]
    exact = [shell_commands.Pattern(tuple(shlex.split(p))) for p in patterns]
    if not shell_commands.allowed(line, exact):  # what is remembered approves this line again
        raise refused
    return patterns
