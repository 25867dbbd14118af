"""What Relay makes of a coding agent's permission prompt, wherever it comes from (the
``relay hook`` commands, the Claude Code channel of ``relay mcp``): the approval's title, the
host a URL reaches."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

import ada_url

MAX_TITLE = 500


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
    title = f"{tool_name}: {line}" if line else tool_name
    return title if len(title) <= MAX_TITLE else title[: MAX_TITLE - 1] + "…"


def host_of(url: str) -> str | None:
    """The host a browser or fetcher would reach at ``url``, parsed as the WHATWG URL standard
    says (``https://evil.example\\@github.com/`` reaches evil.example, which Python's urlsplit
    reads as github.com); None when it is no URL."""
    try:
        return ada_url.URL(url).hostname or None
    except ValueError:
        return None


def _relative(path: str, cwd: str) -> str:
    try:
        return str(PurePosixPath(path).relative_to(cwd)) if cwd else path
    except ValueError:
        return path
