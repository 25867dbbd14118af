"""The benchmark harness keeps working: a smoke run (it asserts nothing about speed)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.__main__ import FLEET_SCENARIOS, SCENARIOS
from bench.startup import TARGETS as STARTUP_TARGETS
from tests.conftest import PG_URL


@pytest.mark.skipif(
    shutil.which("wrk") is None, reason="wrk is not installed (apt-get install wrk)"
)
def test_bench_smoke_run_measures_every_scenario(tmp_path: Path) -> None:
    output = tmp_path / "bench.json"
    # With a PostgreSQL server at hand, Relay on it is measured beside SQLite; and another
    # revision's code beside this one's (here the same commit, from a checkout of its own).
    database = ["--database", PG_URL] if PG_URL else []
    done = subprocess.run(
        [
            *(sys.executable, "-m", "bench", "--smoke", "--connections", "1"),
            *("--output", str(output), *database, "--against", "HEAD"),
        ],
        capture_output=True,
        text=True,
        # Two backends, this revision against HEAD, and the command's start: about 240 s on two
        # idle cores, near 300 s when the rest of the suite runs beside it.
        timeout=600,
        cwd=Path(__file__).parents[2],
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(output.read_text())
    # Each wrk run was written as it ended, this code's and the other revision's.
    runs = [json.loads(line) for line in output.with_suffix(".runs.jsonl").read_text().splitlines()]
    assert {"relay", "relay_previous", "bare"} <= {run["server"] for run in runs}
    assert all(run["rps"] > 0 and run["script"].endswith(".lua") for run in runs)
    for backend in ("sqlite", "postgresql") if PG_URL else ("sqlite",):
        measured = {
            row["scenario"]
            for row in report["results"]
            if row["store"] == "large" and row["backend"] == backend
        }
        assert {s.name for s in SCENARIOS} <= measured, backend
    for row in report["results"]:
        assert row["rps"] > 0 and row["errors"] == 0, row
        if row["ratio"] is not None:
            assert row["bare_rps"] > 0
    assert "ratio" in done.stdout  # the table was printed
    compared = report["against"]["compared"]
    assert {row["scenario"] for row in compared} == {s.name for s in FLEET_SCENARIOS}
    assert all(row["share"] > 0 and row["spread"] >= 0 for row in compared)
    assert "This code against HEAD" in done.stdout
    assert report["relay_peak_rss_mb"] > 0
    assert any(t["target"].startswith("peak server RSS") for t in report["targets"])
    # The relay command's start, each command timed (the hook answered by a policy).
    assert set(report["startup"]) == set(STARTUP_TARGETS)
    assert all(row["median_ms"] > 0 for row in report["startup"].values())


def test_the_live_scenario_accounts_for_every_message(tmp_path: Path) -> None:
    """100 streams, 100 direct messages: each arrives once on its recipient's stream, and so do
    the 100 sent across a restart of the server (no timing asserted)."""
    output = tmp_path / "live.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--live", "--smoke", "--output", str(output)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).parents[2],
    )
    assert done.returncode == 0, done.stderr[-3000:]
    live = json.loads(output.read_text())["live"]
    assert live["streams"] == 100 and live["sent"] == 100
    assert live["arrived"] == 100 and live["lost"] == 0 and live["duplicates"] == 0
    # The restart: what was sent while every stream was away, and during the storm, arrived.
    assert live["storm_sent"] == 100 and live["storm_lost"] == 0
    assert "delivery p99" in done.stdout
