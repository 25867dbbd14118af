"""Conditions (``ports.Cond``) and assignments as SQL, for both SQL adapters, by one rule.

``eq`` and ``ne`` with ``None`` are ``IS NULL`` and ``IS NOT NULL`` and take no parameter; ``in``
takes its values, one ``?`` each in SQLite (``0``, false, for none) and one array in PostgreSQL
(``= ANY($n)``), and ``not_in`` likewise (``NOT IN``, ``<> ALL``; ``1``, true, for none); every
other condition takes its value, as an assignment does. What
the text of a statement depends on is its ``shape``, by which the adapters keep each statement
once. The storage contract tests (``tests/storage/test_contract.py``) hold the two to one
answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

from relay_core.ports import Cond

Takes = Literal["none", "one", "each", "array"]
LISTS = ("in", "not_in")


class Dialect(NamedTuple):
    """How a database writes parameters: ``$1, $2…`` or ``?``; ``in`` as one array or not."""

    numbered: bool
    arrays: bool
    operators: Mapping[str, str]


SQLITE = Dialect(
    numbered=False, arrays=False, operators={"eq": "=", "ne": "!=", "lt": "<", "gt": ">"}
)
POSTGRES = Dialect(
    numbered=True, arrays=True, operators={"eq": "=", "ne": "<>", "lt": "<", "gt": ">"}
)


def quote(name: str) -> str:
    """An identifier, quoted."""
    return f'"{name}"'


def takes(cond: Cond, dialect: Dialect) -> Takes:
    """What ``cond`` takes as parameters: none, its value, each of its values, or one array."""
    if cond.op in LISTS:
        return "array" if dialect.arrays else "each"
    if cond.value is None and cond.op in ("eq", "ne"):
        return "none"
    return "one"


def shape(conds: Sequence[Cond], dialect: Dialect) -> tuple[Any, ...]:
    """What the SQL text of these conditions depends on (not their values)."""
    key = []
    for cond in conds:  # a loop, not a generator: this is on every statement's path
        value = cond.value
        if cond.op in LISTS:
            key.append((cond.field, cond.op, 0 if dialect.arrays else len(value)))
        else:
            key.append((cond.field, cond.op, value is None))
    return tuple(key)


def _mark(dialect: Dialect, number: int) -> str:
    return f"${number}" if dialect.numbered else "?"


def where(conds: Sequence[Cond], dialect: Dialect, first: int = 1, also: str | None = None) -> str:
    """The WHERE clause of these conditions (and of ``also``), its parameters numbered from
    ``first``; empty for none."""
    parts: list[str] = [also] if also else []
    number = first
    for cond in conds:
        column = quote(cond.field)
        kind = takes(cond, dialect)
        if kind == "none":
            parts.append(f"{column} IS {'NOT ' if cond.op == 'ne' else ''}NULL")
        elif kind == "each":
            marks = ", ".join("?" for _ in cond.value)
            negated = cond.op == "not_in"
            if marks:
                parts.append(f"{column} {'NOT IN' if negated else 'IN'} ({marks})")
            else:
                parts.append("1" if negated else "0")
        elif kind == "array":
            compared = "<> ALL" if cond.op == "not_in" else "= ANY"
            parts.append(f"{column} {compared}({_mark(dialect, number)})")
            number += 1
        else:
            parts.append(f"{column} {dialect.operators[cond.op]} {_mark(dialect, number)}")
            number += 1
    return f" WHERE {' AND '.join(parts)}" if parts else ""


def parameters(conds: Sequence[Cond], dialect: Dialect) -> list[Any]:
    """The parameters ``where`` numbers, in its order, as given (an adapter may encode them)."""
    params: list[Any] = []
    for cond in conds:
        kind = takes(cond, dialect)
        if kind == "one":
            params.append(cond.value)
        elif kind == "each":
            params.extend(cond.value)
        elif kind == "array":
            params.append(list(cond.value))
    return params


def assignments(values: Mapping[str, Any], dialect: Dialect, first: int = 1) -> str:
    """``SET`` text, parameters from ``first``."""
    numbered = enumerate(values, start=first)
    return ", ".join(f"{quote(field)} = {_mark(dialect, number)}" for number, field in numbered)


def assigned(values: Mapping[str, Any]) -> list[Any]:
    """The parameters of ``assignments``."""
    return list(values.values())
