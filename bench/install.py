"""``python -m bench.install``: what each install of Relay weighs and how fast it starts.

It builds this checkout's wheel, installs it into two fresh virtual environments as users do
(the agent's: the wheel alone; the server's: the wheel with its ``server`` extra), and reports
for each the packages installed (pip and setuptools left out), the environment's size on
disk, and medians of wall time over a number of runs: the interpreter alone, ``import
relay_client``, ``relay --version``; for the server, ``import relay_server.app`` and how long
``relay serve`` on a fresh home takes to answer ``/health``. The targets are issue #79's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.__main__ import free_port

ROOT = Path(__file__).parents[1]
LEFT_OUT = {"pip", "setuptools"}  # what every venv has; not Relay's
# (install, measure) -> target
TARGETS = {
    ("agent", "packages"): 20,
    ("agent", "size_mb"): 60,
    ("agent", "import relay_client"): 60,
    ("agent", "relay --version"): 150,
    ("server", "packages"): 45,
    ("server", "size_mb"): 130,
    ("server", "import relay_server.app"): 500,
    ("server", "relay serve to /health"): 1500,
}


def built_wheel(into: Path) -> Path:
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(into), str(ROOT)],
        check=True,
        capture_output=True,
    )
    return next(into.glob("relay_agents-*.whl"))


def installed(venv: Path, requirement: str) -> None:
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", requirement]
    subprocess.run(pip, check=True, capture_output=True)


def packages(venv: Path) -> list[str]:
    listed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format", "json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return sorted(p["name"] for p in json.loads(listed) if p["name"].lower() not in LEFT_OUT)


def size_mb(venv: Path) -> float:
    total = sum(p.stat().st_size for p in venv.rglob("*") if p.is_file() and not p.is_symlink())
    return round(total / 1e6, 1)


def median_ms(command: Sequence[str], runs: int, env: dict[str, str]) -> float:
    subprocess.run(command, env=env, capture_output=True, check=True)  # bytecode written
    walls = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, env=env, capture_output=True, check=True)
        walls.append(time.perf_counter() - started)
    return round(statistics.median(walls) * 1000, 1)


def serve_to_health_ms(venv: Path, home: Path, runs: int) -> float:
    """From ``relay serve`` started on a fresh home to its first 200 on ``/health``."""
    walls = []
    for n in range(runs):
        port = free_port()
        env = {"PATH": "/usr/bin:/bin", "HOME": str(home / str(n))}
        started = time.perf_counter()
        server = subprocess.Popen(
            [str(venv / "bin" / "relay"), "serve", "--port", str(port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):
                        break
                except OSError:
                    if server.poll() is not None:
                        raise SystemExit("relay serve stopped before answering") from None
                    time.sleep(0.01)
            walls.append(time.perf_counter() - started)
        finally:
            server.terminate()
            server.wait()
    return round(statistics.median(walls) * 1000, 1)


def measure(runs: int) -> dict[str, dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="relay-bench-install-") as scratch:
        work = Path(scratch)
        wheel = built_wheel(work / "dist")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["HOME"] = str(work / "home")
        found: dict[str, dict[str, Any]] = {}
        for install, requirement in (("agent", str(wheel)), ("server", f"{wheel}[server]")):
            venv = work / install
            installed(venv, requirement)
            python, relay = str(venv / "bin" / "python"), str(venv / "bin" / "relay")
            listed = packages(venv)
            row: dict[str, Any] = {
                "packages": len(listed),
                "size_mb": size_mb(venv),
                "interpreter alone": median_ms([python, "-c", "pass"], runs, env),
                "import relay_client": median_ms([python, "-c", "import relay_client"], runs, env),
                "relay --version": median_ms([relay, "--version"], runs, env),
                "listed": listed,
            }
            if install == "server":
                app = [python, "-c", "import relay_server.app"]
                row["import relay_server.app"] = median_ms(app, runs, env)
                row["relay serve to /health"] = serve_to_health_ms(venv, work / "homes", runs)
            found[install] = row
        shutil.rmtree(work / "dist")
        return found


def print_table(found: dict[str, dict[str, Any]]) -> None:
    print(f"\n{'install':8} {'measure':28} {'found':>10} {'target':>8}")
    for install, row in found.items():
        for measure, value in row.items():
            if measure == "listed":
                continue
            target = TARGETS.get((install, measure))
            shown = "" if target is None else f"{target:>8}"
            met = "" if target is None else (" met" if value <= target else " missed")
            print(f"{install:8} {measure:28} {value:>10} {shown}{met}")
    for install, row in found.items():
        print(f"\n{install}'s packages: {' '.join(row['listed'])}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.install", description=__doc__)
    parser.add_argument("--runs", type=int, default=15, help="times each command is run")
    parser.add_argument("--output", type=Path, help="write the figures as JSON here")
    args = parser.parse_args(argv)
    found = measure(args.runs)
    print_table(found)
    if args.output is not None:
        args.output.write_text(json.dumps(found, indent=2))


if __name__ == "__main__":
    main()
