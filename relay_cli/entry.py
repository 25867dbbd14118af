"""The ``relay`` command's first step.

``relay hook claude-code|codex`` runs on every tool call, edit, prompt and stop of a coding
agent. Written as ``relay connect`` writes it (global ``--url``, ``--token``, ``--agent``; the
hook's ``--timeout`` and ``--reserve-on-edit``), it is answered here without loading Typer and
the CLI around it, about half of the hook's start (docs/performance.md). Every other command
line, a hook's ``--help`` and anything this reader does not know included, goes to the whole
CLI (``relay_cli.root``), which parses it and says what is wrong.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

GLOBAL = ("--url", "--token", "--agent")  # the root's options with a value: relay_cli.root.VALUED
HOSTS = ("claude-code", "codex")  # relay_cli.hook_answers.Source


def run() -> None:
    """The ``relay`` command."""
    hook = hook_call(sys.argv[1:])
    if hook is None:
        from relay_cli.root import run as whole_cli

        whole_cli()
        return
    from relay_cli.hook_answers import run as answer

    answer(**hook)


def hook_call(args: Sequence[str]) -> dict[str, Any] | None:
    """``relay_cli.hook_answers.run``'s arguments for a hook command line; None for any other
    (or one with an option this does not know, a value missing or out of range)."""
    given: dict[str, str] = {}
    words = _options(args, given)
    if words is None or len(words) < 2 or words[0] != "hook" or words[1] not in HOSTS:
        return None  # before any import: every other command pays nothing for this
    from relay_cli.connection import Connection
    from relay_cli.hook_answers import DEFAULT_TIMEOUT, TIMEOUTS

    hook: dict[str, Any] = {"source": words[1], "timeout": DEFAULT_TIMEOUT}
    rest = words[2:]
    while rest:
        word, rest = rest[0], rest[1:]
        if word == "--reserve-on-edit":
            hook["reserve_on_edit"] = True
            continue
        name, _, value = word.partition("=")
        if name != "--timeout":
            return None
        if not value:
            if not rest:
                return None
            value, rest = rest[0], rest[1:]
        if not value.isdigit() or int(value) not in TIMEOUTS:
            return None
        hook["timeout"] = int(value)
    connection = Connection(**{name.lstrip("-"): value for name, value in given.items()})
    return {"conn": connection, **hook}


def _options(args: Sequence[str], given: dict[str, str]) -> list[str] | None:
    """The words after the global options, each option's value put in ``given``; None when
    one is given twice or without its value."""
    at = 0
    while at < len(args) and args[at].startswith("--"):
        name, equals, value = args[at].partition("=")
        if name not in GLOBAL or name in given:
            return None
        if not equals:
            at += 1
            if at == len(args):
                return None
            value = args[at]
        given[name] = value
        at += 1
    return list(args[at:])
