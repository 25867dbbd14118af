"""A unit of work's transaction on asyncpg: its connection, and the named statements held
back until the unit's next statement or its commit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from relay_core.ports import StaleWrite
from relay_core.storage.postgres.driver import INTEGRITY
from relay_core.storage.postgres.feed import FEED_ORDINALS
from relay_core.storage.queries import Statement


class Held(NamedTuple):
    """A named statement held back (``Statements.add``): the statement, its parameters' values,
    and what is given the first column it answers once it has run."""

    statement: Statement
    values: list[Any]
    then: Callable[[Any], None] | None


class Transaction:
    """What the stores of one unit of work share: the connection, what to publish, how many
    feed rows it added, and the feeds it found rows held back in.

    A write unit begins its transaction only before its first statement, and holds back the
    writes nobody needs an answer to yet (``Statements.add``) until then, or until it
    commits: a unit that only adds one row (a direct message and its event) sends it as one
    statement, its own transaction, with no BEGIN and no COMMIT (one round trip for a
    message, where there were four)."""

    def __init__(self, conn: Any, write: bool) -> None:
        self.conn = conn
        self.write = write
        self.begun = False
        self.held: list[Held] = []
        self.topics: set[str] = set()
        self.committed = False
        self.feed_rows = 0
        self.feeds_held_back: dict[str, int] = {}  # hub topic → the lowest id held back

    async def ready(self) -> Any:
        """The connection, ready for a statement of the unit: a write unit's transaction
        begun, and what it held back sent."""
        if self.write and not self.begun:
            await self.conn.execute("BEGIN")
            self.begun = True
        if self.held:
            await self.send_held()
        return self.conn

    async def send_held(self) -> None:
        """Run the named statements held back, in order; a run of one statement that answers
        to nobody goes as one ``executemany`` (one round trip: the events of an inbox's
        deliveries)."""
        held, self.held = self.held, []
        start = 0
        try:
            while start < len(held):
                first = held[start]
                end = start + 1
                if first.then is None:
                    while (
                        end < len(held)
                        and held[end].statement is first.statement
                        and held[end].then is None
                    ):
                        end += 1
                if end - start > 1:
                    rows = [h.values for h in held[start:end]]
                    await self.conn.executemany(first.statement.text, rows)
                else:
                    answer = await self.conn.fetchval(first.statement.text, *first.values)
                    if first.then is not None:
                        first.then(answer)
                start = end
        except INTEGRITY as exc:
            raise StaleWrite(f"{held[start].statement.name}: {exc}") from exc

    def next_feed_ordinal(self) -> int:
        """The ordinal among this transaction's feed rows of the next one it adds (see
        ``feed.FEED_ORDINALS``)."""
        ordinal = self.feed_rows
        if ordinal >= FEED_ORDINALS:
            raise ValueError(f"a transaction adds at most {FEED_ORDINALS} rows to a feed")
        self.feed_rows += 1
        return ordinal


def affected(status: str) -> int:
    """The row count of a command tag such as ``UPDATE 3``."""
    return int(status.rsplit(" ", 1)[-1])
