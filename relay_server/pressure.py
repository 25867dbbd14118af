"""How hard the API presses on this process, for the work that yields to it.

Webhook deliveries share the process's core with the API. When both want all of it, the API
comes first: while the process is busy answering requests, the sender keeps to a floor, and it
takes the rest of the core otherwise. Nothing is lost meanwhile: what is not sent yet waits in
the store (docs/webhooks.md, "Under load").
"""

from __future__ import annotations

import time
from collections.abc import Callable

# Over the last window, the process counts as pressed when it used this share of a core (the
# API's handlers, the store's threads and the sender together) while answering at least this
# many requests a second (waits and streams not counted). A drain alone, or beside an operator
# reading the console, is not pressed: it may take the whole core.
WINDOW_SECONDS = 0.25
BUSY_CPU = 0.9
BUSY_RATE = 100.0


class Pressure:
    """Requests answered, counted as they are, and the verdict on the last window, taken at
    most once a window when asked."""

    def __init__(
        self,
        cpu: Callable[[], float] = time.process_time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.answered = 0
        self._cpu = cpu
        self._clock = clock
        self._since = (clock(), cpu(), 0)
        self._pressed = False

    def pressed(self) -> bool:
        """Whether the API kept the process busy over the last window."""
        now = self._clock()
        since, cpu_then, answered_then = self._since
        wall = now - since
        if wall < WINDOW_SECONDS:
            return self._pressed
        cpu = self._cpu()
        self._pressed = (cpu - cpu_then) / wall >= BUSY_CPU and (
            self.answered - answered_then
        ) / wall >= BUSY_RATE
        self._since = (now, cpu, self.answered)
        return self._pressed


API = Pressure()
