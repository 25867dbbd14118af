"""``relay approvals list|show|request|approve|reject``."""

from __future__ import annotations

from typing import Annotated

import typer

from relay_api import operations as ops
from relay_api.models import Approval
from relay_api.prompts import command_of, with_command
from relay_cli._common import (
    JsonOutput,
    ago,
    call,
    parse_json,
    render,
)
from relay_cli.listing import list_command
from relay_client import RelayClient

app = typer.Typer(help="Approvals: the operator's queue.", no_args_is_help=True)

ApprovalId = Annotated[int, typer.Argument(help="The approval.")]
Note = Annotated[str | None, typer.Option(help="A note kept with the decision.")]


app.command("list")(
    list_command(
        ops.APPROVALS_LIST,
        columns=("approval_id", "kind", "status", "title", "requested_by", "created_at"),
        doc="""List approvals, newest first.

Example: relay approvals list --status pending --all""",
    )
)


@app.command()
def show(
    ctx: typer.Context,
    approval_id: ApprovalId,
    wait: Annotated[
        float | None, typer.Option(help="Wait up to this many seconds (60 at most) for a decision.")
    ] = None,
    as_json: JsonOutput = False,
) -> None:
    """Show one approval (with --wait, once it is decided).

    Example: relay approvals show 12 --wait 30
    """
    approval = call(ctx, lambda c: c.approvals.show(approval_id, wait=wait))
    render(approval, as_json, lead=_commands(approval) or None)


def _commands(approval: Approval) -> dict[str, str]:
    """The command asked, and the one approved where the operator changed it."""
    shown = {
        "command": command_of(approval.payload),
        "approved command": command_of(approval.approved_payload),
    }
    return {name: command for name, command in shown.items() if command is not None}


@app.command()
def request(
    ctx: typer.Context,
    title: Annotated[str, typer.Argument(help="What is to be approved, in a line.")],
    detail: Annotated[str | None, typer.Option(help="More words for the operator.")] = None,
    payload: Annotated[
        str | None, typer.Option(help="What is to be approved, as a JSON object.")
    ] = None,
    expires_in: Annotated[
        int | None, typer.Option(help="Seconds until it expires unanswered (a week at most).")
    ] = None,
    as_json: JsonOutput = False,
) -> None:
    """Ask the operator to approve something, as an agent (--agent, or an agent's token).

    Example: relay --agent deployer approvals request "Deploy build 7" --expires-in 600
    """
    body = parse_json(payload, "--payload")
    asked = call(
        ctx,
        lambda c: c.approvals.request(title, detail=detail, payload=body, expires_in=expires_in),
    )
    render(asked, as_json, headline=f"Approval {asked.approval_id} requested: {asked.status}")


@app.command()
def approve(
    ctx: typer.Context,
    approval_id: ApprovalId,
    note: Note = None,
    payload: Annotated[
        str | None,
        typer.Option(help="Approve an agent's request changed: its payload as you approve it."),
    ] = None,
    command: Annotated[
        str | None,
        typer.Option(help="Approve a coding agent's request to run a command with this one."),
    ] = None,
    as_json: JsonOutput = False,
) -> None:
    """Approve a pending approval, as asked or changed.

    Example: relay approvals approve 12 --command "npm test -- --runInBand"
    """
    if payload is not None and command is not None:
        raise typer.BadParameter("give --payload or --command, not both")
    changed = parse_json(payload, "--payload")

    def decide(client: RelayClient) -> Approval:
        body = changed
        if command is not None:
            body = with_command(client.approvals.show(approval_id).payload, command)
        return client.approvals.approve(approval_id, note=note, payload=body)

    decided = call(ctx, decide)
    headline = _outcome(decided, "Approved")
    approved = command_of(decided.approved_payload)
    if decided.changed and approved is not None:
        headline += f"\nchanged: it runs {approved}"
    render(decided, as_json, headline=headline)


@app.command()
def reject(
    ctx: typer.Context, approval_id: ApprovalId, note: Note = None, as_json: JsonOutput = False
) -> None:
    """Reject a pending approval.

    Example: relay approvals reject 12 --note "not during the freeze"
    """
    decided = call(ctx, lambda c: c.approvals.reject(approval_id, note=note))
    render(decided, as_json, headline=_outcome(decided, "Rejected"))


@app.command()
def withdraw(
    ctx: typer.Context,
    approval_id: ApprovalId,
    reason: Annotated[
        str | None, typer.Option(help="Why it no longer stands; shown on every card.")
    ] = None,
    as_json: JsonOutput = False,
) -> None:
    """Withdraw a pending request you asked, as its agent (nobody waits for the answer).

    Example: relay --agent builder approvals withdraw 12 --reason "done another way"
    """
    withdrawn = call(ctx, lambda c: c.approvals.withdraw(approval_id, reason=reason))
    render(withdrawn, as_json, headline=_outcome(withdrawn, "Withdrew"))


def _outcome(decided: Approval, verb: str) -> str:
    """What the decision did, or that it did nothing: the approval was already so decided."""
    if decided.changed is not False:
        return f"{verb} {decided.approval_id}: {decided.title}"
    when = f" {ago(decided.decided_at)}" if decided.decided_at else ""
    note = f" (note: {decided.note})" if decided.note else ""
    by = f" by {decided.decided_by}" if decided.decided_by else ""
    return (
        f"approval {decided.approval_id} was already {decided.status}{by}{when}{note}; "
        "nothing changed"
    )
