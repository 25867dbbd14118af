"""``relay backup``: an online, consistent copy of the server's SQLite database."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from relay_cli._common import API_ERROR, err, out
from relay_core.paths import private_file


def backup(
    path: Annotated[Path, typer.Argument(help="The file to write; it must not exist.")],
) -> None:
    """Copy the server's SQLite database to PATH while the server runs (SQLite's backup API:
    one consistent moment, however busy the server). The copy is readable by you only (0600).

    It finds the database as the server does (RELAY_DATA_DIR, RELAY_DATABASE_URL). To restore:
    stop the server and put the copy in place of relay.db (docs/operations.md). A PostgreSQL
    database is backed up with pg_dump.

    Example: relay backup relay-backup.db
    """
    try:
        from relay_core.storage.sqlite import SqliteStorage
        from relay_core.storage.sqlite.driver import sqlite3
        from relay_server.settings import Settings
    except ImportError as exc:  # the agent's install: no server here to back up
        from relay_cli.install import without_the_server

        _refuse(without_the_server("backup", exc))

    url = Settings().resolved_database_url
    if not url.startswith("sqlite"):
        _refuse("the database is not a SQLite file: back PostgreSQL up with pg_dump")
    source = SqliteStorage.file_of(url)
    if not source.exists():
        _refuse(f"no database at {source}: set RELAY_DATA_DIR to the server's data directory")
    if path.exists():
        _refuse(f"{path} exists; a backup never overwrites a file")
    if not path.parent.is_dir():
        _refuse(f"no folder {path.parent}: make it first")
    draft = path.with_name(f".{path.name}.partial")
    try:
        _copy(source, draft)
        os.replace(draft, path)
    except (OSError, sqlite3.Error) as exc:
        draft.unlink(missing_ok=True)
        _refuse(f"could not write {path}: {exc}")
    out.print(f"backed up {source} to {path} ({path.stat().st_size} bytes)", markup=False)


def _copy(source: Path, draft: Path) -> None:
    from relay_core.storage.sqlite.driver import sqlite3

    private_file(draft)  # the copy holds every message: its owner's only, whatever the umask
    with sqlite3.connect(source) as live, sqlite3.connect(draft) as copy:
        live.backup(copy)  # read under one transaction: the copy is one committed moment
    live.close()
    copy.close()


def _refuse(message: str) -> NoReturn:
    """One line on stderr and exit 1: the backup was not made."""
    err.print(f"error: {message}", markup=False)
    raise typer.Exit(API_ERROR)
