"""``python -m bench.reservations``: what a reservation grant costs SQLite's one writer, and an
unrelated write that waits behind it, with a workspace at the shipped caps' maximum.

The services over a SQLite file (no HTTP: what is measured is the grant's own work). A
workspace is filled to the default caps, less the measured request: 99 agents, each holding
10 reservations of 10 patterns (990 reservations, 9,900 patterns). Then, for ``--grants``
rounds, one more agent asks for 100 patterns (the most a request holds, which bring the
workspace to its 10,000) that nobody holds, and releases them, while another agent sends a
direct message a millisecond after the grant starts. It prints the grant's time in the writer
(its write unit, from taking the writer to its commit) and in all, and the message's time in
all (what every other write waits), as medians and p99, in milliseconds.

Run it from another checkout (``PYTHONPATH=/that/checkout python -m bench.reservations``)
to weigh a change against it: it uses only what the services have offered since
reservations came.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from relay_api import models as m
from relay_core.auth import Caller
from relay_core.ports import UnitOfWork
from relay_core.services import Context, CoreConfig, Services
from relay_core.storage.sqlite import SqliteStorage
from relay_server.bridges.local import LocalBridge

WORKSPACE = "github.com/acme/monorepo"
AGENTS, RESERVATIONS, PATTERNS = 99, 10, 10  # and the request's 100: the shipped caps
ASKED = 100  # patterns in the measured request: the most one holds


class TimedStorage(SqliteStorage):
    """A SQLite store that keeps how long each write unit held the writer."""

    writes: list[float]

    @asynccontextmanager
    async def unit_of_work(  # type: ignore[override]
        self, *, write: bool, following: bool = False
    ) -> AsyncIterator[UnitOfWork]:
        started = time.perf_counter()
        async with super().unit_of_work(write=write, following=following) as uow:
            yield uow
        if write:
            self.writes.append(time.perf_counter() - started)


def ms(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return f"median {statistics.median(ordered) * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms"


async def fill(storage: SqliteStorage) -> None:
    """The workspace near its caps: each agent's reservations of patterns nobody else holds
    (stored as a grant stores them, in one unit: the bench measures the grant after them)."""
    now = datetime.now(UTC)
    async with storage.unit_of_work(write=True) as uow:
        for agent in range(AGENTS):
            for held in range(RESERVATIONS):
                paths = [f"pkg{agent}/mod{held}/file{n}.py" for n in range(PATTERNS)]
                reservation = m.Reservation(
                    workspace=WORKSPACE,
                    paths=paths,
                    exclusive=True,
                    holder=f"holder-{agent}",
                    created_at=now,
                    expires_at=now + timedelta(days=1),
                )
                await uow.reservations.insert(reservation)
        await uow.commit()


async def measure(grants: int, data: Path) -> None:
    url = f"sqlite+aiosqlite:///{data / 'relay.db'}"
    storage = TimedStorage(url)
    storage.writes = []
    await storage.migrate()
    services = Services(Context(storage, (LocalBridge(),), CoreConfig()))
    operator = Caller("operator", m.OPERATOR)
    for agent in ("asker", "sender", "reader"):
        await services.agents.register(operator, m.AgentRegister(agent_id=agent))
    await fill(storage)
    storage.writes.clear()
    asker, sender = Caller("agent", "asker"), Caller("agent", "sender")
    paths = [f"new/area/file{n}.py" for n in range(ASKED)]
    grant_writer, grant_total, message_total = [], [], []

    async def grant() -> None:
        started = time.perf_counter()
        body = m.ReservationCreate(workspace=WORKSPACE, paths=paths)
        before = len(storage.writes)
        held = await services.reservations.create(asker, body)
        grant_total.append(time.perf_counter() - started)
        grant_writer.append(storage.writes[before])
        await services.reservations.release(asker, held.reservation_id)

    async def send(round_started: float) -> None:
        # Asked for a millisecond into the round, and timed from then: the grant may hold the
        # event loop (statements run on it) before this task first runs.
        await asyncio.sleep(0.001)
        started = round_started + 0.001
        await services.messages.send(sender, m.MessageCreate(to="reader", text="unrelated"))
        message_total.append(time.perf_counter() - started)

    for _ in range(grants):
        await asyncio.gather(grant(), send(time.perf_counter()))
    await storage.close()
    print(
        f"workspace: {AGENTS * RESERVATIONS} reservations, {AGENTS * RESERVATIONS * PATTERNS}"
        f" patterns; each grant asks for {ASKED}, {grants} rounds"
    )
    print(f"grant, in the writer: {ms(grant_writer)}")
    print(f"grant, in all:        {ms(grant_total)}")
    print(f"unrelated message:    {ms(message_total)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.reservations", description=__doc__)
    parser.add_argument("--grants", type=int, default=50, help="rounds measured")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="relay-bench-reservations-") as tmp:
        asyncio.run(measure(args.grants, Path(tmp)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
