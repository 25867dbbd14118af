"""What every command shares: connection options, the client, error handling, one ``render()``.

Exit codes: 0 success, 1 refused (by the server, or what a local command such as ``relay backup``
could not do), 2 usage, 3 cannot connect.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, TypeVar

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.table import Table
from rich.text import Text

from relay_api.elision import elide
from relay_api.models import OPERATOR, Page
from relay_cli.connection import Connection
from relay_client import RelayClient
from relay_client.config import where_tokens_are_looked_for
from relay_client.errors import APIStatusError, RelayError
from relay_client.errors import ConnectionError as RelayConnectionError
from relay_client.errors import TimeoutError as RelayTimeoutError

T = TypeVar("T")

API_ERROR, USAGE_ERROR, CONNECTION_ERROR = 1, 2, 3

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

JsonOutput = Annotated[bool, typer.Option("--json", help="Print bare JSON (for scripts).")]
Limit = Annotated[
    int | None, typer.Option("--limit", "-n", help="How many per page (server default 100).", min=1)
]
AllPages = Annotated[bool, typer.Option("--all", help="Every page, not only the first.")]
Cursor = Annotated[
    str | None, typer.Option("--cursor", help="The page after the one that printed this cursor.")
]
P = TypeVar("P", bound=Page)


def call(ctx: typer.Context, operation: Callable[[RelayClient], T]) -> T:
    """Run ``operation`` with a client; turn failures into one stderr line and an exit code."""
    conn: Connection = ctx.obj or Connection()
    client = RelayClient(conn.url, token=conn.token, agent_id=conn.agent)
    try:
        with client:
            return operation(client)
    except APIStatusError as exc:
        err.print(f"error: {exc.message} [{exc.code}, HTTP {exc.status_code}]", markup=False)
        if exc.code == "unauthenticated" and client.config.token is None:
            looked = where_tokens_are_looked_for(client.config.url)
            err.print(f"no token was found; looked in: {looked}", markup=False)
            err.print("pass --token or set RELAY_TOKEN", markup=False)
        raise typer.Exit(API_ERROR) from None
    except RelayTimeoutError as exc:
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(CONNECTION_ERROR) from None
    except RelayConnectionError as exc:
        err.print(f"error: {exc}", markup=False)
        err.print(f"is `relay serve` running at {client.config.url}?", markup=False)
        raise typer.Exit(CONNECTION_ERROR) from None
    except (RelayError, ValueError) as exc:
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(USAGE_ERROR) from None


def acting(client: RelayClient, agent_id: str | None) -> str:
    """The agent a command acts for: the argument, else --agent, else the agent whose token
    this is, as the server says (``RELAY_OPERATOR_TOKEN`` may be any string: a prefix proves
    nothing). The operator's token must name one."""
    chosen = agent_id or client.config.agent_id or client.status().caller
    if chosen == OPERATOR:
        raise ValueError(
            "the operator's token is no agent's: say which agent acts with --agent <id>"
        )
    return chosen


def parse_json(value: str | None, option: str) -> Any:
    """A JSON option's value, or a usage error naming the option."""
    if value is None:
        return None
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"not valid JSON ({exc.msg})", param_hint=option) from None


def ago(moment: datetime) -> str:
    """How long ago, for people: ``17 min ago``."""
    seconds = max(0, int((datetime.now(UTC) - moment).total_seconds()))
    for unit, size in (("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return f"{seconds} s ago"


# Columns whose values are agents' ids, beside the ``*_id`` ones.
AGENT_ID_COLUMNS = frozenset({"assignee", "claimed_by", "from_agent", "requested_by", "decided_by"})


def is_id(column: str) -> bool:
    """Whether a column holds ids: what the reader types next, so never cut."""
    return column.endswith("_id") or column in AGENT_ID_COLUMNS


def _cell(value: Any, *, in_table: bool = False) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        # A row says how long ago, in a column that stays narrow; one object, the moment.
        return ago(value) if in_table else value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


# A column whose values are never longer than this is kept whole (a status, a kind, a count):
# the room goes to the long ones, a title or a text, which wrap.
SHORT = 12


def _table(columns: Sequence[str], cells: list[list[str]]) -> Table:
    """A table as wide as the terminal where the id columns are never cut (they are typed next),
    nor the short ones: the other columns wrap, a column empty on every row is left out, and
    those that cannot keep their heading whole are left out, short ones first."""
    filled = [n for n in range(len(columns)) if n == 0 or any(line[n] for line in cells)]
    columns = [columns[n] for n in filled]
    cells = [[line[n] for n in filled] for line in cells]
    widest = [max(len(name), *(len(line[n]) for line in cells)) for n, name in enumerate(columns)]
    # The narrowest each column can be: an id whole, any other its heading and ten characters a
    # line (or less if it holds less); each column is padded by a space on both sides and ruled
    # from the next.
    least = [
        w if is_id(c) or w <= SHORT else min(w, max(len(c), 10))
        for c, w in zip(columns, widest, strict=True)
    ]
    whole = [is_id(c) or w <= SHORT for c, w in zip(columns, widest, strict=True)]
    shown = list(range(len(columns)))
    while len(shown) > 1 and sum(least[n] + 3 for n in shown) - 1 > out.width:
        # The short ones go first, from the right: a title says more than a status.
        others = sorted(
            (n for n in shown if not is_id(columns[n])), key=lambda n: (widest[n] > SHORT, -n)
        )
        if not others:
            break
        shown.remove(others[0])
    widths = _shared(shown, whole, widest, least)
    table = Table(show_edge=False, header_style="bold")
    for n in shown:
        if whole[n]:
            table.add_column(columns[n], no_wrap=True, min_width=widest[n])
        else:
            table.add_column(columns[n], overflow="fold", width=widths[n])
    for line in cells:
        table.add_row(*(_literal(columns[n], line[n]) for n in shown))
    return table


def _shared(
    shown: list[int], whole: list[bool], widest: list[int], least: list[int]
) -> dict[int, int]:
    """The widths of the wrapping columns: the room the whole ones leave, shared in proportion
    to what each holds (rich's own sharing wraps a title long before the terminal's edge)."""
    wrapping = [n for n in shown if not whole[n]]
    room = out.width + 1 - sum(widest[n] + 3 for n in shown if whole[n]) - 3 * len(wrapping)
    wanted = sum(widest[n] for n in wrapping)
    if wanted <= room:
        return {n: widest[n] for n in wrapping}
    return {n: max(least[n], room * widest[n] // wanted) for n in wrapping}


def pages(
    ctx: typer.Context,
    all_pages: bool,
    page: Callable[[RelayClient], P],
    every: Callable[[RelayClient], Iterable[Any]],
    whole: Callable[[list[Any]], P],
) -> P:
    """One ``page`` of a list; with ``all_pages``, ``every`` item of it (the client follows the
    cursors) made ``whole``. When more pages follow one, stderr says how to read them."""
    if all_pages:
        return call(ctx, lambda client: whole(list(every(client))))
    found = call(ctx, page)
    if found.next_cursor is not None:
        err.print(f"(more: --all, or --cursor {found.next_cursor})", markup=False)
    return found


def render(
    value: BaseModel,
    as_json: bool,
    *,
    rows: Sequence[BaseModel] | None = None,
    columns: Sequence[str] = (),
    headline: str | None = None,
    lead: dict[str, Any] | None = None,
) -> None:
    """JSON for scripts; for people, a one-line ``headline`` (a confirmation), else ``rows`` as a
    table of ``columns``, else the object's fields (after ``lead``'s), each long one as its head
    and its tail."""
    if as_json:
        out.print(value.model_dump_json(), markup=False)
        return
    if headline:
        out.print(headline, markup=False)
        return
    if rows is not None:
        if not rows:
            out.print("(none)")
            return
        out.print(
            _table(
                columns,
                [[_cell(getattr(row, c, None), in_table=True) for c in columns] for row in rows],
            )
        )
        return
    table = Table(show_header=False, show_edge=False, box=None)
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")  # a long word wraps rather than losing its tail
    fields = {**(lead or {}), **value.model_dump()}
    cut = False
    for name, field_value in fields.items():
        if field_value not in (None, [], {}):
            cell = _cell(field_value)
            cut = cut or len(cell) > FIELD_CHARS
            table.add_row(Text(name, style="bold"), _literal(name, elide(cell, FIELD_CHARS)))
    out.print(table)
    if cut:
        err.print("(a long field is shown as its head and its tail: --json prints it whole)")


def _literal(column: str, value: str) -> Text:
    """A cell as it was written, never read as Rich markup (agents wrote most of it); a search
    hit's matches, which the API puts in ``[`` ``]``, in bold."""
    if column != "snippet":
        return Text(value)
    shown = Text()
    for n, part in enumerate(_MATCHES.split(value)):
        shown.append(part, style="bold" if n % 2 else None)
    return shown


FIELD_CHARS = 2000  # of one field shown by ``render``: a 60 KB command is its head and its tail
_MATCHES = re.compile(r"\[([^\[\]]*)\]")
