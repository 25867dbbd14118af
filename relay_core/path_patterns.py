"""Which files a reservation's patterns cover, and whether two patterns may cover the same.

A pattern is git's wildmatch syntax, relative to the repository's root (as a gitignore line
anchored there: ``*`` stays within a directory, ``**`` crosses them, a directory covers what
is in it), matched by pathspec, a maintained implementation of git's rules.

Two patterns overlap, conservatively, when either matches the other taken as a path, or when
the literal parts before their first wildcard are, directory-wise, one a prefix of the other
(``src/*.py`` and ``src/api/x.py``; ``*.md`` and anything). This may see an overlap where a
finer rule would not; it never misses one.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import pathspec

WILDCARDS = "*?[\\"


@functools.lru_cache(maxsize=4096)
def _spec(pattern: str) -> pathspec.PathSpec[Any]:
    # Anchored at the root; a leading "!" or "#" is a file's name here, not gitignore's
    # negation or comment.
    rooted = pattern.lstrip("/")
    if rooted[:1] in ("!", "#"):
        rooted = "\\" + rooted
    return pathspec.PathSpec.from_lines("gitignore", ["/" + rooted])


def invalid(pattern: str) -> str | None:
    """Why ``pattern`` is no pattern a reservation may hold, or None: one that names a path
    other than as git does (so that it would protect nothing while its holder believes it
    holds a file), or one git's rules do not read (an unfinished escape, a backwards range)."""
    why = _misnamed(pattern)
    if why is not None:
        return f"{pattern!r} {why}"
    try:
        _spec(pattern)
    except (ValueError, re.error) as exc:
        return f"{pattern!r} is not a wildmatch pattern ({exc})"
    return None


def _misnamed(pattern: str) -> str | None:
    if pattern != pattern.strip():
        return "has leading or trailing whitespace"
    if pattern.startswith("/"):
        return "is absolute: give it from the repository's root (src/api/x.py)"
    if pattern.startswith("!"):
        return "starts with '!' (gitignore's negation): a reservation cannot hold 'all but'"
    if pattern.startswith(":"):
        return "is pathspec magic (':(top)', ':/', ':!'): give a path from the repository's root"
    if any(part in ("", ".", "..") for part in pattern.removesuffix("/").split("/")):
        return "has a '.', '..' or empty segment: give the path as git names it (src/api/x.py)"
    return None


def covers(pattern: str, path: str) -> bool:
    """Whether ``pattern`` covers the concrete ``path`` (relative to the root)."""
    return _spec(pattern).match_file(path.lstrip("/"))


def _literal_directory(pattern: str) -> str:
    """The directory the pattern cannot leave: its literal part up to the last ``/`` before a
    wildcard, or, with none, the whole pattern as a directory (``src/api/`` for ``src/api``)."""
    pattern = pattern.lstrip("/")
    cut = min((pattern.find(c) for c in WILDCARDS if c in pattern), default=-1)
    if cut < 0:
        return pattern.rstrip("/") + "/"
    return pattern[: pattern.rfind("/", 0, cut) + 1]


def overlap(first: str, second: str) -> bool:
    """Whether the two patterns may cover one same path (conservatively: never a miss)."""
    if covers(first, second) or covers(second, first):
        return True
    one, other = _literal_directory(first), _literal_directory(second)
    return one.startswith(other) or other.startswith(one)


def overlapping(wanted: list[str], held: list[str]) -> list[str]:
    """The patterns of ``held`` that overlap any of ``wanted``."""
    return [h for h in held if any(overlap(w, h) for w in wanted)]
