"""A coding agent's permission prompt as an approval's payload carries it (``relay hook``, the
Claude Code channel): ``source``, ``tool_name``, ``tool_input`` and ``cwd``. A request to run a
shell command names it in ``tool_input.command``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# The sources whose host cannot run a prompt changed, and why: their requests are approved or
# rejected as asked.
UNCHANGEABLE = {
    "codex": "Codex's hook cannot run a changed command (it refuses updatedInput)",
    "claude-code-channel": "a channel's permission verdict is allow or deny, nothing changed",
}


def unchangeable(payload: Mapping[str, Any] | None) -> str | None:
    """Why a request with this payload is approved or rejected as asked only, if it is."""
    source = (payload or {}).get("source")
    return UNCHANGEABLE.get(source) if isinstance(source, str) else None


def command_of(payload: Mapping[str, Any] | None) -> str | None:
    """The shell command a request asks to run, if it asks to run one."""
    tool_input = (payload or {}).get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, Mapping) else None
    return command if isinstance(command, str) else None


def with_command(payload: Mapping[str, Any] | None, command: str) -> dict[str, Any]:
    """``payload`` with ``command`` in place of the command it asks to run; ValueError when it
    asks to run none."""
    if payload is None or command_of(payload) is None:
        raise ValueError("the request asks to run no command: change its payload instead")
    return {**payload, "tool_input": {**payload["tool_input"], "command": command}}
