"""``relay reserve``, ``relay release`` and ``relay reservations list|show|renew|release``."""

from __future__ import annotations

import re
from typing import Annotated

import typer

from relay_api import operations as ops
from relay_api.models import Reservation
from relay_cli._common import JsonOutput, call, err, render
from relay_cli.listing import list_command
from relay_cli.workspace import current_workspace, from_root
from relay_client import RelayClient
from relay_client.errors import ConflictError

app = typer.Typer(
    help="Reservations: who is editing what in a repository the agents share.",
    no_args_is_help=True,
)

ReservationId = Annotated[int, typer.Argument(help="The reservation.")]
Workspace = Annotated[
    str | None,
    typer.Option(
        help="The repository's name among the agents; default: git config relay.workspace,"
        " else the origin remote's URL."
    ),
]
DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s?)?$")


def seconds_of(duration: str) -> int:
    """``2h``, ``90m``, ``1h30m``, ``600`` (seconds) as seconds."""
    found = DURATION.match(duration.strip())
    if not duration.strip() or found is None:
        raise typer.BadParameter("a duration such as 2h, 45m, 1h30m or 600 (seconds)")
    hours, minutes, secs = (int(part or 0) for part in found.groups())
    return hours * 3600 + minutes * 60 + secs


def _workspace(given: str | None) -> str:
    found = given or current_workspace()
    if not found:
        raise typer.BadParameter(
            "not in a git repository with an origin remote: say --workspace, or set"
            " git config relay.workspace",
            param_hint="--workspace",
        )
    return found


def _said(reservation: Reservation) -> str:
    kind = "exclusive" if reservation.exclusive else "shared"
    return (
        f"Reserved #{reservation.reservation_id} ({kind}) in {reservation.workspace} until"
        f" {reservation.expires_at:%Y-%m-%d %H:%M} UTC: {' '.join(reservation.paths)}"
    )


def reserve(
    ctx: typer.Context,
    paths: Annotated[
        list[str],
        typer.Argument(help="Paths or patterns (git wildmatch: src/api/**), from here."),
    ],
    for_: Annotated[
        str, typer.Option("--for", help="How long: 2h, 45m, 1h30m (1 minute to 24 hours).")
    ] = "1h",
    reason: Annotated[str | None, typer.Option(help="Why, for the others to read.")] = None,
    task: Annotated[
        int | None, typer.Option(help="The task it is for: released when the task ends.")
    ] = None,
    shared: Annotated[
        bool, typer.Option("--shared", help="Others may hold them shared too.")
    ] = False,
    workspace: Workspace = None,
    as_json: JsonOutput = False,
) -> None:
    """Reserve paths of this repository for the acting agent: all of them, or none.

    Example: relay --agent builder reserve 'src/api/**' --for 2h --reason "auth refactor"
        --workspace github.com/acme/shop
    """
    where = _workspace(workspace)
    ttl = seconds_of(for_)
    rooted = from_root(paths)

    def reserving(client: RelayClient) -> Reservation:
        try:
            return client.reservations.create(
                where, rooted, exclusive=not shared, ttl_seconds=ttl, reason=reason, task_id=task
            )
        except ConflictError as exc:
            for held in exc.conflicts:
                said = f"held by {held.holder} (#{held.reservation_id})"
                why = f" for {held.reason}" if held.reason else ""
                until = held.model_dump(mode="json")["expires_at"]  # as the server said it
                err.print(f"{' '.join(held.paths)}: {said}{why} until {until}", markup=False)
            raise

    reservation = call(ctx, reserving)
    render(reservation, as_json, headline=_said(reservation))


def release(ctx: typer.Context, reservation_id: ReservationId, as_json: JsonOutput = False) -> None:
    """Release a reservation (yours, or any as the operator).

    Example: relay --agent builder release 12
    """
    released = call(ctx, lambda c: c.reservations.release(reservation_id))
    render(released, as_json, headline=f"Reservation {reservation_id} is {released.status}")


app.command("list")(
    list_command(
        ops.RESERVATIONS_LIST,
        columns=("reservation_id", "holder", "paths", "exclusive", "expires_at", "reason"),
        doc="""List reservations, newest first: active ones, of a workspace, a holder, or those
that cover a path.

Example: relay reservations list --path src/api/app.py""",
    )
)


@app.command()
def show(ctx: typer.Context, reservation_id: ReservationId, as_json: JsonOutput = False) -> None:
    """Show one reservation.

    Example: relay reservations show 12
    """
    render(call(ctx, lambda c: c.reservations.show(reservation_id)), as_json)


@app.command()
def renew(
    ctx: typer.Context,
    reservation_id: ReservationId,
    for_: Annotated[str, typer.Option("--for", help="How long from now: 2h, 45m.")] = "1h",
    as_json: JsonOutput = False,
) -> None:
    """Hold a reservation longer, from now.

    Example: relay --agent builder reservations renew 12 --for 2h
    """
    ttl = seconds_of(for_)
    renewed = call(ctx, lambda c: c.reservations.renew(reservation_id, ttl_seconds=ttl))
    render(renewed, as_json, headline=_said(renewed))


app.command("release")(release)
