"""npm tools the tests run, pinned and installed once under the temp dir, reused by later runs."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest


def npm_packages(packages: dict[str, str], *, why: str) -> Path:
    """A ``node_modules`` holding ``packages`` (name to exact version); the test is skipped,
    saying ``why`` it needed them, where npm is not installed.

    One install at a time (a lock beside it: the test workers share the temp dir), into a
    directory of its own renamed into place once npm succeeded, so an install cut short never
    leaves a half-written ``node_modules`` that a later run would take for installed."""
    if shutil.which("npm") is None:
        pytest.skip(f"npm is not installed: {why}")
    key = "-".join(f"{name.replace('/', '_')}@{version}" for name, version in packages.items())
    tools = Path(tempfile.gettempdir()) / "relay-npm-tools"
    home = tools / key
    if (home / ".installed").exists():
        return home / "node_modules"
    tools.mkdir(parents=True, exist_ok=True)
    with (tools / f".{key[:100]}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not (home / ".installed").exists():
            _install(packages, home)
    return home / "node_modules"


def _install(packages: dict[str, str], home: Path) -> None:
    fresh = Path(tempfile.mkdtemp(prefix=".installing-", dir=home.parent))
    try:
        (fresh / "package.json").write_text('{"private": true}')
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"]
            + [f"{name}@{version}" for name, version in packages.items()],
            cwd=fresh,
            check=True,
            timeout=600,
        )
        (fresh / ".installed").touch()
        shutil.rmtree(home, ignore_errors=True)  # what an install cut short left
        os.rename(fresh, home)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
