"""Files the client side keeps for an agent on one server (its identity, a channel's cursor, what
a session was handed): where they live, and how they are written."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit


def server_folder(url: str) -> str:
    """A folder name for the server at ``url``: ``<host>-<port>``."""
    parts = urlsplit(url)
    return re.sub(r"[^A-Za-z0-9.-]", "_", f"{parts.hostname}-{parts.port or parts.scheme}")


def file_name(value: str) -> str:
    """``value`` (an agent's id, a session's) as a file name's stem, at most 128 characters."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", value)[:128]


def write_json(path: Path, value: Any) -> None:
    """Write ``value`` to ``path`` (0600, in a 0700 directory), replacing what was there in one
    step: a crash leaves the old file or the new one."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    draft = path.with_suffix(".tmp")
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        json.dump(value, handle)
    os.replace(draft, path)


class Cursor:
    """Where an agent's feed was read up to (by a channel, by the hooks), kept across sessions
    in one small file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> int | None:
        try:
            kept = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return None
        value = kept.get("cursor") if isinstance(kept, dict) else None
        return value if isinstance(value, int) and value >= 0 else None

    def keep(self, cursor: int) -> None:
        """Replace the kept cursor in one step (a crash leaves the old one or the new one)."""
        write_json(self.path, {"cursor": cursor})
