"""Where Relay keeps its files on this machine (shared by the server and the CLI)."""

from __future__ import annotations

from pathlib import Path

from platformdirs import user_data_dir

OPERATOR_TOKEN_FILE = "operator_token"
DATABASE_FILE = "relay.db"


def default_data_dir() -> Path:
    """The per-user data directory (``~/.local/share/relay`` on Linux)."""
    return Path(user_data_dir("relay", appauthor=False))


def operator_token_path(data_dir: Path) -> Path:
    """The file holding the generated operator token (mode 0600)."""
    return data_dir / OPERATOR_TOKEN_FILE
