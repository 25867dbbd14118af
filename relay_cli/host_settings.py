"""What ``relay connect`` writes into a coding agent's own settings, and how it takes it out
again: Claude Code's hooks (``.claude/settings.json``) and MCP server (``.mcp.json``, or
``~/.claude.json`` for every project), Codex's hooks (``.codex/hooks.json``) and MCP server
(``[mcp_servers.relay]`` in ``.codex/config.toml``).

Every command is the absolute path of the ``relay`` that wrote it, with the server's URL and the
agent it acts for (``--agent``): the host finds it whatever its ``PATH``, and it reads the
agent's token from Relay's own identity file, never from the host's settings. What is there is
kept: other hooks and servers untouched, TOML comments and formatting too (tomlkit, which
round-trips). A file is changed only where Relay's entries are missing, so connecting twice
changes nothing; a file that does not parse is left alone, with an error naming it and the
line.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import tomlkit
import tomlkit.exceptions

Host = Literal["claude-code", "codex"]
PERMISSION_TIMEOUT = 55  # the hook's --timeout; the host's timeout for it is 5 s more
QUESTION_TIMEOUT = 300  # Claude Code's questions wait longer: a person types an answer
# Claude Code's PreToolUse: its questions, and every tool that writes a file.
CLAUDE_CODE_WRITES = "AskUserQuestion|Edit|Write|MultiEdit|NotebookEdit|Bash"
CODEX_WRITES = "Bash|apply_patch"
HANDED_OVER = ("SessionStart", "UserPromptSubmit", "Stop")


class SettingsError(Exception):
    """A host's settings file that cannot be read as it must be: left alone."""


@dataclass(frozen=True)
class Wiring:
    """Relay's pieces for one host, one server and one agent, in one scope."""

    host: Host
    relay: str  # the absolute path of the relay command
    url: str
    agent: str
    user: bool  # every project of this user, else the project in ``project``
    project: Path
    home: Path

    def command(self, *more: str) -> list[str]:
        return [self.relay, "--url", self.url, "--agent", self.agent, *more]

    def hook(self, *more: str) -> str:
        return shlex.join(self.command("hook", self.host, *more))

    def hooks(self) -> dict[str, list[dict[str, Any]]]:
        """The hook groups Relay adds, by event."""
        permission = {
            "type": "command",
            "command": self.hook("--timeout", str(PERMISSION_TIMEOUT)),
            "timeout": PERMISSION_TIMEOUT + 5,
        }
        if self.host == "claude-code":
            before = {
                "type": "command",
                "command": self.hook("--timeout", str(QUESTION_TIMEOUT)),
                "timeout": QUESTION_TIMEOUT + 10,
            }
            groups = {
                "PermissionRequest": {"matcher": "*", "hooks": [permission]},
                "PreToolUse": {"matcher": CLAUDE_CODE_WRITES, "hooks": [before]},
            }
        else:
            check = {"type": "command", "command": self.hook(), "timeout": 30}
            groups = {
                "PermissionRequest": {"hooks": [permission]},
                "PreToolUse": {"matcher": CODEX_WRITES, "hooks": [check]},
            }
        for event in HANDED_OVER:
            groups[event] = {"hooks": [{"type": "command", "command": self.hook()}]}
        return {event: [group] for event, group in groups.items()}

    def mcp_server(self) -> dict[str, Any]:
        return {"command": self.relay, "args": self.command("mcp")[1:]}

    def hooks_file(self) -> Path:
        if self.host == "claude-code":
            return (self.home if self.user else self.project) / ".claude" / "settings.json"
        return (codex_home(self.home) if self.user else self.project / ".codex") / "hooks.json"

    def mcp_file(self) -> Path:
        if self.host == "claude-code":
            return self.home / ".claude.json" if self.user else self.project / ".mcp.json"
        return (codex_home(self.home) if self.user else self.project / ".codex") / "config.toml"

    def files(self) -> list[Path]:
        return [self.hooks_file(), self.mcp_file()]

    def connected(self, path: Path, text: str | None) -> str:
        """``text`` (the file's, None: no file) with Relay's entries in it."""
        if path.suffix == ".toml":
            return _with_toml_server(path, text, self.mcp_server())
        document = read_json(path, text)
        if path == self.hooks_file():
            hooks = document.setdefault("hooks", {})
            if not isinstance(hooks, dict):
                raise SettingsError(f"{path}: 'hooks' is not an object")
            for event, groups in self.hooks().items():
                present = hooks.setdefault(event, [])
                if not isinstance(present, list):
                    raise SettingsError(f"{path}: 'hooks.{event}' is not a list")
                if not any(_commands(g) & _commands(groups[0]) for g in present):
                    present.extend(groups)
        else:
            servers = document.setdefault("mcpServers", {})
            if not isinstance(servers, dict):
                raise SettingsError(f"{path}: 'mcpServers' is not an object")
            servers["relay"] = self.mcp_server()
        return dump_json(document, text)

    def disconnected(self, path: Path, text: str) -> str:
        """``text`` with Relay's entries (as this wiring wrote them) taken out."""
        if path.suffix == ".toml":
            table = _toml(path, text)
            servers = table.get("mcp_servers")
            if servers is not None and _plain(servers.get("relay")) == self.mcp_server():
                del servers["relay"]
                if not servers:
                    del table["mcp_servers"]
            return tomlkit.dumps(table)
        document = read_json(path, text)
        if path == self.hooks_file():
            hooks = document.get("hooks") or {}
            ours = {c for groups in self.hooks().values() for c in _commands(groups[0])}
            for event in list(hooks):
                kept = [g for g in hooks[event] if not (_commands(g) and _commands(g) <= ours)]
                if kept:
                    hooks[event] = kept
                else:
                    del hooks[event]
            if not hooks:
                document.pop("hooks", None)
        else:
            servers = document.get("mcpServers") or {}
            if servers.get("relay") == self.mcp_server():
                del servers["relay"]
                if not servers:
                    document.pop("mcpServers", None)
        return dump_json(document, text)

    def entries(self, path: Path, text: str) -> int:
        """How many times Relay's entries stand in ``text`` (its hooks, or its server)."""
        if path.suffix == ".toml":
            servers = _toml(path, text).get("mcp_servers") or {}
            return int("relay" in servers)
        document = read_json(path, text)
        if path != self.hooks_file():
            return int("relay" in (document.get("mcpServers") or {}))
        hooks = document.get("hooks") or {}
        found = [
            command
            for groups in hooks.values()
            for group in groups
            for command in _commands(group)
            if f" hook {self.host}" in command
        ]
        return len(found)


def codex_home(home: Path) -> Path:
    """Codex's own directory: ``CODEX_HOME``, else ``~/.codex``."""
    given = os.environ.get("CODEX_HOME")
    return Path(given) if given else home / ".codex"


def read_json(path: Path, text: str | None) -> dict[str, Any]:
    """A JSON settings file's object (an empty one for no file)."""
    if text is None or not text.strip():
        return {}
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"{path}, line {exc.lineno}: not JSON ({exc.msg}); fix it or move it away"
        ) from None
    if not isinstance(document, dict):
        raise SettingsError(f"{path}: not a JSON object")
    return document


def dump_json(document: dict[str, Any], original: str | None) -> str:
    """``document`` written as the file was indented (two spaces for a new file)."""
    indent = _indent_of(original) if original else 2
    return json.dumps(document, indent=indent, ensure_ascii=False) + "\n"


def _indent_of(text: str) -> int:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" ")
        if stripped and len(stripped) < len(line):
            return len(line) - len(stripped)
    return 2


def _commands(group: Any) -> set[str]:
    """The commands of one hook group."""
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return set()
    return {h["command"] for h in group["hooks"] if isinstance(h, dict) and "command" in h}


def _toml(path: Path, text: str | None) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(text or "")
    except tomlkit.exceptions.ParseError as exc:
        raise SettingsError(
            f"{path}, line {exc.line}: not TOML ({exc}); fix it or move it away"
        ) from None


def _plain(value: Any) -> Any:
    return value.unwrap() if hasattr(value, "unwrap") else value


def _with_toml_server(path: Path, text: str | None, server: dict[str, Any]) -> str:
    document = _toml(path, text)
    servers = document.get("mcp_servers")
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        document["mcp_servers"] = servers
    if _plain(servers.get("relay")) != server:
        entry = tomlkit.table()
        entry["command"] = server["command"]
        entry["args"] = server["args"]
        servers["relay"] = entry
    return tomlkit.dumps(document)
