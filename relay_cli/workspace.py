"""The repository a command runs in, as Relay's reservations name it: its workspace (``git
config relay.workspace``, else its ``origin`` remote's URL, normalized), and paths relative
to its root."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path


def git_output(*args: str, cwd: Path | None = None) -> str | None:
    """What ``git`` prints for ``args``, or None where it fails (no git, no repository)."""
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def normalized_remote(url: str) -> str:
    """A remote's URL as one name whatever the protocol: ``git@github.com:org/repo.git``,
    ``https://user@GitHub.com/org/repo`` and ``ssh://git@github.com/org/repo.git`` are all
    ``github.com/org/repo``."""
    text = url.strip()
    scp = re.match(r"^[\w.-]+@([\w.-]+):(?!//)(.*)$", text)  # git@host:path
    if scp:
        host, path = scp.group(1), scp.group(2)
    else:
        text = re.sub(r"^[a-z+]+://", "", text)
        text = text.split("@", 1)[-1] if "@" in text.split("/", 1)[0] else text
        host, _, path = text.partition("/")
        host = host.split(":", 1)[0]  # a port says nothing of the repository
    path = re.sub(r"\.git/?$", "", path.strip("/"))
    return f"{host.lower()}/{path}"


def current_workspace(cwd: Path | None = None) -> str | None:
    """This repository's workspace: ``relay.workspace`` from git's configuration, else its
    ``origin`` remote's normalized URL; None outside a repository with neither."""
    named = git_output("config", "--get", "relay.workspace", cwd=cwd)
    if named:
        return named
    origin = git_output("remote", "get-url", "origin", cwd=cwd)
    return normalized_remote(origin) if origin else None


def from_root(patterns: list[str], cwd: Path | None = None) -> list[str]:
    """``patterns`` relative to the repository's root, as reservations name paths: one
    relative to ``cwd`` (``../api/x.py`` too) or an absolute path inside the repository is
    made so; one that starts with ``/`` and is not in it is taken from the root. A pattern
    that still names no path of the repository (``../outside``) is sent as it is, for the
    server to say why it holds nothing."""
    here = (cwd or Path.cwd()).resolve()
    root = repository_root(here) or here
    rooted = []
    for pattern in patterns:
        inside = within(pattern, root, here)
        if inside is None and pattern.startswith("/"):
            inside = within(pattern.lstrip("/"), root, root)
        rooted.append(pattern if inside is None else inside)
    return rooted


def repository_root(cwd: Path | None = None) -> Path | None:
    """The root of the repository holding ``cwd``; None outside one."""
    top = git_output("rev-parse", "--show-toplevel", cwd=cwd)
    return Path(top).resolve() if top else None


def within(path: str, root: Path, cwd: Path) -> str | None:
    """``path`` (absolute, or from ``cwd``) from ``root``, its ``.`` and ``..`` resolved; None
    when it is outside ``root`` (a wildcard stays as written: only its literal directories
    are resolved)."""
    full = Path(os.path.normpath(cwd / path)).resolve()
    try:
        inside = full.relative_to(root).as_posix()
    except ValueError:
        return None
    if inside == ".":
        return None
    return inside + "/" if path.endswith("/") else inside
