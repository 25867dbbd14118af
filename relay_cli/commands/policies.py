"""``relay policies list|show|create|replace|disable|enable|simulate``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import typer

from relay_api import operations as ops
from relay_api.models import QuestionOption
from relay_cli._common import JsonOutput, call, parse_json, render
from relay_cli.listing import list_command

app = typer.Typer(
    help="Policies: the operator's rules that decide routine approvals as they come.",
    no_args_is_help=True,
)

PolicyId = Annotated[int, typer.Argument(help="The policy.")]
Name = Annotated[str, typer.Argument(help="What the policy is for, in a few words.")]
Decision = Annotated[
    str,
    typer.Option(
        help="approve, reject, answer (a question, with --answer) or ask (the operator: with"
        " --remind-after and --escalate-after)."
    ),
]
AnswerOption = Annotated[
    list[str] | None,
    typer.Option("--answer", help="With --decision answer: the option's label (repeat it)."),
]
RemindAfter = Annotated[
    int | None, typer.Option(help="With --decision ask: seconds before the operator is reminded.")
]
EscalateAfter = Annotated[
    int | None,
    typer.Option(help="With --decision ask: seconds before each next step of the escalation."),
]
MatchOption = Annotated[
    str | None,
    typer.Option(
        "--match",
        help='What it decides, as JSON or @file.json: {"kinds": ["request"], "agents": ["ci-*"],'
        ' "title": "^Read:", "payload": {"/tool_input/command": {"regex": "^rm "}}, "hours": '
        '{"from": "22:00", "to": "06:00", "timezone": "Europe/Paris"}}; none: every approval.',
    ),
]
Note = Annotated[str | None, typer.Option(help="Kept on each approval it decides.")]
Priority = Annotated[int | None, typer.Option(help="Higher is tried first (default 0).")]
LimitOption = Annotated[
    str | None,
    typer.Option("--limit", help="At most COUNT/SECONDS decisions per agent, e.g. 5/3600."),
]
Disabled = Annotated[bool, typer.Option("--disabled", help="Create it disabled.")]


def match_of(value: str | None) -> dict[str, Any] | None:
    """``--match``: JSON, or ``@path`` to a file of JSON."""
    if value is not None and value.startswith("@"):
        try:
            value = Path(value[1:]).read_text()
        except OSError as exc:
            problem = f"cannot read {value[1:]}: {exc.strerror}"
            raise typer.BadParameter(problem, param_hint="--match") from None
    found = parse_json(value, "--match")
    if found is not None and not isinstance(found, dict):
        raise typer.BadParameter("a JSON object", param_hint="--match")
    return found


def limit_of(value: str | None) -> dict[str, int] | None:
    """``--limit 5/3600``: five decisions per agent in any hour."""
    if value is None:
        return None
    parsed = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", value)
    if parsed is None:
        raise typer.BadParameter("COUNT/SECONDS, e.g. 5/3600", param_hint="--limit")
    return {"count": int(parsed[1]), "per_seconds": int(parsed[2])}


def rule(
    match: str | None,
    note: str | None,
    priority: int | None,
    limit: str | None,
    disabled: bool,
    answer: list[str] | None,
    remind_after: int | None,
    escalate_after: int | None,
) -> dict[str, Any]:
    """A policy's options as the SDK takes them (create and replace take the same)."""
    return {
        "match": match_of(match),
        "note": note,
        "priority": priority,
        "enabled": False if disabled else None,
        "limit": limit_of(limit),
        "answer": answer or None,
        "remind_after": remind_after,
        "escalate_after": escalate_after,
    }


app.command("list")(
    list_command(
        ops.POLICIES_LIST,
        columns=("policy_id", "name", "decision", "priority", "enabled", "version"),
        doc="""List policies, oldest first.

Example: relay policies list""",
    )
)


@app.command()
def show(
    ctx: typer.Context,
    policy_id: PolicyId,
    version: Annotated[int | None, typer.Option(help="An earlier version.")] = None,
    as_json: JsonOutput = False,
) -> None:
    """Show a policy (or one of its earlier versions).

    Example: relay policies show 1 --version 1
    """
    render(call(ctx, lambda c: c.policies.show(policy_id, version=version)), as_json)


@app.command()
def create(
    ctx: typer.Context,
    name: Name,
    decision: Decision,
    match: MatchOption = None,
    note: Note = None,
    priority: Priority = None,
    limit: LimitOption = None,
    disabled: Disabled = False,
    answer: AnswerOption = None,
    remind_after: RemindAfter = None,
    escalate_after: EscalateAfter = None,
    as_json: JsonOutput = False,
) -> None:
    """Create a policy: from now on it decides the approvals it matches.

    Example: relay policies create "Reads pass" --decision approve --match '{"title": "^Read: "}'
    Example: relay policies create "Prod waits" --decision ask --match '{"title": "prod"}'
        --remind-after 300
    Example: relay policies create "Our database" --decision answer --answer Postgres
        --match '{"title": "[Dd]atabase"}'
    """
    given = rule(match, note, priority, limit, disabled, answer, remind_after, escalate_after)
    created = call(ctx, lambda c: c.policies.create(name, decision, **given))
    render(created, as_json, headline=f"Policy {created.policy_id} created ({created.decision})")


@app.command()
def replace(
    ctx: typer.Context,
    policy_id: PolicyId,
    name: Name,
    decision: Decision,
    match: MatchOption = None,
    note: Note = None,
    priority: Priority = None,
    limit: LimitOption = None,
    disabled: Disabled = False,
    answer: AnswerOption = None,
    remind_after: RemindAfter = None,
    escalate_after: EscalateAfter = None,
    as_json: JsonOutput = False,
) -> None:
    """Replace a policy whole (its next version; earlier ones stay readable).

    Example: relay policies replace 1 "Reads pass" --decision approve --match '{"title": "^Read"}'
    """
    given = rule(match, note, priority, limit, disabled, answer, remind_after, escalate_after)
    replaced = call(ctx, lambda c: c.policies.replace(policy_id, name, decision, **given))
    render(replaced, as_json, headline=f"Policy {policy_id} is at version {replaced.version}")


@app.command()
def disable(ctx: typer.Context, policy_id: PolicyId, as_json: JsonOutput = False) -> None:
    """Stop a policy deciding.

    Example: relay policies disable 1
    """
    render(call(ctx, lambda c: c.policies.disable(policy_id)), as_json)


@app.command()
def enable(ctx: typer.Context, policy_id: PolicyId, as_json: JsonOutput = False) -> None:
    """Let a policy decide again.

    Example: relay policies enable 1
    """
    render(call(ctx, lambda c: c.policies.enable(policy_id)), as_json)


@app.command()
def simulate(
    ctx: typer.Context,
    agent: Annotated[str, typer.Argument(help="The agent that would ask.")],
    title: Annotated[str, typer.Argument(help="The approval's title.")],
    kind: Annotated[
        str | None, typer.Option(help="request, question, enrollment or intervention.")
    ] = None,
    payload: Annotated[str | None, typer.Option(help="Its payload, as JSON.")] = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-o", help="A question's option (repeat it)."),
    ] = None,
    multiple: Annotated[
        bool, typer.Option("--multiple", help="The question takes several options.")
    ] = False,
    as_json: JsonOutput = False,
) -> None:
    """Say what the policies would do with an approval (approve, reject, answer or ask);
    creates nothing.

    Example: relay policies simulate deployer "Bash: ls" --payload '{"tool_input": {}}'
    Example: relay policies simulate builder "Which database?" --kind question -o Postgres
        -o SQLite
    """
    given = parse_json(payload, "--payload")
    options = [QuestionOption(label=label) for label in option] if option else None
    verdict = call(
        ctx,
        lambda c: c.policies.simulate(
            agent, title, kind=kind, payload=given, options=options, multiple=multiple
        ),
    )
    said = f"{verdict.decision}: {verdict.reason}"
    if verdict.answer is not None:
        said += f"\nanswer: {', '.join(verdict.answer)}"
    render(verdict, as_json, headline=said)
