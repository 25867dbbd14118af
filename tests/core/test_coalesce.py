"""Coalescing: calls that arrive during a run share the next run, whatever their key, never the
one under way; the run answers each key's callers."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import pytest

from relay_core.coalesce import Coalescer


class Runs:
    """Work whose runs are numbered and held until released; a key's result is its run's
    number and the key, or the error of a key named ``missing``."""

    def __init__(self) -> None:
        self.started: list[list[str]] = []
        self.gates: list[asyncio.Event] = []
        self.fail_next = False

    async def work(self, keys: list[str]) -> Mapping[str, str | Exception]:
        self.started.append(sorted(keys))
        number = len(self.started)
        gate = asyncio.Event()
        self.gates.append(gate)
        await gate.wait()
        if self.fail_next:
            self.fail_next = False
            raise ValueError(f"run {number} failed")
        return {key: LookupError(key) if key == "missing" else f"{number}{key}" for key in keys}

    async def until_started(self, count: int) -> None:
        while len(self.started) < count:
            await asyncio.sleep(0)


async def test_calls_during_a_run_share_the_next_one_whatever_their_key() -> None:
    runs = Runs()
    coalescer: Coalescer[str, str] = Coalescer(runs.work)
    first = asyncio.create_task(coalescer.run("a"))
    await runs.until_started(1)
    late = [asyncio.create_task(coalescer.run(key)) for key in ("a", "b", "a", "c")]
    await asyncio.sleep(0.01)
    assert len(runs.started) == 1  # runs never overlap
    runs.gates[0].set()
    await runs.until_started(2)
    runs.gates[1].set()
    assert await first == "1a"
    # One run, started after they all arrived, each key asked once and answered to its callers.
    assert await asyncio.gather(*late) == ["2a", "2b", "2a", "2c"]
    assert runs.started == [["a"], ["a", "b", "c"]]


async def test_a_keys_error_reaches_its_callers_only() -> None:
    runs = Runs()
    coalescer: Coalescer[str, str] = Coalescer(runs.work)
    calls = [asyncio.create_task(coalescer.run(key)) for key in ("a", "missing", "missing")]
    await runs.until_started(1)
    runs.gates[0].set()
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    assert outcomes[0] == "1a"
    assert all(isinstance(outcome, LookupError) for outcome in outcomes[1:])


async def test_a_failure_reaches_every_caller_of_its_run_and_the_next_run_goes_on() -> None:
    runs = Runs()
    coalescer: Coalescer[str, str] = Coalescer(runs.work)
    first = asyncio.create_task(coalescer.run("a"))
    await runs.until_started(1)
    sharing = [asyncio.create_task(coalescer.run(key)) for key in ("a", "b", "c")]
    runs.gates[0].set()
    assert await first == "1a"
    await runs.until_started(2)
    runs.fail_next = True
    runs.gates[1].set()
    for call in sharing:
        with pytest.raises(ValueError, match="run 2 failed"):
            await call
    after = asyncio.create_task(coalescer.run("a"))
    await runs.until_started(3)
    runs.gates[2].set()
    assert await after == "3a"


async def test_a_caller_that_goes_away_leaves_the_run_to_the_others() -> None:
    runs = Runs()
    coalescer: Coalescer[str, str] = Coalescer(runs.work)
    leaving = asyncio.create_task(coalescer.run("a"))
    staying = asyncio.create_task(coalescer.run("a"))
    await runs.until_started(1)
    leaving.cancel()
    await asyncio.sleep(0)
    runs.gates[0].set()
    assert await staying == "1a"
    assert leaving.cancelled()


async def test_a_cancelled_run_ends_the_wait_of_its_callers() -> None:
    runs = Runs()
    coalescer: Coalescer[str, str] = Coalescer(runs.work)
    calls = [asyncio.create_task(coalescer.run(key)) for key in ("a", "b")]
    await runs.until_started(1)
    [turn] = coalescer._turns
    turn.cancel()  # as at shutdown
    results = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 5)
    assert all(isinstance(result, asyncio.CancelledError) for result in results)
    after = asyncio.create_task(coalescer.run("a"))  # a new call starts a run again
    await runs.until_started(2)
    runs.gates[1].set()
    assert await after == "2a"
