"""``relay interventions list|request-approval|approval|diagnostic|show-diagnostic|action|
add-participant``."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from relay_api import operations as ops
from relay_cli._common import JsonOutput, call, render
from relay_cli.listing import list_command

app = typer.Typer(help="Interventions: diagnostic → approval → remediation.", no_args_is_help=True)

InterventionId = Annotated[str, typer.Argument(help="The intervention (created on first use).")]
ActingAgent = Annotated[str | None, typer.Option("--as", help="Default: the caller.")]


def evidence(value: str) -> str | dict[str, Any]:
    """A JSON object when the text is one, else the text itself."""
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        return value
    return parsed if isinstance(parsed, dict) else value


app.command("list")(
    list_command(
        ops.INTERVENTIONS_LIST,
        columns=("intervention_id", "status", "approval_status", "title", "updated_at"),
        doc="""List interventions, newest first.

Example: relay interventions list""",
    )
)


@app.command("request-approval")
def request_approval(
    ctx: typer.Context,
    intervention_id: InterventionId,
    title: Annotated[str, typer.Option(help="What is proposed, in a line.")],
    reason: Annotated[str, typer.Option(help="Why it is needed.")],
    proposed_action: Annotated[str, typer.Option(help="What will be done.")],
    risk: Annotated[str | None, typer.Option(help="low, medium or high.")] = None,
    agent_id: ActingAgent = None,
    as_json: JsonOutput = False,
) -> None:
    """Ask the operator to approve a remediation.

    Example: relay interventions request-approval inc-7 --title "Restart db" --reason "pool full"
    --proposed-action "systemctl restart postgresql"
    """
    result = call(
        ctx,
        lambda c: c.interventions.request_approval(
            intervention_id,
            title=title,
            reason=reason,
            proposed_action=proposed_action,
            risk=risk,
            agent_id=agent_id,
        ),
    )
    render(result, as_json, headline=f"Approval {result.approval_id} requested")


@app.command()
def approval(
    ctx: typer.Context, intervention_id: InterventionId, as_json: JsonOutput = False
) -> None:
    """Show an intervention's approval request.

    Example: relay interventions approval inc-7
    """
    render(call(ctx, lambda c: c.interventions.approval(intervention_id)), as_json)


@app.command()
def diagnostic(
    ctx: typer.Context,
    intervention_id: InterventionId,
    summary: Annotated[str, typer.Option(help="What was found, in a line.")],
    content: Annotated[str, typer.Option(help="The findings: text, or a JSON object.")],
    severity: Annotated[str | None, typer.Option(help="info, low, medium, high, critical")] = None,
    content_type: Annotated[str | None, typer.Option(help="e.g. text/plain")] = None,
    agent_id: ActingAgent = None,
    as_json: JsonOutput = False,
) -> None:
    """Upload a diagnostic.

    Example: relay interventions diagnostic inc-7 --summary "pool full" --content '{"active": 100}'
    """
    uploaded = call(
        ctx,
        lambda c: c.interventions.diagnostic(
            intervention_id,
            summary=summary,
            content=evidence(content),
            severity=severity,
            content_type=content_type,
            agent_id=agent_id,
        ),
    )
    render(uploaded, as_json, headline=f"Diagnostic {uploaded.diagnostic_id} kept")


@app.command("show-diagnostic")
def show_diagnostic(
    ctx: typer.Context, intervention_id: InterventionId, as_json: JsonOutput = False
) -> None:
    """Show the latest diagnostic.

    Example: relay interventions show-diagnostic inc-7
    """
    render(call(ctx, lambda c: c.interventions.show_diagnostic(intervention_id)), as_json)


@app.command()
def action(
    ctx: typer.Context,
    intervention_id: InterventionId,
    action: Annotated[str, typer.Option(help="What was done.")],
    status: Annotated[str, typer.Option(help="succeeded, failed or partial.")],
    before: Annotated[str, typer.Option(help="Evidence before: text or a JSON object.")],
    after: Annotated[str, typer.Option(help="Evidence after: text or a JSON object.")],
    link: Annotated[str | None, typer.Option(help="Where to see more.")] = None,
    agent_id: ActingAgent = None,
    as_json: JsonOutput = False,
) -> None:
    """Record an approved remediation with its evidence.

    Example: relay interventions action inc-7 --action restart --status succeeded
    --before '{"conn": 100}' --after '{"conn": 12}'
    """
    recorded = call(
        ctx,
        lambda c: c.interventions.action(
            intervention_id,
            action=action,
            status=status,
            evidence_before=evidence(before),
            evidence_after=evidence(after),
            link=link,
            agent_id=agent_id,
        ),
    )
    render(recorded, as_json, headline=f"Remediation {recorded.status} recorded")


@app.command("add-participant")
def add_participant(
    ctx: typer.Context,
    intervention_id: InterventionId,
    agent: Annotated[str, typer.Argument(help="The agent to add.")],
    as_json: JsonOutput = False,
) -> None:
    """Let another agent work on an intervention beside the agent that created it (operator).

    Example: relay interventions add-participant inc-7 db-fixer
    """
    updated = call(ctx, lambda c: c.interventions.add_participant(intervention_id, agent))
    render(updated, as_json, headline=f"{agent} may now work on {intervention_id}")
