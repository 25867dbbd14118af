"""``python -m bench.commit_ceiling --database postgresql://…``: how many transactions a second
that add to the event feed one PostgreSQL can commit, against transactions that insert a plain
row.

Relay keys an event by its transaction (docs/resources/events.md) so that no commit waits for
another: such commits share PostgreSQL's flushes like any others. (Until this was so, events
took their ids under one advisory lock held until commit, which capped them at one flush each
across every instance: ~1,300/s on the machine of docs/performance.md.) Here sessions loop on
BEGIN, the insert Relay sends, COMMIT, in a scratch database, against the same loop with an
insert that takes its id from the sequence, with ``synchronous_commit`` on and off. Printed:
commits a second.
"""

from __future__ import annotations

import argparse
import asyncio
import time

import asyncpg

from bench.__main__ import migrate_postgres, plain_url, scratch_database

PLAIN_INSERT = (
    "INSERT INTO events (kind, audience, subject_id, data, created_at) "
    "VALUES ('bench', '*', '1', '{}', now())"
)
FEED_INSERT = (
    "INSERT INTO events (kind, audience, subject_id, data, created_at, event_id) "
    "VALUES ('bench', '*', '1', '{}', now(), relay_feed_id(0))"
)


async def commits_per_second(
    url: str, sessions: int, insert: str, synchronous: str, seconds: float
) -> float:
    done = 0
    deadline = time.monotonic() + seconds

    async def session() -> None:
        nonlocal done
        conn = await asyncpg.connect(url, server_settings={"synchronous_commit": synchronous})
        try:
            while time.monotonic() < deadline:
                await conn.execute("BEGIN")
                await conn.execute(insert)
                await conn.execute("COMMIT")
                done += 1
        finally:
            await conn.close()

    await asyncio.gather(*(session() for _ in range(sessions)))
    return done / seconds


async def measure(url: str, seconds: float) -> None:
    await migrate_postgres(url)
    print(f"{'sessions':>8} {'synchronous_commit':>18} {'feed /s':>10} {'plain /s':>10}")
    for synchronous in ("on", "off"):
        for sessions in (1, 8, 32):
            feed = await commits_per_second(url, sessions, FEED_INSERT, synchronous, seconds)
            plain = await commits_per_second(url, sessions, PLAIN_INSERT, synchronous, seconds)
            print(f"{sessions:>8} {synchronous:>18} {feed:>10.0f} {plain:>10.0f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.commit_ceiling", description=__doc__)
    parser.add_argument("--database", required=True, help="postgresql://host:port/db")
    parser.add_argument("--seconds", type=float, default=5.0, help="per measurement")
    args = parser.parse_args()
    with scratch_database(plain_url(args.database)) as url:
        asyncio.run(measure(url, args.seconds))


if __name__ == "__main__":
    main()
