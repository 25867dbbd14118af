"""``python -m relay_server [--host H] [--port P]``: run the server."""

from __future__ import annotations

import argparse
import logging
import sys

from aiohttp import web

from relay_core import __version__
from relay_core.paths import operator_token_path
from relay_server.app import create_app
from relay_server.middleware import AccessLogger
from relay_server.settings import Settings


def serve(settings: Settings) -> None:
    """Run until SIGINT/SIGTERM, then finish in-flight requests and close cleanly."""
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    logging.getLogger("alembic").setLevel(logging.WARNING)
    where = (
        "from RELAY_OPERATOR_TOKEN"
        if settings.operator_token is not None
        else f"in {operator_token_path(settings.data_dir)}"
    )
    print(
        f"Relay {__version__} on http://{settings.host}:{settings.port} "
        f"(database {settings.resolved_database_url}; operator token {where})",
        file=sys.stderr,
        flush=True,
    )
    web.run_app(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        access_log_class=AccessLogger,
        access_log=logging.getLogger("relay.access"),
        shutdown_timeout=settings.shutdown_timeout,
        print=None,
    )


def main(argv: list[str] | None = None) -> None:
    """Parse flags over the environment's settings and serve."""
    parser = argparse.ArgumentParser(prog="python -m relay_server", description=__doc__)
    parser.add_argument("--host", help="address to listen on (RELAY_HOST, default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port to listen on (RELAY_PORT, default 8765)")
    parser.add_argument("--database-url", help="SQLAlchemy URL (RELAY_DATABASE_URL)")
    parser.add_argument("--data-dir", help="data directory (RELAY_DATA_DIR)")
    args = parser.parse_args(argv)
    overrides = {k: v for k, v in vars(args).items() if v is not None}
    serve(Settings(**overrides))


if __name__ == "__main__":
    main()
