"""``python -m relay_server [--host H] [--port P] [--workers N]``: run the server."""

from __future__ import annotations

import argparse
from typing import Any

from relay_server.serving import serve
from relay_server.settings import Settings


def main(argv: list[str] | None = None) -> None:
    """Parse flags over the environment's settings and serve."""
    parser = argparse.ArgumentParser(prog="python -m relay_server", description=__doc__)
    parser.add_argument("--host", help="address to listen on (RELAY_HOST, default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port to listen on (RELAY_PORT, default 8765)")
    parser.add_argument("--database-url", help="SQLAlchemy URL (RELAY_DATABASE_URL)")
    parser.add_argument("--data-dir", help="data directory (RELAY_DATA_DIR)")
    parser.add_argument("--workers", type=int, help="processes (RELAY_WORKERS; PostgreSQL only)")
    args = parser.parse_args(argv)
    overrides: dict[str, Any] = {k: v for k, v in vars(args).items() if v is not None}
    serve(Settings(**overrides))


if __name__ == "__main__":
    main()
