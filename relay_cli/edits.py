"""The files a coding agent's tool call is about to write, as its ``PreToolUse`` hook reads
them, and whether another agent reserved them: then the edit is denied with the holder, the
reason and the expiry as the reason the model reads.

A ``Bash`` command is read with Relay's shell parser (``relay_core.shell_commands``): the files
its output redirections write, and those ``tee``, ``sed -i``, ``mv`` (both ends), ``cp`` (its
destination), ``rm``, ``truncate``, ``touch`` and ``git checkout``/``git restore`` (after
``--``) name, are checked. What it cannot see (a script, a program that writes files it does not
name, a path the shell expands) docs/reservations.md says; the commit guard stands behind it.

Claude Code names the file in ``Edit``, ``Write``, ``MultiEdit`` (``file_path``) and
``NotebookEdit`` (``notebook_path``). Codex sends its own edits as ``apply_patch`` (since
0.123), the whole patch in ``tool_input.command``, and may apply one through ``Bash`` too:
each file a patch adds, updates, deletes or moves (from and to) is named in its ``*** … File:``
and ``*** Move to:`` headers.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from relay_cli.hook_http import Wire
from relay_cli.reserved import acting_agent, covering, held_by_others, until
from relay_cli.workspace import current_workspace, repository_root, within
from relay_client.coding_agents import inline

FILE_FIELDS = {
    "Edit": "file_path",
    "Write": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}
# A patch's file headers (Codex's apply_patch format): added, updated, deleted, moved to.
PATCH_FILE = re.compile(
    r"^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$", re.MULTILINE
)


def targets(source: str, given: dict[str, Any]) -> list[str]:
    """The files the tool call writes, as it names them (absolute, or from its ``cwd``)."""
    tool, tool_input = given.get("tool_name"), given.get("tool_input")
    if not isinstance(tool_input, dict):
        return []
    if source == "claude-code" and tool in FILE_FIELDS:
        path = tool_input.get(FILE_FIELDS[str(tool)])
        return [path] if isinstance(path, str) and path else []
    command = tool_input.get("command")
    if not isinstance(command, str):
        return []
    if tool == "apply_patch":
        return PATCH_FILE.findall(command)
    if tool == "Bash":
        return [*PATCH_FILE.findall(command), *shell_writes(command)]
    return []


def shell_writes(command: str) -> list[str]:
    """The files a shell command line writes, as far as its words and redirections say."""
    from relay_core import shell_commands  # tree-sitter's grammar: loaded only for Bash

    line = shell_commands.read(command)
    written = list(line.redirected_to)
    for simple in line.commands:
        if simple.literal and simple.words:
            written.extend(_written_by(list(simple.words)))
    return written


# Programs that write the files they are given, and which of their operands those are.
WRITERS = frozenset({"tee", "rm", "truncate", "touch", "mv", "cp", "sed", "git"})


def _written_by(words: list[str]) -> list[str]:
    """The files one simple command writes: by its program (``sudo``, ``env`` and the like
    before it skipped) and its operands."""
    while words and words[0] in ("sudo", "env", "command", "nice", "time", "nohup"):
        words = words[1:]
    if not words or words[0].rpartition("/")[2] not in WRITERS:
        return []
    program, arguments = words[0].rpartition("/")[2], words[1:]
    operands = _operands(arguments, VALUED.get(program, frozenset()))
    if program in ("tee", "rm", "truncate", "touch", "mv"):  # mv: what leaves and what comes
        return operands
    if program == "cp":
        return operands[-1:]
    if program == "sed":
        in_place = any(a == "--in-place" or a.startswith(("-i", "--in-place=")) for a in arguments)
        scripted = any(
            a in ("-e", "-f") or a.startswith(("--expression=", "--file=")) for a in arguments
        )
        return (operands if scripted else operands[1:]) if in_place else []
    if program == "git" and arguments[:1] in (["checkout"], ["restore"]) and "--" in arguments:
        return arguments[arguments.index("--") + 1 :]
    return []


# The options of those programs that take the next word as their value.
VALUED = {
    "truncate": frozenset({"-s", "-r", "--size", "--reference"}),
    "sed": frozenset({"-e", "-f", "-l", "--expression", "--file", "--line-length"}),
    "cp": frozenset({"-S", "--suffix"}),
    "mv": frozenset({"-S", "--suffix"}),
    "touch": frozenset({"-d", "-r", "-t", "--date", "--reference"}),
}


def _operands(arguments: list[str], valued: frozenset[str]) -> list[str]:
    """The arguments that are no options nor an option's value (all of them after ``--``)."""
    operands: list[str] = []
    skip = False
    for at, argument in enumerate(arguments):
        if skip:
            skip = False
        elif argument == "--":
            return operands + arguments[at + 1 :]
        elif argument.startswith("-") and argument != "-":
            skip = argument in valued
        else:
            operands.append(argument)
    return operands


def in_repository(paths: list[str], cwd: Path) -> list[str] | None:
    """``paths`` (absolute, or from ``cwd``) relative to the root of the repository holding
    ``cwd``: the ones inside it (outside it, nobody reserves them here); None outside a
    repository."""
    root = repository_root(cwd)
    if root is None:
        return None
    inside = (within(path, root, cwd.resolve()) for path in paths)
    return [path for path in inside if path is not None]


def reserved_edit(wire: Wire, source: str, given: dict[str, Any], reserve: bool) -> str | None:
    """Why the tool call must not write what it writes (another agent holds it), or None;
    with ``reserve``, a file nobody else holds is reserved, shared, for the acting agent."""
    named = targets(source, given)
    cwd = Path(str(given.get("cwd") or "."))
    paths = in_repository(named, cwd) if named else None
    workspace = current_workspace(cwd) if paths else None
    if not paths or workspace is None:
        return None
    acting = acting_agent(wire)
    blocked = held_by_others(wire, workspace, paths, acting)
    if blocked:
        path, held = blocked[0]
        holder = held["holder"]
        task = f" for task {held['task_id']}" if held.get("task_id") is not None else ""
        why = f" ({inline(held['reason'])})" if held.get("reason") else ""
        return (
            f"{path} is reserved by {holder} until {until(held, '%H:%M')} UTC{task}{why}:"
            f" message {holder} or pick other work"
        )
    if reserve and acting is not None:
        unheld = [path for path in paths if not covering(wire, workspace, path, acting)]
        if unheld:
            shared = {"workspace": workspace, "paths": unheld, "exclusive": False}
            wire.call("POST", "/v1/reservations", shared)
    return None
