"""``relay guard check|install``: a commit of paths another agent reserved is refused.

``check`` asks Relay, for each path (the staged ones, or those given), whether another agent
holds it exclusively in this repository's workspace, and exits 1 listing each one blocked
with its holder, reason and expiry. Relay out of reach, or refusing the token, is one line of
warning and a commit let through, unless ``RELAY_GUARD=strict``. ``install`` writes git's
``pre-commit`` hook (where ``core.hooksPath`` says), keeping a hook already there only when
told to, and then running it after the check.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import typer

from relay_cli._common import API_ERROR, USAGE_ERROR, err, out
from relay_cli.connection import Connection
from relay_cli.hook_http import Refused, Unreachable, Wire
from relay_cli.reserved import acting_agent, held_by_others, in_the_way
from relay_cli.workspace import current_workspace
from relay_client.config import ClientConfig

app = typer.Typer(
    help="The commit guard: refuse a commit of paths another agent reserved.",
    no_args_is_help=True,
)

PATIENCE_SECONDS = 10  # for an answer from Relay, before the commit goes on unchecked
MARK = "# relay guard (relay guard install)"  # the first comment line of the hook it writes
CHAINED = "pre-commit.before-relay"  # the hook that was there, run after the check


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise typer.BadParameter(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def _staged() -> list[str]:
    """The paths the commit would change (added, changed, renamed to, deleted)."""
    listed = _git("diff", "--cached", "--name-only", "-z", "--no-renames")
    return [path for path in listed.split("\0") if path]


@app.command()
def check(
    ctx: typer.Context,
    paths: Annotated[
        list[str] | None, typer.Argument(help="Paths from the root; none: the staged ones.")
    ] = None,
    staged: Annotated[bool, typer.Option("--staged", help="The paths staged for commit.")] = False,
) -> None:
    """Exit 1, listing each path another agent reserved exclusively, if any is to be committed.

    Example: relay guard check --staged
    """
    strict = os.environ.get("RELAY_GUARD", "").lower() == "strict"
    workspace = current_workspace()
    if workspace is None:
        _unchecked("not a repository with a workspace (git config relay.workspace)", strict)
        return
    chosen = _staged() if staged or not paths else list(paths)
    if not chosen:
        return
    conn: Connection = ctx.obj or Connection()
    try:
        config = ClientConfig.resolve(conn.url, token=conn.token, agent_id=conn.agent)
        wire = Wire(config, PATIENCE_SECONDS)
        blocked = held_by_others(wire, workspace, chosen, acting_agent(wire))
    except Refused as exc:
        _unchecked(f"Relay refused: {exc}", strict)
        return
    except (Unreachable, ValueError) as exc:
        _unchecked(f"Relay is out of reach ({exc})", strict)
        return
    for path, held in blocked:
        err.print(in_the_way(path, held), markup=False)
    if blocked:
        err.print(
            "commit refused: message the holder, or wait; git commit --no-verify skips this",
            markup=False,
        )
        raise typer.Exit(API_ERROR)


def _unchecked(why: str, strict: bool) -> None:
    """Say why nothing was checked; under RELAY_GUARD=strict, refuse the commit."""
    if strict:
        err.print(f"relay guard: {why}; commit refused (RELAY_GUARD=strict)", markup=False)
        raise typer.Exit(API_ERROR)
    err.print(f"relay guard: {why}; not checked, commit let through", markup=False)


@app.command()
def install(
    chain: Annotated[
        bool,
        typer.Option("--chain", help="Keep the pre-commit hook already there, run after."),
    ] = False,
) -> None:
    """Install the guard as this repository's git pre-commit hook.

    Example: relay guard install --chain
    """
    hooks = Path(_git("rev-parse", "--git-path", "hooks").strip())
    if not hooks.is_absolute():
        hooks = Path(_git("rev-parse", "--show-toplevel").strip()) / hooks
    hooks.mkdir(parents=True, exist_ok=True)
    hook = hooks / "pre-commit"
    ours = hook.exists() and MARK in hook.read_text(errors="replace")
    if hook.exists() and not ours:
        if not chain:
            err.print(
                f"{hook} is another pre-commit hook: relay guard install --chain keeps it and"
                " runs it after the check",
                markup=False,
            )
            raise typer.Exit(USAGE_ERROR)
        hook.rename(hooks / CHAINED)
    hook.write_text(
        f"#!/bin/sh\n{MARK}\n"
        f'"{sys.executable}" -m relay_cli guard check --staged || exit $?\n'
        f'before="$(dirname "$0")/{CHAINED}"\n'
        'if [ -x "$before" ]; then exec "$before" "$@"; fi\n'
    )
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    kept = f", then {CHAINED}" if (hooks / CHAINED).exists() else ""
    out.print(f"Installed {hook}: relay guard check --staged{kept}", markup=False)
