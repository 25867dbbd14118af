"""Tests leave the developer's home alone: each runs with a home of its own, and a write into
the real one fails the test that made it (and the run, for a process a test started).

The session's processes (servers started once per module, say) get a home made for the run;
each test gets its own on top. A write by this process into the real home is refused where it
is attempted (an audit hook sees every ``open`` for writing, ``mkdir``, rename, removal and
SQLite connection), and named by the test's failure. A process a test starts inherits the test's
home; should one write into the real home anyway, the comparison of Relay's directories there
before and after the run fails it.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Each variable a program reads to find a home for its files, and where under a home it points.
PLACES = {
    "HOME": "",
    "XDG_CONFIG_HOME": ".config",
    "XDG_DATA_HOME": ".local/share",
    "XDG_STATE_HOME": ".local/state",
    "XDG_CACHE_HOME": ".cache",
}
# Named by the run's first process for those it starts (pytest-xdist's workers start with the
# run's home as theirs).
REAL_HOME_VARIABLE = "RELAY_TEST_REAL_HOME"
REAL_HOME = Path(os.environ.get(REAL_HOME_VARIABLE) or os.path.expanduser("~")).resolve()
# Relay's own directories in the real home, whoever writes them.
RELAY_DIRS = [REAL_HOME / under / "relay" for under in list(PLACES.values())[1:]]
# Under the real home, what a test run may write: the checkout (caches, bytecode), the
# interpreter's environment, and the system's temporary directory; but not one that holds the
# real home itself (a HOME under /tmp), which would allow all of it.
ALLOWED = [
    place
    for place in (
        Path(__file__).resolve().parents[1],
        Path(sys.prefix).resolve(),
        Path(tempfile.gettempdir()).resolve(),
    )
    if not REAL_HOME.is_relative_to(place)
]
_WRITING_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_MUTATING_EVENTS = {"os.mkdir", "os.rename", "os.remove", "os.rmdir", "os.symlink", "os.link"}

writes: list[str] = []


def use_home(home: Path, setenv: Any = os.environ.__setitem__) -> None:
    """Point HOME and every XDG directory at ``home`` (made here)."""
    for variable, under in PLACES.items():
        place = home / under
        place.mkdir(parents=True, exist_ok=True)
        setenv(variable, str(place))


def _in_real_home(path: Any) -> bool:
    if isinstance(path, int) or path is None:  # an open file descriptor: checked when opened
        return False
    try:
        where = Path(os.fsdecode(path)).expanduser().absolute()
    except (TypeError, ValueError):
        return False
    if not where.is_relative_to(REAL_HOME) and not where.resolve().is_relative_to(REAL_HOME):
        return False
    return not any(where.resolve().is_relative_to(allowed) for allowed in ALLOWED)


def _writes(event: str, args: tuple[Any, ...]) -> Any:
    """The path an audited event writes, if it writes one."""
    if event == "open":
        path, mode, flags = args
        writing = any(c in mode for c in "wax+") if isinstance(mode, str) else None
        if writing is None:
            writing = bool(flags & _WRITING_FLAGS)
        return path if writing else None
    if event == "sqlite3.connect":
        database = args[0]
        return None if os.fsdecode(database) in (":memory:", "") else database
    if event in _MUTATING_EVENTS:
        return args[0]
    return None


def _guard(event: str, args: tuple[Any, ...]) -> None:
    if event not in _MUTATING_EVENTS and event not in ("open", "sqlite3.connect"):
        return
    path = _writes(event, args)
    if path is not None and _in_real_home(path):
        writes.append(f"{event} {os.fsdecode(path)}")
        raise PermissionError(f"a test wrote into the real home: {os.fsdecode(path)}")


def snapshot() -> dict[str, tuple[int, float]]:
    """Every file and folder under Relay's directories in the real home, with size and time."""
    found: dict[str, tuple[int, float]] = {}
    for top in RELAY_DIRS:
        for folder, _dirs, files in os.walk(top):
            for name in [".", *files]:
                info = os.lstat(os.path.join(folder, name))
                kind = "dir" if stat.S_ISDIR(info.st_mode) else "file"
                found[f"{kind} {os.path.join(folder, name)}"] = (info.st_size, info.st_mtime)
    return found


def start_run() -> dict[str, tuple[int, float]]:
    """Give the run a home of its own and start watching the real one; what it holds now."""
    before = snapshot()
    os.environ[REAL_HOME_VARIABLE] = str(REAL_HOME)
    use_home(Path(tempfile.mkdtemp(prefix="relay-test-home-")))
    sys.addaudithook(_guard)
    return before


def changes(before: dict[str, tuple[int, float]]) -> list[str]:
    """What changed under Relay's directories in the real home since ``before``."""
    after = snapshot()
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def taken_writes() -> Iterator[str]:
    """The writes into the real home refused since the last call."""
    while writes:
        yield writes.pop(0)
