"""``relay enroll request|status``."""

from __future__ import annotations

from typing import Annotated

import typer

from relay_cli._common import JsonOutput, call, render

app = typer.Typer(help="Enrollment: a new agent asks to join.", no_args_is_help=True)


@app.command()
def request(
    ctx: typer.Context,
    agent_id: Annotated[str, typer.Argument(help="The id to join as.")],
    name: Annotated[str | None, typer.Option(help="Display name.")] = None,
    kind: Annotated[str | None, typer.Option(help="What kind of agent (e.g. linter).")] = None,
    reason: Annotated[str | None, typer.Option(help="Why, for the operator.")] = None,
    capability: Annotated[
        list[str] | None, typer.Option("--capability", "-c", help="A capability (repeatable).")
    ] = None,
    as_json: JsonOutput = False,
) -> None:
    """Ask to join; keep the claim it prints to poll with.

    Example: relay enroll request linter --reason "new lint bot"
    """
    created = call(
        ctx,
        lambda c: c.enroll.request(
            agent_id, name=name, kind=kind, reason=reason, capabilities=capability
        ),
    )
    render(
        created,
        as_json,
        headline=f"Enrollment {created.enroll_id} pending approval {created.approval_id}; "
        f"claim: {created.claim}",
    )


@app.command()
def status(
    ctx: typer.Context,
    enroll_id: Annotated[int, typer.Argument(help="The enrollment.")],
    claim: Annotated[str, typer.Option(help="The claim printed by 'enroll request'.")],
    as_json: JsonOutput = False,
) -> None:
    """Poll an enrollment; after approval the first poll shows the agent's token.

    Example: relay enroll status 4 --claim rly_claim_...
    """
    state = call(ctx, lambda c: c.enroll.status(enroll_id, claim))
    extra = f"; token: {state.token} (shown once)" if state.token else ""
    render(state, as_json, headline=f"Enrollment {state.enroll_id} is {state.status}{extra}")
