"""``python -m relay_server [--port P] [--workers N] ...``: run the server; every setting but a
secret is a flag (``--help`` lists them with their ``RELAY_*`` variables)."""

from __future__ import annotations

import argparse

import pydantic

from relay_server.serving import serve
from relay_server.settings import options, settings_from


def main(argv: list[str] | None = None) -> None:
    """Parse flags over the environment's settings and serve."""
    parser = argparse.ArgumentParser(prog="python -m relay_server", description=__doc__)
    for option in options():
        if option.secret:
            continue
        if option.kind is bool:
            action = argparse.BooleanOptionalAction
            parser.add_argument(option.flag, dest=option.name, help=option.help, action=action)
        else:
            parser.add_argument(option.flag, dest=option.name, help=option.help)
    args = parser.parse_args(argv)
    try:
        settings = settings_from(vars(args))
    except pydantic.ValidationError as exc:
        parser.error(str(exc))
    serve(settings)


if __name__ == "__main__":
    main()
