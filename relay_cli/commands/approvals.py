"""``relay approvals list|show|request|ask|approve|reject|answer|withdraw``."""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import Annotated

import typer

from relay_api import operations as ops
from relay_api.models import Approval, PolicyLimit, RememberScope
from relay_api.prompts import command_of
from relay_cli._common import (
    API_ERROR,
    USAGE_ERROR,
    JsonOutput,
    ago,
    call,
    err,
    out,
    parse_json,
    render,
)
from relay_cli.listing import list_command
from relay_client import RelayClient

app = typer.Typer(help="Approvals: the operator's queue.", no_args_is_help=True)

ApprovalId = Annotated[int, typer.Argument(help="The approval.")]
Note = Annotated[str | None, typer.Option(help="A note kept with the decision.")]
RemindAfter = Annotated[
    int | None,
    typer.Option(
        help="Seconds unanswered before the operator is reminded (default: the server's)."
    ),
]
EscalateAfter = Annotated[
    int | None,
    typer.Option(
        help="Seconds unanswered before it goes to the next platform of the server's escalation."
    ),
]


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
    remind_after: RemindAfter = None,
    escalate_after: EscalateAfter = None,
    task: Annotated[
        int | None, typer.Option(help="The task it holds up (A2A shows it input-required).")
    ] = None,
    as_json: JsonOutput = False,
) -> None:
    """Ask the operator to approve something, as an agent (--agent, or an agent's token).

    Example: relay --agent deployer approvals request "Deploy build 7" --expires-in 600
    Example: relay --agent deployer approvals request "Deploy build 8" --remind-after 300
    """
    body = parse_json(payload, "--payload")
    asked = call(
        ctx,
        lambda c: c.approvals.request(
            title,
            detail=detail,
            payload=body,
            expires_in=expires_in,
            remind_after=remind_after,
            escalate_after=escalate_after,
            task_id=task,
        ),
    )
    render(asked, as_json, headline=f"Approval {asked.approval_id} requested: {asked.status}")


@app.command()
def ask(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(help="The question, in a line.")],
    option: Annotated[
        list[str],
        typer.Option("--option", "-o", help="An answer to choose from (2 to 10; repeat it)."),
    ],
    detail: Annotated[str | None, typer.Option(help="More words for the operator.")] = None,
    multiple: Annotated[
        bool, typer.Option("--multiple", help="Several options may be chosen.")
    ] = False,
    allow_other: Annotated[
        bool, typer.Option("--allow-other", help="The operator may answer in their own words.")
    ] = False,
    expires_in: Annotated[
        int | None, typer.Option(help="Seconds until it expires unanswered (a week at most).")
    ] = None,
    remind_after: RemindAfter = None,
    escalate_after: EscalateAfter = None,
    wait: Annotated[
        float | None,
        typer.Option(help="Wait up to this many seconds (60 at most) for the answer."),
    ] = None,
    as_json: JsonOutput = False,
) -> None:
    """Ask the operator a question with options, as an agent (--agent, or an agent's token).

    Example: relay --agent builder approvals ask "Which database?" -o Postgres -o SQLite --wait 60
    """

    def asked(client: RelayClient) -> Approval:
        approval = client.approvals.ask(
            question,
            option,
            detail=detail,
            multiple=multiple,
            allow_other=allow_other,
            expires_in=expires_in,
            remind_after=remind_after,
            escalate_after=escalate_after,
        )
        if wait and approval.status == "pending":
            approval = client.approvals.show(approval.approval_id, wait=wait)
        return approval

    approval = call(ctx, asked)
    said = f"Question {approval.approval_id} asked: {approval.status}"
    if approval.answer is not None:
        said += f"\nanswer: {', '.join(approval.answer)}"
    render(approval, as_json, headline=said)


@app.command()
def answer(
    ctx: typer.Context,
    approval_id: ApprovalId,
    chosen: Annotated[
        list[str],
        typer.Argument(
            help="The option (several, where it takes several), or your own words where it"
            " allows them.",
            metavar="ANSWER...",
        ),
    ],
    note: Note = None,
    as_json: JsonOutput = False,
) -> None:
    """Answer an agent's question.

    Example: relay approvals answer 12 Postgres
    """
    answered = call(ctx, lambda c: c.approvals.answer(approval_id, chosen, note=note))
    headline = _outcome(answered, "Answered")
    if answered.changed and answered.answer is not None:
        headline += f"\nanswer: {', '.join(answered.answer)}"
    render(answered, as_json, headline=headline)


ApprovalIds = Annotated[
    list[int] | None,
    typer.Argument(
        help="The approvals (one, or several decided each on its own).", metavar="APPROVAL_ID..."
    ),
]
Every = Annotated[
    bool,
    typer.Option(
        "--all",
        help="Every pending approval that --agent and --title match (shown, and asked once).",
    ),
]
OfAgent = Annotated[str | None, typer.Option(help="With --all: only the requests of this agent.")]
TitlePattern = Annotated[
    str | None,
    typer.Option(
        help="With --all: only titles that match this pattern (* and ?).", metavar="PATTERN"
    ),
]
Yes = Annotated[bool, typer.Option("--yes", "-y", help="With --all: do not ask, approve them.")]
Payload = Annotated[
    str | None,
    typer.Option(help="Approve an agent's request changed: its payload as you approve it."),
]
Command = Annotated[
    str | None,
    typer.Option(help="Approve a coding agent's request to run a command with this one."),
]
Remember = Annotated[
    bool,
    typer.Option(
        "--remember",
        help="Always allow this: a policy approves it again from now on (this agent, this"
        " exact command line in this working directory, or this exact tool input).",
    ),
]
EveryAgent = Annotated[
    bool, typer.Option("--every-agent", help="With --remember: for every agent.")
]
AnyDirectory = Annotated[
    bool,
    typer.Option(
        "--any-directory",
        help="With --remember: the command line in any working directory, not only in the"
        " one it was asked in.",
    ),
]
AsAsked = Annotated[
    bool, typer.Option("--as-asked", help="With --remember: the command as asked, not as changed.")
]
Limit = Annotated[
    str | None,
    typer.Option(
        help="With --remember: at most COUNT/SECONDS approvals per agent (5/3600).",
        metavar="COUNT/SECONDS",
    ),
]


@app.command()
def approve(
    ctx: typer.Context,
    approval_ids: ApprovalIds = None,
    every: Every = False,
    agent: OfAgent = None,
    title: TitlePattern = None,
    yes: Yes = False,
    note: Note = None,
    payload: Payload = None,
    command: Command = None,
    remember: Remember = False,
    every_agent: EveryAgent = False,
    any_directory: AnyDirectory = False,
    as_asked: AsAsked = False,
    limit: Limit = None,
    as_json: JsonOutput = False,
) -> None:
    """Approve pending approvals: one as asked or changed, once or from now on (--remember);
    several by id, or every one that matches (--all).

    Example: relay approvals approve 12 --command "npm test -- --runInBand"
    Example: relay approvals approve 12 --remember
    Example: relay approvals approve 12 13 14
    Example: relay approvals approve --all --agent ci-7 --title 'Bash: npm test*'
    """
    scoped = every_agent or any_directory or as_asked or limit is not None
    if every or agent is not None or title is not None or len(approval_ids or []) != 1:
        single = {"--payload": payload, "--command": command, "--remember": remember or scoped}
        _approve_several(ctx, approval_ids or [], every, agent, title, yes, note, single, as_json)
        return
    if scoped and not remember:
        raise typer.BadParameter(
            "--every-agent, --any-directory, --as-asked and --limit go with --remember"
        )
    if payload is not None and command is not None:
        raise typer.BadParameter("give --payload or --command, not both")
    changed = parse_json(payload, "--payload")
    scope = _scope(every_agent, any_directory, as_asked, limit) if remember else None
    [approval_id] = approval_ids or []
    decided = call(
        ctx,
        lambda client: client.approvals.approve(
            approval_id,
            note=note,
            payload=changed,
            command=command,
            remember=remember,
            remember_scope=scope,
        ),
    )
    render(decided, as_json, headline=_approved(decided))


def _approved(decided: Approval) -> str:
    """What approving one approval did, in a few lines: the command it runs where changed, the
    policy it made where remembered."""
    headline = _outcome(decided, "Approved")
    approved = command_of(decided.approved_payload)
    if decided.changed and approved is not None:
        headline += f"\nchanged: it runs {approved}"
    policy_id = decided.remembered_policy_id
    if decided.changed and policy_id is not None:
        headline += (
            f"\nremembered as policy {policy_id} (see it: relay policies show {policy_id};"
            f" undo: relay policies disable {policy_id})"
        )
    return headline


def _approve_several(
    ctx: typer.Context,
    approval_ids: list[int],
    every: bool,
    agent: str | None,
    title: str | None,
    yes: bool,
    note: str | None,
    single: Mapping[str, object],
    as_json: bool,
) -> None:
    """Approve the approvals named, or with --all the pending ones that match (listed, then
    asked once): each on its own, as asked; one that fails is said, and the others go on."""
    given = [option for option, value in single.items() if value not in (None, False)]
    if given:
        raise typer.BadParameter(f"{', '.join(given)} approve one approval: name only one")
    if every == bool(approval_ids):
        raise typer.BadParameter("name the approvals to approve, or give --all (not both)")
    if not every and (agent is not None or title is not None):
        raise typer.BadParameter("--agent and --title go with --all")
    if every:
        chosen = call(ctx, lambda c: _matching(c, agent, title))
        if not chosen:
            out.print("no pending approval matches; nothing approved", markup=False)
            return
        shown = err if as_json else out  # the JSON alone on stdout
        for approval in chosen:
            shown.print(
                f"{approval.approval_id}  {approval.requested_by}  {approval.title}", markup=False
            )
        if not yes and not typer.confirm(f"Approve these {len(chosen)}?"):
            raise typer.Exit(USAGE_ERROR)
        approval_ids = [approval.approval_id for approval in chosen]
    failed = 0
    for approval_id in approval_ids:

        def decide(client: RelayClient, one: int = approval_id) -> Approval:
            return client.approvals.approve(one, note=note)

        try:
            decided = call(ctx, decide)
        except typer.Exit:
            failed += 1  # said on stderr by call
            continue
        render(decided, as_json, headline=_outcome(decided, "Approved"))
    if failed:
        raise typer.Exit(API_ERROR)


def _matching(client: RelayClient, agent: str | None, title: str | None) -> list[Approval]:
    """The pending approvals an operator may approve (no question: it is answered) whose
    agent is ``agent`` and whose title matches the pattern ``title`` (each, where given),
    oldest first."""
    return [
        approval
        for approval in reversed(list(client.approvals.iterate(status="pending")))
        if approval.kind != "question"
        and (agent is None or approval.requested_by == agent)
        and (title is None or fnmatchcase(approval.title, title))
    ]


def _scope(
    every_agent: bool, any_directory: bool, as_asked: bool, limit: str | None
) -> RememberScope | None:
    """What --remember's options say; None for its defaults."""
    if not (every_agent or any_directory or as_asked or limit):
        return None
    count, _, seconds = (limit or "").partition("/")
    if limit is not None and not (count.isdigit() and seconds.isdigit()):
        raise typer.BadParameter("--limit is COUNT/SECONDS, e.g. 5/3600")
    return RememberScope(
        agents="every" if every_agent else "this",
        command="asked" if as_asked else "approved",
        directory="any" if any_directory else "this",
        limit=PolicyLimit(count=int(count), per_seconds=int(seconds)) if limit else None,
    )


@app.command()
def reject(
    ctx: typer.Context,
    approval_id: ApprovalId,
    note: Note = None,
    stop: Annotated[
        bool,
        typer.Option(
            "--stop",
            help="Also ask the agent to stop what it is doing (Claude Code ends its turn).",
        ),
    ] = False,
    as_json: JsonOutput = False,
) -> None:
    """Reject a pending approval (with --stop, and ask the agent to stop what it is doing).

    Example: relay approvals reject 12 --note "not during the freeze"
    Example: relay approvals reject 12 --stop --note "wrong branch: wait for me"
    """
    decided = call(ctx, lambda c: c.approvals.reject(approval_id, note=note, interrupt=stop))
    headline = _outcome(decided, "Rejected")
    if decided.changed and decided.interrupt:
        headline += "\nthe agent is asked to stop what it is doing"
    render(decided, as_json, headline=headline)


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
