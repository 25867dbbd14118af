"""``relay``: its global options and where each command lives.

A command's module is imported only when that command runs (``build``): ``relay hook`` runs on
every tool call of a coding agent, and neither it nor ``relay tasks list`` should import every
other command (and the server's settings) first. Importing this module never loads aiohttp or
SQLAlchemy: ``relay serve`` imports the server only when it runs.
"""

from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Annotated

import typer

from relay_api import __version__
from relay_cli.connection import Connection

HELP = (
    "Relay: coordination for software agents and their human operator.\n\n"
    "On the server's machine no flags are needed: the operator token is found in the server's "
    "data directory. Example: relay approvals list --status pending"
)
# The commands as `relay --help` lists them: a name, its module, the function there.
COMMANDS = [
    ("inbox", "relay_cli.commands.agents", "inbox"),
    ("notify", "relay_cli.commands.notify", "notify"),
    ("search", "relay_cli.commands.search", "search"),
    ("reserve", "relay_cli.commands.reservations", "reserve"),
    ("release", "relay_cli.commands.reservations", "release"),
    ("status", "relay_cli.commands.server", "status"),
    ("health", "relay_cli.commands.server", "health"),
    ("whoami", "relay_cli.commands.server", "whoami"),
    ("serve", "relay_cli.commands.serve", "serve"),
    ("backup", "relay_cli.commands.backup", "backup"),
    ("mcp", "relay_cli.commands.mcp", "mcp"),
    ("connect", "relay_cli.commands.connect", "connect"),
    ("disconnect", "relay_cli.commands.connect", "disconnect"),
    ("doctor", "relay_cli.commands.connect", "doctor"),
]
# The groups, one a resource: a name and the module whose `app` holds its commands.
GROUPS = [
    ("agents", "relay_cli.commands.agents"),
    ("messages", "relay_cli.commands.messages"),
    ("rooms", "relay_cli.commands.rooms"),
    ("spaces", "relay_cli.commands.spaces"),
    ("tasks", "relay_cli.commands.tasks"),
    ("actions", "relay_cli.commands.actions"),
    ("notifications", "relay_cli.commands.notify"),
    ("enroll", "relay_cli.commands.enroll"),
    ("approvals", "relay_cli.commands.approvals"),
    ("policies", "relay_cli.commands.policies"),
    ("webhooks", "relay_cli.commands.webhooks"),
    ("reservations", "relay_cli.commands.reservations"),
    ("a2a", "relay_cli.commands.a2a"),
    ("hook", "relay_cli.commands.hook"),
    ("guard", "relay_cli.commands.guard"),
    ("interventions", "relay_cli.commands.interventions"),
    ("events", "relay_cli.commands.events"),
]
NAMES = frozenset(name for name, *_ in [*COMMANDS, *GROUPS])
# Commands that run the server: in the agent's install (no server extra) each says, in one line,
# how to add it (relay_cli.install.without_the_server).
SERVER_COMMANDS = frozenset({"serve"})
# The global options that take a value: what follows them is no command's name.
VALUED = frozenset({"--url", "--token", "--agent"})


def _show_version(asked: bool) -> None:
    if asked:
        typer.echo(f"relay {__version__}")
        raise typer.Exit()


def options(
    ctx: typer.Context,
    url: Annotated[
        str | None, typer.Option(help="Server URL [RELAY_URL; default http://127.0.0.1:8765].")
    ] = None,
    token: Annotated[
        str | None, typer.Option(help="Bearer token [RELAY_TOKEN; default: the local operator's].")
    ] = None,
    agent: Annotated[
        str | None, typer.Option(help="Act as this agent (X-Agent-ID) [RELAY_AGENT_ID].")
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Show Relay's version."
        ),
    ] = False,
) -> None:
    """Relay: coordination for software agents and their human operator."""
    ctx.obj = Connection(url=url, token=token, agent=agent)


def build(only: str | None = None) -> typer.Typer:
    """The ``relay`` app with every command, or with ``only`` the one named (``""``: none)."""
    app = typer.Typer(name="relay", help=HELP, no_args_is_help=True, rich_markup_mode=None)
    app.callback()(options)
    for name, module, function in COMMANDS:
        if only is None or only == name:
            _add_command(app, name, module, function)
    for name, module in GROUPS:
        if only is None or only == name:
            app.add_typer(importlib.import_module(module).app, name=name)
    return app


def _add_command(app: typer.Typer, name: str, module: str, function: str) -> None:
    """Command ``name``; for a server command in an install without the server, a stand-in
    that takes whatever it is given (the flags the command would have) and says how to add
    it."""
    try:
        found = getattr(importlib.import_module(module), function)
    except ImportError as exc:
        if name not in SERVER_COMMANDS:
            raise
        anything = {"ignore_unknown_options": True, "allow_extra_args": True}
        app.command(name, context_settings=anything)(_stand_in(name, exc))
        return
    app.command(name)(found)


def _stand_in(name: str, missing: ImportError) -> Callable[..., None]:
    from relay_cli.install import without_the_server

    said = without_the_server(name, missing)

    def stand_in() -> None:
        typer.echo(f"Error: {said}", err=True)
        raise typer.Exit(2)

    stand_in.__doc__ = f"Not in this install: {said}"
    return stand_in


def named(args: Sequence[str]) -> str | None:
    """The command ``args`` run: the first word that is no global option or its value."""
    after_option = False
    for arg in args:
        if after_option:
            after_option = False
        elif arg in VALUED:
            after_option = True
        elif not arg.startswith("-"):
            return arg
    return None


def run() -> None:
    """The ``relay`` command: only the command named is imported; ``--help``, an unknown word
    or none loads them all, so that the help lists every one."""
    args = sys.argv[1:]
    word = named(args)
    if word is None and args and all(a == "--version" for a in args):
        word = ""  # the version needs no command
    # A command's imports make tens of thousands of objects that live as long as it does; the
    # collector walking them over and over while they load cost about 30 ms of each start.
    # None is collected until they are in; then they are set aside for good (``gc.freeze``).
    gc.disable()
    try:
        app = build(word if word in NAMES or word == "" else None)
    finally:
        gc.freeze()
        gc.enable()
    app(prog_name="relay")
