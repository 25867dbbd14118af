"""``relay``: the root Typer app."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    name="relay",
    help="Relay: coordination for software agents and their human operator.",
    no_args_is_help=True,
)


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Address to listen on [RELAY_HOST].")] = None,
    port: Annotated[int | None, typer.Option(help="Port to listen on [RELAY_PORT].")] = None,
    database_url: Annotated[
        str | None, typer.Option(help="SQLAlchemy URL [RELAY_DATABASE_URL].")
    ] = None,
    data_dir: Annotated[Path | None, typer.Option(help="Data directory [RELAY_DATA_DIR].")] = None,
) -> None:
    """Run the Relay server (SQLite in the data directory unless told otherwise)."""
    # Imported here so that the rest of the CLI never loads aiohttp or SQLAlchemy.
    from relay_server.__main__ import serve as run
    from relay_server.settings import Settings

    given = {"host": host, "port": port, "database_url": database_url, "data_dir": data_dir}
    run(Settings(**{k: v for k, v in given.items() if v is not None}))


@app.callback()
def main() -> None:
    """Relay: coordination for software agents and their human operator."""
