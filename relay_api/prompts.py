"""A coding agent's permission prompt as an approval's payload carries it (``relay hook``, the
Claude Code channel): ``source``, ``tool_name``, ``tool_input`` and ``cwd``, and the title the
operator reads. A request to run a shell command names it in ``tool_input.command``. No
pydantic here: the hooks read it on every tool call."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

MAX_TITLE = 500

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


def title_of(tool_name: str, tool_input: dict[str, Any], cwd: str) -> str:
    """A title the operator reads at a glance, starting with the tool's name: ``Bash: npm
    publish``, ``Edit: src/app.py``, ``WebFetch: example.com``, an MCP tool by its name."""
    subject = ""
    if isinstance(tool_input.get("command"), str):
        subject = tool_input["command"]
    elif isinstance(tool_input.get("file_path"), str):
        subject = _relative(tool_input["file_path"], cwd)
    elif isinstance(tool_input.get("notebook_path"), str):
        subject = _relative(tool_input["notebook_path"], cwd)
    elif isinstance(tool_input.get("url"), str):
        subject = host_of(tool_input["url"]) or tool_input["url"]
    elif isinstance(tool_input.get("query"), str):
        subject = tool_input["query"]
    elif isinstance(tool_input.get("description"), str):
        subject = tool_input["description"]
    line = " ".join(subject.split())  # one line, however the command was written
    return one_line(f"{tool_name}: {line}" if line else tool_name)


def one_line(text: str, limit: int = MAX_TITLE) -> str:
    """``text`` as a title: its whitespace (line breaks among it) one space, at most ``limit``
    characters, a cut one ending in "…"."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def prompt_payload(
    source: str, tool_name: str, tool_input: dict[str, Any] | None, cwd: str, **more: Any
) -> dict[str, Any]:
    """What an approval for a permission prompt carries, and policies match on: where it came
    from, the tool and its input (None: not whole, so not given), the working directory,
    ``more``, and for a tool with a ``url`` the host it reaches (``url_host``)."""
    payload: dict[str, Any] = {"source": source, "tool_name": tool_name, "cwd": cwd, **more}
    if tool_input is not None:
        payload["tool_input"] = tool_input
        if isinstance(tool_input.get("url"), str):
            payload["url_host"] = host_of(tool_input["url"])
    return payload


def host_of(url: str) -> str | None:
    """The host a browser or fetcher would reach at ``url``, parsed as the WHATWG URL standard
    says (``https://evil.example\\@github.com/`` reaches evil.example, which Python's urlsplit
    reads as github.com); None when it is no URL."""
    import ada_url  # the WHATWG parser: loaded for the prompts that name a URL, not on each

    try:
        return ada_url.URL(url).hostname or None
    except ValueError:
        return None


def _relative(path: str, cwd: str) -> str:
    try:
        return str(PurePosixPath(path).relative_to(cwd)) if cwd else path
    except ValueError:
        return path
