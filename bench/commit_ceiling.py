"""``python -m bench.commit_ceiling --database postgresql://…``: how many transactions a second
that add to the event feed one PostgreSQL can commit, with and without the ordering lock.

Relay draws event ids under one transaction-level advisory lock held until commit, so that ids
become visible in id order (docs/behaviour.md). Those commits cannot share an fsync: this caps
event-writing requests across every instance, whatever their number. Here sessions loop on
BEGIN, the locked insert Relay sends, COMMIT, in a scratch database, against the same loop
without the lock, and with ``synchronous_commit`` on and off. Printed: commits a second.
"""

from __future__ import annotations

import argparse
import asyncio
import time

import asyncpg

from bench.__main__ import migrate_postgres, plain_url, scratch_database
from relay_core.storage.postgres import ORDERED_COMMITS_LOCK

INSERT = (
    "INSERT INTO events (kind, audience, subject_id, data, created_at) "
    "VALUES ('bench', '*', '1', '{}', now())"
)


async def commits_per_second(
    url: str, sessions: int, locked: bool, synchronous: str, seconds: float
) -> float:
    done = 0
    deadline = time.monotonic() + seconds

    async def session() -> None:
        nonlocal done
        conn = await asyncpg.connect(url, server_settings={"synchronous_commit": synchronous})
        try:
            while time.monotonic() < deadline:
                await conn.execute("BEGIN")
                if locked:
                    await conn.execute("SELECT pg_advisory_xact_lock($1)", ORDERED_COMMITS_LOCK)
                await conn.execute(INSERT)
                await conn.execute("COMMIT")
                done += 1
        finally:
            await conn.close()

    await asyncio.gather(*(session() for _ in range(sessions)))
    return done / seconds


async def measure(url: str, seconds: float) -> None:
    await migrate_postgres(url)
    print(f"{'sessions':>8} {'synchronous_commit':>18} {'locked /s':>10} {'unlocked /s':>12}")
    for synchronous in ("on", "off"):
        for sessions in (1, 8, 32):
            locked = await commits_per_second(url, sessions, True, synchronous, seconds)
            free = await commits_per_second(url, sessions, False, synchronous, seconds)
            print(f"{sessions:>8} {synchronous:>18} {locked:>10.0f} {free:>12.0f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.commit_ceiling", description=__doc__)
    parser.add_argument("--database", required=True, help="postgresql://host:port/db")
    parser.add_argument("--seconds", type=float, default=5.0, help="per measurement")
    args = parser.parse_args()
    with scratch_database(plain_url(args.database)) as url:
        asyncio.run(measure(url, args.seconds))


if __name__ == "__main__":
    main()
