"""Which files a reservation's patterns cover, and whether two patterns may cover the same.

A pattern is git's wildmatch syntax, relative to the repository's root (as a gitignore line
anchored there: ``*`` stays within a directory, ``**`` crosses them, a directory covers what
is in it), matched by pathspec, a maintained implementation of git's rules.

Two patterns overlap, conservatively, when either matches the other taken as a path, or when
the literal parts before their first wildcard are, directory-wise, one a prefix of the other
(``src/*.py`` and ``src/api/x.py``; ``*.md`` and anything). This may see an overlap where a
finer rule would not; it never misses one. A pattern covers only paths under its literal
directory, so the second test implies the first: two patterns overlap exactly when their
literal directories are one a prefix of the other, which ``HeldPatterns`` finds by lookup
rather than by weighing every pattern held.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable
from typing import Any, Generic, TypeVar

import pathspec

WILDCARDS = "*?[\\"
_WILDCARD = re.compile("[" + re.escape(WILDCARDS) + "]")
H = TypeVar("H")


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
    wildcard = _WILDCARD.search(pattern)
    if wildcard is None:
        return pattern.rstrip("/") + "/"
    return pattern[: pattern.rfind("/", 0, wildcard.start()) + 1]


def overlap(first: str, second: str) -> bool:
    """Whether the two patterns may cover one same path (conservatively: never a miss)."""
    if covers(first, second) or covers(second, first):
        return True
    one, other = _literal_directory(first), _literal_directory(second)
    return one.startswith(other) or other.startswith(one)


class HeldPatterns(Generic[H]):
    """Patterns held, each with its holder (a reservation), by literal directory: the holders
    of those that overlap a wanted pattern are found in time of the directory's depth and of
    what they are, not of everything held."""

    def __init__(self, held: Iterable[tuple[str, H]]) -> None:
        self._by_directory: dict[str, list[H]] = {}
        for pattern, holder in held:
            self._by_directory.setdefault(_literal_directory(pattern), []).append(holder)
        self._directories = sorted(self._by_directory)

    def overlapping(self, wanted: str) -> list[H]:
        """The holders of the patterns that overlap ``wanted`` (each once per pattern)."""
        directory = _literal_directory(wanted)
        found: list[H] = []
        # Held directories that hold this one: each of its own prefixes, the root's included.
        cut = directory.find("/")
        prefixes = [""]
        while cut >= 0:
            prefixes.append(directory[: cut + 1])
            cut = directory.find("/", cut + 1)
        for prefix in prefixes:
            if prefix != directory:
                found.extend(self._by_directory.get(prefix, ()))
        # Held directories this one holds: itself and those under it, in sorted order.
        at = bisect.bisect_left(self._directories, directory)
        while at < len(self._directories) and self._directories[at].startswith(directory):
            found.extend(self._by_directory[self._directories[at]])
            at += 1
        return found
