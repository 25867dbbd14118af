"""A PostgreSQL cluster of a test's own, to stop and start under a running Relay (the shared
one at RELAY_TEST_DATABASE_URL serves every other test and is never stopped).

Made with Debian's ``initdb`` and ``pg_ctl``, as the ``postgres`` user when the tests run as
root (PostgreSQL refuses to run as root); the test is skipped where they are missing.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.live import free_port


def _binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if found:
        return Path(found[-1]).parent
    pg_ctl = shutil.which("pg_ctl")
    return Path(pg_ctl).parent if pg_ctl else None


@dataclass
class Cluster:
    url: str
    _run_as: list[str]
    _pg_ctl: Path
    _data: Path
    _port: int
    _log: Path

    def _ctl(self, *args: str) -> None:
        subprocess.run(
            [*self._run_as, str(self._pg_ctl), "-D", str(self._data), *args],
            check=True,
            capture_output=True,
            timeout=60,
        )

    def start(self) -> None:
        options = f"-p {self._port} -k {self._data.parent} -c listen_addresses=127.0.0.1"
        self._ctl("-o", options, "-l", str(self._log), "-w", "start")

    def stop_fast(self) -> None:
        """PostgreSQL's fast shutdown: every session is ended, in flight or not."""
        self._ctl("-m", "fast", "-w", "stop")


@contextmanager
def private_cluster() -> Iterator[Cluster]:
    """A new cluster in a directory of its own under /tmp (pytest's are root's alone, and the
    postgres user must reach it), started, with trust authentication; gone at the end."""
    binaries = _binaries()
    if binaries is None or not (binaries / "initdb").exists():
        pytest.skip("PostgreSQL's initdb and pg_ctl are not installed")
    run_as: list[str] = []
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root with no postgres user to run PostgreSQL as")
        run_as = ["runuser", "-u", "postgres", "--"]
    root = Path(tempfile.mkdtemp(prefix="relay-pg-"))
    if run_as:
        os.chown(root, owner.pw_uid, owner.pw_gid)
    data = root / "cluster"
    subprocess.run(
        [*run_as, str(binaries / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"],
        check=True,
        capture_output=True,
        timeout=120,
    )
    port = free_port()
    cluster = Cluster(
        f"postgresql+asyncpg://postgres@127.0.0.1:{port}/postgres",
        run_as,
        binaries / "pg_ctl",
        data,
        port,
        root / "postgres.log",
    )
    cluster.start()
    try:
        yield cluster
    finally:
        subprocess.run(
            [*run_as, str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(root, ignore_errors=True)
