"""``python -m bench --against REF``: another revision's Relay (a tag, a commit, a branch),
measured in the same run as this one, so that a change that slows a fleet scenario by more
than the run-to-run spread is seen before it lands.

The other revision is checked out beside this one (``git worktree``), seeds its own store with
its own code (its schema may be older than this one's) and serves it from its own code, with
this environment's packages.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench.__main__ import Sizes

ROOT = Path(__file__).parents[1]
# What the other revision's code runs to seed its store: its own bench's fast path.
SEED = (
    "import json, sys; from pathlib import Path; from bench.__main__ import Sizes, seed; "
    "seed(Path(sys.argv[1]), Sizes(**json.loads(sys.argv[2])))"
)


@contextmanager
def checkout(ref: str) -> Iterator[tuple[Path, str]]:
    """``ref``'s tree in a temporary directory, and its commit's short id; removed after."""
    commit = git("rev-parse", "--short", f"{ref}^{{commit}}")
    with tempfile.TemporaryDirectory(prefix="relay-bench-against-") as tmp:
        tree = Path(tmp) / "relay"
        git("worktree", "add", "--detach", "--quiet", str(tree), commit)
        try:
            yield tree, commit
        finally:
            git("worktree", "remove", "--force", str(tree))


def git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench: git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


def code_env(tree: Path) -> dict[str, str]:
    """The environment that runs ``tree``'s code rather than this checkout's (its directory
    first on the path, before the installed one)."""
    return {"PYTHONPATH": os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")])}


def seed_with(tree: Path, data_dir: Path, sizes: Sizes) -> None:
    """A store of ``sizes`` at ``data_dir``, seeded and migrated by ``tree``'s code."""
    subprocess.run(
        [sys.executable, "-c", SEED, str(data_dir), json.dumps(asdict(sizes))],
        cwd=tree,
        env=os.environ | code_env(tree),
        check=True,
    )


def compared(results: list[dict[str, Any]], other: str) -> list[dict[str, Any]]:
    """Each fleet scenario this code and ``other``'s both ran: this code's rate as a share of
    the other's, and whether it is slower by more than either one's run-to-run spread."""
    # The fleet's rows, measured in rounds (a feature's paired rows share a scenario's name on
    # a small store, and the growth rows have no spread: neither is compared).
    fleet = [r for r in results if "spread" in r]
    mine = {(r["scenario"], r["connections"]): r for r in fleet if r["backend"] == "sqlite"}
    rows = []
    for theirs in (r for r in fleet if r["backend"] == other):
        row = mine.get((theirs["scenario"], theirs["connections"]))
        if row is None:
            continue
        share = row["rps"] / theirs["rps"]
        spread = max(row["spread"], theirs["spread"])
        rows.append(
            {
                "scenario": theirs["scenario"],
                "connections": theirs["connections"],
                "share": share,
                "spread": spread,
                "slower": share < 1 - spread,
            }
        )
    return rows


def print_compared(rows: list[dict[str, Any]], other: str) -> None:
    print(f"\nThis code against {other}: its rate as a share of theirs (the spread: runs' own)")
    for row in rows:
        verdict = "SLOWER" if row["slower"] else "within the spread" if row["share"] < 1 else "-"
        print(
            f"{row['scenario']:34} {row['connections']:>5} {row['share']:>7.1%}"
            f"  ±{row['spread']:.1%}  {verdict}"
        )
