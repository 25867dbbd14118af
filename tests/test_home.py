"""The tests' own homes, and the watch on the real one (tests/home.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from relay_client.identity import identity_path
from tests import home


def test_each_test_has_a_home_of_its_own(tmp_path_factory: pytest.TempPathFactory) -> None:
    mine = Path(os.environ["HOME"])
    assert mine != home.REAL_HOME and mine.is_relative_to(tmp_path_factory.getbasetemp())
    assert Path(os.environ["XDG_CONFIG_HOME"]) == mine / ".config"
    assert identity_path("http://127.0.0.1:8765", "probe").is_relative_to(mine)
    # A process a test starts has it too.
    seen = subprocess.run(
        [sys.executable, "-c", "import pathlib; print(pathlib.Path.home())"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert seen.stdout.strip() == str(mine)


def test_a_write_into_the_real_home_is_refused_and_named() -> None:
    target = home.REAL_HOME / ".config" / "relay" / f"probe-{uuid.uuid4().hex}.json"
    with pytest.raises(PermissionError, match="a test wrote into the real home"):
        target.write_text("{}")
    with pytest.raises(PermissionError):
        os.open(home.REAL_HOME / f".probe-{uuid.uuid4().hex}", os.O_WRONLY | os.O_CREAT)
    assert not target.exists()
    written = list(home.taken_writes())  # taken here, so that this test itself passes
    assert len(written) == 2 and written[0] == f"open {target}"


def test_reading_the_real_home_and_writing_elsewhere_are_not_refused(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("fine")
    os.listdir(home.REAL_HOME)
    assert list(home.taken_writes()) == []


def test_a_change_by_another_process_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the end of the run compares, shown on a stand-in for Relay's directories."""
    watched = tmp_path / "real" / ".config" / "relay"
    watched.mkdir(parents=True)
    monkeypatch.setattr(home, "RELAY_DIRS", [watched])
    before = home.snapshot()
    subprocess.run(
        [sys.executable, "-c", f"open({str(watched / 'x.json')!r}, 'w').write('{{}}')"], check=True
    )
    assert home.changes(before) == [f"dir {watched}/.", f"file {watched}/x.json"]
