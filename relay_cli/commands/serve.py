"""``relay serve``: the server, with a flag for every setting but a secret.

The flags are derived from the server's settings model (``relay_server.settings.options``), as
``python -m relay_server``'s are; the server itself is imported only when it runs.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

import pydantic
import typer

from relay_server.settings import Option, options, settings_from


def serve(**given: Any) -> None:
    """Run the Relay server (SQLite in the data directory unless told otherwise).

    Every flag is also a RELAY_* environment variable; tokens are variables only.

    Example: relay serve --port 8765
    """
    from relay_server.serving import serve as run

    try:
        settings = settings_from(given)
    except pydantic.ValidationError as exc:
        typer.echo(f"Error: {exc}", err=True)
        raise typer.Exit(2) from None
    run(settings)


def _parameter(option: Option) -> inspect.Parameter:
    flag = f"{option.flag}/--no-{option.flag[2:]}" if option.kind is bool else option.flag
    annotation = Annotated[option.kind | None, typer.Option(flag, help=option.help)]  # type: ignore[name-defined]
    return inspect.Parameter(
        option.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation
    )


_parameters = [_parameter(option) for option in options() if not option.secret]
serve.__signature__ = inspect.Signature(_parameters)  # type: ignore[attr-defined]
serve.__annotations__ = {p.name: p.annotation for p in _parameters} | {"return": None}
