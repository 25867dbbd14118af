"""``relay hook claude-code|codex``: Relay in a coding agent's hooks (``relay_cli.hook_answers``
says what each event is answered). A hook command as ``relay connect`` writes it never comes
here: ``relay_cli.entry`` reads its options without Typer; ``--help``, and a command line that
reader does not know, do."""

from __future__ import annotations

from typing import Annotated

import typer

from relay_cli.connection import Connection
from relay_cli.hook_answers import DEFAULT_TIMEOUT, TIMEOUTS, Source, run

app = typer.Typer(
    help="Permission prompts of coding agents, answered by the operator (their hook command).",
    no_args_is_help=True,
)

Timeout = Annotated[
    int,
    typer.Option(
        min=TIMEOUTS.start,
        max=TIMEOUTS.stop - 1,
        help="Seconds to wait for the decision; then nothing is printed and the agent asks in"
        " its terminal. Keep it below the hook's timeout in the agent's settings.",
    ),
]
ReserveOnEdit = Annotated[
    bool,
    typer.Option(
        "--reserve-on-edit",
        help="At PreToolUse, reserve (shared) each file the agent edits that nobody holds.",
    ),
]


def _run(ctx: typer.Context, source: Source, timeout: int, reserve_on_edit: bool) -> None:
    run(ctx.obj or Connection(), source, timeout, reserve_on_edit)


@app.command("claude-code")
def claude_code(
    ctx: typer.Context, timeout: Timeout = DEFAULT_TIMEOUT, reserve_on_edit: ReserveOnEdit = False
) -> None:
    """Claude Code's hook: at PermissionRequest the operator allows or denies the tool call;
    at PreToolUse an edit of a file another agent reserved is denied; at Stop, SessionStart
    and UserPromptSubmit the session is handed what waits in Relay.

    Example: relay hook claude-code --timeout 55
    """
    _run(ctx, "claude-code", timeout, reserve_on_edit)


@app.command("codex")
def codex(
    ctx: typer.Context, timeout: Timeout = DEFAULT_TIMEOUT, reserve_on_edit: ReserveOnEdit = False
) -> None:
    """Codex's hook: at PermissionRequest the operator allows or denies the command; at
    PreToolUse a patch to a file another agent reserved is denied; at Stop, SessionStart and
    UserPromptSubmit the session is handed what waits in Relay.

    Example: relay hook codex --timeout 55
    """
    _run(ctx, "codex", timeout, reserve_on_edit)
