"""Coalescing: calls that arrive during a run share the next run, never the one under way."""

from __future__ import annotations

import asyncio

import pytest

from relay_core.coalesce import Coalescer


class Runs:
    """Work whose runs are numbered and held until released."""

    def __init__(self) -> None:
        self.started = 0
        self.gates: list[asyncio.Event] = []
        self.fail_next = False

    async def work(self) -> int:
        self.started += 1
        number = self.started
        gate = asyncio.Event()
        self.gates.append(gate)
        await gate.wait()
        if self.fail_next:
            self.fail_next = False
            raise ValueError(f"run {number} failed")
        return number

    async def until_started(self, count: int) -> None:
        while self.started < count:
            await asyncio.sleep(0)


async def test_calls_during_a_run_share_the_next_one() -> None:
    coalescer: Coalescer[str, int] = Coalescer()
    runs = Runs()
    first = asyncio.create_task(coalescer.run("a", runs.work))
    await runs.until_started(1)
    late = [asyncio.create_task(coalescer.run("a", runs.work)) for _ in range(5)]
    await asyncio.sleep(0.01)
    assert runs.started == 1  # runs of one key never overlap
    runs.gates[0].set()
    await runs.until_started(2)
    runs.gates[1].set()
    assert await first == 1
    assert await asyncio.gather(*late) == [2] * 5  # one run, started after they all arrived
    assert runs.started == 2


async def test_keys_run_independently() -> None:
    coalescer: Coalescer[str, int] = Coalescer()
    runs = Runs()
    calls = [asyncio.create_task(coalescer.run(key, runs.work)) for key in ("a", "b")]
    await runs.until_started(2)
    for gate in runs.gates:
        gate.set()
    assert sorted(await asyncio.gather(*calls)) == [1, 2]


async def test_a_failure_reaches_every_caller_of_its_run_and_the_next_run_goes_on() -> None:
    coalescer: Coalescer[str, int] = Coalescer()
    runs = Runs()
    first = asyncio.create_task(coalescer.run("a", runs.work))
    await runs.until_started(1)
    sharing = [asyncio.create_task(coalescer.run("a", runs.work)) for _ in range(3)]
    runs.gates[0].set()
    assert await first == 1
    await runs.until_started(2)
    runs.fail_next = True
    runs.gates[1].set()
    for call in sharing:
        with pytest.raises(ValueError, match="run 2 failed"):
            await call
    after = asyncio.create_task(coalescer.run("a", runs.work))
    await runs.until_started(3)
    runs.gates[2].set()
    assert await after == 3


async def test_a_caller_that_goes_away_leaves_the_run_to_the_others() -> None:
    coalescer: Coalescer[str, int] = Coalescer()
    runs = Runs()
    leaving = asyncio.create_task(coalescer.run("a", runs.work))
    staying = asyncio.create_task(coalescer.run("a", runs.work))
    await runs.until_started(1)
    leaving.cancel()
    await asyncio.sleep(0)
    runs.gates[0].set()
    assert await staying == 1
    assert leaving.cancelled()


async def test_a_cancelled_run_ends_the_wait_of_its_callers() -> None:
    coalescer: Coalescer[str, int] = Coalescer()
    runs = Runs()
    calls = [asyncio.create_task(coalescer.run("a", runs.work)) for _ in range(2)]
    await runs.until_started(1)
    [turn] = coalescer._turns
    turn.cancel()  # as at shutdown
    results = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 5)
    assert all(isinstance(result, asyncio.CancelledError) for result in results)
    after = asyncio.create_task(coalescer.run("a", runs.work))  # the key is free again
    await runs.until_started(2)
    runs.gates[1].set()
    assert await after == 2
