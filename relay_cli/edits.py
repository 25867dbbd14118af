"""The files a coding agent's tool call is about to write, as its ``PreToolUse`` hook reads
them, and whether another agent reserved them: then the edit is denied with the holder, the
reason and the expiry as the reason the model reads.

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

from relay_cli.reserved import acting_agent, held_by_others
from relay_cli.workspace import current_workspace, repository_root, within
from relay_client import RelayClient
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
    if tool == "apply_patch" or (tool == "Bash" and "apply_patch" in command):
        return PATCH_FILE.findall(command)
    return []


def in_repository(paths: list[str], cwd: Path) -> list[str] | None:
    """``paths`` (absolute, or from ``cwd``) relative to the root of the repository holding
    ``cwd``: the ones inside it (outside it, nobody reserves them here); None outside a
    repository."""
    root = repository_root(cwd)
    if root is None:
        return None
    inside = (within(path, root, cwd.resolve()) for path in paths)
    return [path for path in inside if path is not None]


def reserved_edit(
    client: RelayClient, source: str, given: dict[str, Any], reserve: bool
) -> str | None:
    """Why the tool call must not write what it writes (another agent holds it), or None;
    with ``reserve``, a file nobody else holds is reserved, shared, for the acting agent."""
    named = targets(source, given)
    cwd = Path(str(given.get("cwd") or "."))
    paths = in_repository(named, cwd) if named else None
    workspace = current_workspace(cwd) if paths else None
    if not paths or workspace is None:
        return None
    acting = acting_agent(client)
    blocked = held_by_others(client, workspace, paths, acting)
    if blocked:
        path, held = blocked[0]
        task = f" for task {held.task_id}" if held.task_id is not None else ""
        why = f" ({inline(held.reason)})" if held.reason else ""
        return (
            f"{path} is reserved by {held.holder} until {held.expires_at:%H:%M} UTC{task}{why}:"
            f" message {held.holder} or pick other work"
        )
    if reserve and acting is not None:
        unheld = [path for path in paths if not _holds(client, workspace, acting, path)]
        if unheld:
            client.reservations.create(workspace, unheld, exclusive=False)
    return None


def _holds(client: RelayClient, workspace: str, agent: str, path: str) -> bool:
    """Whether ``agent`` holds a reservation that covers ``path``."""
    held = client.reservations.list(workspace=workspace, holder=agent, path=path)
    return bool(held.reservations)
