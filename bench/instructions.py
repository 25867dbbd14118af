"""``python -m bench.instructions``: instructions per request, counted by valgrind's callgrind.

Wall-clock figures on a shared machine move by ±15–20% from one run to the next, more than most
single levers buy. An instruction count does not: the same code, store and requests count
within about 1% of each other, whatever else the machine does. So a lever is judged here first
(run it in two checkouts, before and after), then in ``python -m bench``.

Seeds a store (100,000 messages, the bench's scenarios' rows), starts Relay (or, with
``--bare``, the bare app) under ``valgrind --tool=callgrind`` with instrumentation off, warms
each scenario up with wrk, then counts the server's instructions (every thread) over a run of
wrk at 8 connections and divides by the requests answered. Under valgrind the server runs
~50× slower, so each scenario answers a few hundred requests.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.__main__ import (
    OPERATOR,
    SCENARIOS,
    Scenario,
    Sizes,
    bare_script,
    free_port,
    script,
    seed,
)

SIZES = Sizes(agents=1000, messages=100_000, ackable=20_000, claimable=20_000, listed_tasks=10_000)


def _counted(dump: Path) -> int:
    """Instructions in one callgrind dump (its ``totals:`` line)."""
    for line in dump.read_text(errors="replace").splitlines():
        if line.startswith("totals:"):
            return int(line.split()[1])
    return 0


def _started(url: str, probe: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 300  # Python's start-up under valgrind takes a while
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(url + probe, timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.5)
    raise SystemExit("bench.instructions: the server did not start under valgrind")


def _count(scenario: Scenario, pid: int, url: str, work: Path, seconds: int, bare: bool) -> float:
    """The server's instructions per request answered over ``seconds`` of ``scenario``."""
    if bare:
        warm = counted = bare_script(scenario, SIZES, work)
    else:
        warm = script(scenario, SIZES, work)
        # A counted scenario (ack, claim) counts on ids the warm-up did not take: all first.
        counted = script(scenario, SIZES, work, scenario.first_id(SIZES) + SIZES.ackable // 2)

    def drive(run_seconds: int, lua: Path) -> str:
        command = ["wrk", "-t1", "-c8", f"-d{run_seconds}s", "-s", str(lua), url]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout

    def control(flag: str, value: str | None = None) -> None:
        command = ["callgrind_control", flag, *([value] if value else []), str(pid)]
        subprocess.run(command, capture_output=True, check=True)

    drive(3, warm)
    control("-i", "on")
    output = drive(seconds, counted)
    control("-i", "off")
    control("-d")
    time.sleep(1)  # the dump is written at the server's next instrumented moment
    dumps = list(work.glob("callgrind.out*"))
    instructions = sum(_counted(dump) for dump in dumps)
    for dump in dumps:
        dump.unlink()
    match = re.search(r"RESULT (\{.*\})", output)
    requests = json.loads(match.group(1))["requests"] if match else 0
    return instructions / max(1, requests)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.instructions", description=__doc__)
    names = [scenario.name for scenario in SCENARIOS]
    parser.add_argument("scenarios", nargs="*", default=names, help=f"of {', '.join(names)}")
    parser.add_argument("--seconds", type=int, default=5, help="counted per scenario")
    parser.add_argument("--bare", action="store_true", help="count the bare app instead")
    parser.add_argument("--quiet", action="store_true", help="at WARNING: no access line")
    args = parser.parse_args(argv)
    for tool in ("valgrind", "callgrind_control", "wrk"):
        if shutil.which(tool) is None:
            print(f"bench.instructions: {tool} is not installed", file=sys.stderr)
            return 2
    with tempfile.TemporaryDirectory(prefix="relay-instructions-") as tmp:
        work = Path(tmp)
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("RELAY_")}
        if args.bare:
            target, probe = ["-m", "bench.reference", str(port)], "/small"
        else:
            seed(work / "data", SIZES)
            env |= {
                "RELAY_DATA_DIR": str(work / "data"),
                "RELAY_OPERATOR_TOKEN": OPERATOR,
                "RELAY_RATE_LIMIT": "0",  # the shipped defaults otherwise: access lines at INFO
                **({"RELAY_LOG_LEVEL": "WARNING"} if args.quiet else {}),
            }
            target, probe = ["-m", "relay_server", "--port", str(port)], "/health"
        dumps = work / "callgrind.out"
        server = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no"]
            + [f"--callgrind-out-file={dumps}", sys.executable, *target],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _started(url, probe, server)
            for scenario in SCENARIOS:
                if scenario.name in args.scenarios:
                    per = _count(scenario, server.pid, url, work, args.seconds, args.bare)
                    print(f"{scenario.name:26} {per / 1000:8.1f}k instructions a request")
        finally:
            server.terminate()
            server.wait(timeout=60)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
