"""npm tools the tests run, pinned and installed once under the temp dir, reused by later runs."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest


def npm_packages(packages: dict[str, str], *, why: str) -> Path:
    """A ``node_modules`` holding ``packages`` (name to exact version); the test is skipped,
    saying ``why`` it needed them, where npm is not installed."""
    if shutil.which("npm") is None:
        pytest.skip(f"npm is not installed: {why}")
    key = "-".join(f"{name.replace('/', '_')}@{version}" for name, version in packages.items())
    home = Path(tempfile.gettempdir()) / "relay-npm-tools" / key
    installed = home / ".installed"
    if not installed.exists():
        home.mkdir(parents=True, exist_ok=True)
        (home / "package.json").write_text('{"private": true}')
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"]
            + [f"{name}@{version}" for name, version in packages.items()],
            cwd=home,
            check=True,
            timeout=600,
        )
        installed.touch()
    return home / "node_modules"
