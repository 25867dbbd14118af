"""The verdict webhook deliveries yield by: pressed only while the process is busy and the
API answers many requests, judged once a window."""

from __future__ import annotations

from relay_server.pressure import BUSY_RATE, WINDOW_SECONDS, Pressure


class Clocks:
    def __init__(self) -> None:
        self.wall = 100.0
        self.cpu = 5.0

    def passes(self, seconds: float, busy: float) -> None:
        """``seconds`` of wall time, ``busy`` of a core used in them."""
        self.wall += seconds
        self.cpu += seconds * busy


def pressure_at(clocks: Clocks) -> Pressure:
    return Pressure(cpu=lambda: clocks.cpu, clock=lambda: clocks.wall)


def answer(pressure: Pressure, seconds: float) -> None:
    pressure.answered += int(BUSY_RATE * seconds * 2)


def test_a_busy_core_answering_many_requests_is_pressed() -> None:
    clocks = Clocks()
    pressure = pressure_at(clocks)
    clocks.passes(WINDOW_SECONDS, busy=1.0)
    answer(pressure, WINDOW_SECONDS)
    assert pressure.pressed()
    # The next window is quieter: no longer pressed once it has passed, pressed until then.
    clocks.passes(WINDOW_SECONDS / 2, busy=0.3)
    answer(pressure, WINDOW_SECONDS / 2)
    assert pressure.pressed()
    clocks.passes(WINDOW_SECONDS / 2, busy=0.3)
    assert not pressure.pressed()


def test_a_busy_core_with_few_requests_is_not_pressed() -> None:
    """A drain alone, or beside an operator's console, takes the whole core."""
    clocks = Clocks()
    pressure = pressure_at(clocks)
    clocks.passes(WINDOW_SECONDS, busy=1.0)
    pressure.answered += 3
    assert not pressure.pressed()


def test_many_requests_on_an_idle_core_are_not_pressed() -> None:
    clocks = Clocks()
    pressure = pressure_at(clocks)
    clocks.passes(WINDOW_SECONDS, busy=0.5)
    answer(pressure, WINDOW_SECONDS)
    assert not pressure.pressed()
