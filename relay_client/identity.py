"""The identity ``enroll_and_wait`` keeps between runs of an agent: the enrollment it is waiting
on, then its token, in one file per server and agent id under the user's config directory
(mode 0600: the claim and the token are secrets)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

from platformdirs import user_config_dir

from relay_client.kept_files import file_name, server_folder, write_json


class Identity(NamedTuple):
    """What is kept: an enrollment waited on (``enroll_id`` and ``claim``), or a ``token``."""

    enroll_id: int | None = None
    claim: str | None = None
    token: str | None = None
    approval_id: int | None = None


def identity_path(url: str, agent_id: str) -> Path:
    """``~/.config/relay/identities/<host>-<port>/<agent_id>.json`` (per platform)."""
    root = Path(user_config_dir("relay", appauthor=False))
    return root / "identities" / server_folder(url) / f"{file_name(agent_id)}.json"


def load(path: Path) -> Identity | None:
    """The identity kept at ``path``, if there is a readable one."""
    try:
        kept = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict):
        return None
    fields = {k: kept.get(k) for k in ("enroll_id", "claim", "token", "approval_id")}
    return Identity(**fields)


def keep(path: Path, identity: Identity) -> None:
    """Write ``identity`` to ``path`` (0600, in a 0700 directory), replacing what was there
    in one step."""
    write_json(path, {k: v for k, v in identity._asdict().items() if v is not None})


def forget(path: Path) -> None:
    """Remove the identity kept at ``path``, if any."""
    path.unlink(missing_ok=True)
