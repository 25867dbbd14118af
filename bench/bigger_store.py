"""``python -m bench.bigger_store``: whether Relay keeps its pace as the store grows.

Two SQLite stores seeded by the bench's fast path, alike but for their size (by default
100,000 and 10,000,000 messages), each served by Relay at its shipped defaults; the fleet's
POST, inbox and room page at 32 connections on both, in interleaved rounds. It prints each
scenario's rate on either store, the bigger store's share of the smaller's (the target: at
least 85%), and each store's size on disk. ``--smoke`` does the same on tiny stores for a
second a run, to keep the harness working (it asserts nothing about speed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.__main__ import FLEET_SCENARIOS, HERE, Process, Sizes, interleaved, relay, script, seed

# The scenarios whose cost could grow with the store: a write that indexes and threads, an
# inbox and a room's newest page.
MEASURED = ("post_message", "inbox_50_pending", "room_messages_100")
TARGET = 0.85  # the bigger store's rate, as a share of the smaller's


def sizes(messages: int, agents: int) -> Sizes:
    """A store of ``messages`` messages (its inboxes' and its room's among them)."""
    return Sizes(agents=agents, messages=messages, ackable=0, claimable=0, listed_tasks=200)


def on_disk_mb(data_dir: Path) -> float:
    """The store's files (the database and any write-ahead log), in MB."""
    return sum(f.stat().st_size for f in data_dir.glob("relay.db*")) / 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bigger_store", description=__doc__)
    parser.add_argument("--messages", type=int, default=10_000_000, help="the bigger store's")
    parser.add_argument("--reference", type=int, default=100_000, help="the smaller store's")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds a run")
    parser.add_argument("--smoke", action="store_true", help="tiny stores, one short round")
    parser.add_argument("--output", type=Path, help="the JSON report (default: bench/results)")
    args = parser.parse_args(argv)
    agents = 100 if args.smoke else 1000
    small = sizes(2_000 if args.smoke else args.reference, agents)
    big = sizes(20_000 if args.smoke else args.messages, agents)
    rounds, duration = (1, 1.0) if args.smoke else (args.rounds, args.duration)
    output = args.output or HERE / "results" / f"store-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.json"

    stores: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="relay-bench-store-") as tmp, ExitStack() as stack:
        work = Path(tmp)
        servers: dict[str, Process] = {}
        for name, store in (("smaller", small), ("bigger", big)):
            print(f"seeding {store.messages:,} messages …", file=sys.stderr)
            started = time.monotonic()
            seed(work / name, store)
            stores[name] = {
                "messages": store.messages,
                "seed_s": round(time.monotonic() - started, 1),
                "on_disk_mb": round(on_disk_mb(work / name), 1),
            }
        os.sync()  # the stores on the disk before the first run, as a served store is
        for name in stores:
            servers[name] = relay(work / name)
            stack.callback(servers[name].stop)
        rows = []
        for scenario in (s for s in FLEET_SCENARIOS if s.name in MEASURED):
            lua = script(scenario, big, work)
            measured = interleaved(servers, ("smaller", "bigger"), lua, rounds, duration)
            smaller, bigger = measured["smaller"], measured["bigger"]
            share = bigger["rps"] / smaller["rps"]
            rows.append(
                {
                    "scenario": scenario.name,
                    "smaller": smaller,
                    "bigger": bigger,
                    "share": share,
                    "met": share >= TARGET,
                }
            )
    report = {"when": datetime.now(UTC).isoformat(), "smoke": args.smoke, "stores": stores}
    report |= {"rounds": rounds, "duration_s": duration, "results": rows}
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(report, indent=2))
    print_report(stores, rows)
    return 0


def print_report(stores: dict[str, dict[str, Any]], rows: list[dict[str, Any]]) -> None:
    small, big = stores["smaller"]["messages"], stores["bigger"]["messages"]
    print(f"\n{'scenario':<20} {f'{small:,} msgs':>14} {f'{big:,} msgs':>16} {'share':>7}  target")
    for row in rows:
        verdict = "met" if row["met"] else "MISSED"
        rates = f"{row['smaller']['rps']:>10,.0f} r/s {row['bigger']['rps']:>12,.0f} r/s"
        print(f"{row['scenario']:<20} {rates} {row['share']:>6.0%}  ≥ {TARGET:.0%} {verdict}")
    for name, store in stores.items():
        print(
            f"the {name} store: {store['messages']:,} messages, {store['on_disk_mb']:,.0f} MB on"
            f" disk (seeded in {store['seed_s']:.0f} s)"
        )


if __name__ == "__main__":
    sys.exit(main())
