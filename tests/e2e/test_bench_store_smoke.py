"""The bigger-store benchmark keeps working: a smoke run (it asserts nothing about speed)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.bigger_store import MEASURED


@pytest.mark.skipif(
    shutil.which("wrk") is None, reason="wrk is not installed (apt-get install wrk)"
)
def test_the_bigger_store_is_measured_beside_the_smaller(tmp_path: Path) -> None:
    output = tmp_path / "store.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.bigger_store", "--smoke", "--output", str(output)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).parents[2],
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(output.read_text())
    assert [row["scenario"] for row in report["results"]] == list(MEASURED)
    for row in report["results"]:
        for store in ("smaller", "bigger"):
            assert row[store]["rps"] > 0 and row[store]["errors"] == 0, row
        assert row["share"] == row["bigger"]["rps"] / row["smaller"]["rps"]
    stores = report["stores"]
    assert stores["bigger"]["messages"] == 10 * stores["smaller"]["messages"]
    assert stores["bigger"]["on_disk_mb"] > stores["smaller"]["on_disk_mb"] > 0
    assert "share" in done.stdout and "MB on disk" in done.stdout
