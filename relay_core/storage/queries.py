"""Named SQL: each resource's statements written out once per dialect, in files a reader greps.

``sqlite/queries/tasks.sql`` and ``postgres/queries/tasks.sql`` hold the same names::

    -- name: claim_open_task
    -- Claim a task that is open and assigned to nobody or to the claimer.
    UPDATE tasks SET ... WHERE task_id = :task_id AND status = 'open' ...

A SQLite name may hold several statements, each ending with ``;`` at a line's end: they run
in order with the same parameters, and the first one answers.

Both dialects' statements of one name are the same text but where a dialect needs otherwise.
A SQLite statement that differs for its own reason says so in a ``-- dialect:`` line; these
differences are the same everywhere and not marked (``python -m bench.arch`` counts them):

- a limit is bound as ``LIMIT +:limit`` on SQLite, so that the statement is not prepared again
  at each binding (bench/figures.md);
- PostgreSQL casts a parameter whose type it cannot infer (``:after::text IS NULL``);
- a list is one parameter: a JSON array read by ``json_each`` on SQLite, an array matched by
  ``= ANY(:ids::bigint[])`` on PostgreSQL;
- a JSON parameter is ``json(:data)`` on SQLite, ``:data::text::jsonb`` on PostgreSQL;
- NULL-safe equality is ``IS`` on SQLite, ``IS NOT DISTINCT FROM`` on PostgreSQL.

A statement names its parameters ``:name``; ``load`` rewrites them as the driver numbers them
(``?1`` for SQLite, ``$1`` for asyncpg: a name used twice is one parameter) and keeps their
order, so a store passes them by name. A PostgreSQL cast (``::text``) is not a parameter.

A small loader of our own rather than aiosql: aiosql runs a statement itself, through its own
adapter per driver (sqlite3 blocking, asyncpg awaited), while Relay's SQLite statements run on
the group-commit writer's connection inside its transaction and PostgreSQL's after the unit's
held writes are sent; only the text and the parameter order are wanted here.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel

from relay_core.json_records import JsonRecords

R = TypeVar("R", bound=BaseModel)

Dialect = Literal["sqlite", "postgres"]

_NAME = re.compile(r"^--\s*name:\s*(\w+)\s*$", re.MULTILINE)
_PARAMETER = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
_MARK = {"sqlite": "?", "postgres": "$"}


@dataclass(frozen=True)
class Statement:
    """A named statement: its text as the driver takes it, and its parameters' names in the
    order the driver numbers them."""

    name: str
    text: str
    parameters: tuple[str, ...]
    # SQLite: statements run after this one, with the same parameters (one statement cannot
    # insert into two tables there, as a PostgreSQL CTE does).
    following: tuple[Statement, ...] = ()


def parse(source: str, dialect: Dialect) -> dict[str, Statement]:
    """The named statements of one file's text."""
    found: dict[str, Statement] = {}
    starts = list(_NAME.finditer(source))
    for match, next_match in zip(starts, [*starts[1:], None], strict=True):
        name = match.group(1)
        body = source[match.end() : next_match.start() if next_match else len(source)]
        lines = [line for line in body.strip().splitlines() if not line.startswith("--")]
        texts = [text.strip() for text in re.split(r";\s*$", "\n".join(lines), flags=re.M)]
        texts = [text for text in texts if text]
        if name in found or not texts:
            raise ValueError(f"statement {name!r}: named twice, or empty")
        if len(texts) > 1 and dialect != "sqlite":
            raise ValueError(f"statement {name!r}: one statement a name on {dialect}")
        first, *rest = (_numbered(name, text, _MARK[dialect]) for text in texts)
        found[name] = dataclasses.replace(first, following=tuple(rest))
    return found


def _numbered(name: str, text: str, mark: str) -> Statement:
    """The statement with its ``:name`` parameters numbered as the driver takes them."""
    parameters: list[str] = []

    def number(parameter: re.Match[str]) -> str:
        if parameter.group(1) not in parameters:
            parameters.append(parameter.group(1))
        return f"{mark}{parameters.index(parameter.group(1)) + 1}"

    return Statement(name, _PARAMETER.sub(number, text), tuple(parameters))


def load(dialect: Dialect) -> dict[str, Statement]:
    """Every named statement of ``dialect``, from its ``queries`` directory."""
    directory = Path(__file__).parent / dialect / "queries"
    statements: dict[str, Statement] = {}
    for path in sorted(directory.glob("*.sql")):
        for name, statement in parse(path.read_text(), dialect).items():
            if name in statements:
                raise ValueError(f"statement {name!r} is named in two files of {directory}")
            statements[name] = statement
    return statements


class Statements(Protocol):
    """The named statements of one dialect, run in one unit of work's transaction. A statement
    that answers records selects their columns, and these read them into ``model``
    (``relay_core.storage.rows``); on SQLite, one that builds a record's JSON itself selects
    it alone, named ``…_json``."""

    async def record(self, model: type[R], name: str, /, **params: Any) -> R | None:
        """The first record the statement answers, or None."""
        ...

    async def records(self, model: type[R], name: str, /, **params: Any) -> list[R]:
        """Every record the statement answers."""
        ...

    async def keyed_json(
        self, model: type[BaseModel], key: str, name: str, /, **params: Any
    ) -> list[tuple[Any, str]]:
        """Every record the statement answers, as its key and the JSON ``model_dump_json``
        writes for it (SQLite's statement selects the key and the row's JSON)."""
        ...

    async def feed(
        self, model: type[R], name: str, wakes: tuple[str, ...], /, **params: Any
    ) -> list[R]:
        """Every record a read of the event feed answers. PostgreSQL's statement answers, with
        each row, whether committed rows of the feed it reads wait above the horizon (``held``;
        one row of NULLs when nothing is found), which the runner notes for the unit, so that
        their readers are woken again: those of the held row's audience where the statement
        names it (``held_audience``), else those of the hub topics ``wakes``; SQLite's, the
        records."""
        ...

    async def json_array(self, model: type[R], name: str, /, **params: Any) -> JsonRecords[R]:
        """The records the statement answers, as one JSON array (SQLite's statement selects
        their count and the array, in one row)."""
        ...

    async def rows(self, name: str, /, **params: Any) -> list[tuple[Any, ...]]:
        """Every row the statement answers, as tuples of plain columns."""
        ...

    async def value(self, name: str, /, **params: Any) -> Any:
        """The first column of the first row the statement answers."""
        ...

    async def add(
        self, name: str, then: Callable[[Any], None] | None = None, /, **params: Any
    ) -> None:
        """Run an INSERT nobody needs an answer to before the unit's next statement: on
        PostgreSQL it is held back until then, or until the unit commits (a unit that only
        adds sends them without a BEGIN, as one statement where there is one). ``then`` is
        given the first column the statement answers, once it has run. A statement that
        adds to the event feed names ``:feed_ordinal``, which PostgreSQL's runner draws from
        the transaction (SQLite's statements have none)."""
        ...

    async def run(self, name: str, /, **params: Any) -> int:
        """Run a statement that answers nothing; how many rows it changed."""
        ...
