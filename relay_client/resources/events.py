"""``client.events``: the generated feed reads, and the stream written by hand on top of them."""

from __future__ import annotations

from relay_api.models import Event
from relay_client._flow import C, Items, Out, call, flow_iterator
from relay_client.resources import _generated


class Events(_generated.Events[C]):
    """``client.events``."""

    @flow_iterator
    def stream(self, *, after: int | None = None) -> Items[Event]:
        """Events as they commit, forever: a long-poll loop that resumes at its cursor."""
        cursor = after
        while True:
            page = yield call("list", after=cursor, wait=30, on=self)
            cursor = page.cursor
            for event in page.events:
                yield Out(event)
