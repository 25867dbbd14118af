"""Where Relay keeps its files on this machine (shared by the server and the CLI)."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_data_dir

OPERATOR_TOKEN_FILE = "operator_token"
# What webhook secrets are sealed under when there is no operator token (RELAY_AUTH=none).
SEAL_KEY_FILE = "seal_key"
DATABASE_FILE = "relay.db"


def default_data_dir() -> Path:
    """The per-user data directory: ``~/.local/share/relay`` on Linux,
    ``~/Library/Application Support/relay`` on macOS."""
    return Path(user_data_dir("relay", appauthor=False))


def operator_token_path(data_dir: Path) -> Path:
    """The file holding the generated operator token (mode 0600)."""
    return data_dir / OPERATOR_TOKEN_FILE


def seal_key_path(data_dir: Path) -> Path:
    """The file holding the generated seal key (mode 0600)."""
    return data_dir / SEAL_KEY_FILE


def private_dir(path: Path) -> None:
    """Make the directory ``path`` (and its parents) if missing, the one made readable by its
    owner only (0700) whatever the umask."""
    if not path.is_dir():
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.chmod(0o700)


def private_file(path: Path) -> None:
    """Make the file ``path`` if missing, and leave it readable by its owner only (0600)
    whatever the umask: SQLite gives its WAL and shared-memory files the database's mode, so
    they are private too. A file of an earlier version, made 0644, is tightened."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if os.fstat(fd).st_uid == os.getuid():
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
