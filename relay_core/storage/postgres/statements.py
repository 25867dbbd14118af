"""The named statements of ``queries/`` in one unit of work's transaction on asyncpg
(``queries.Statements``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from relay_core.json_records import JsonRecords
from relay_core.ports import Observed, StaleWrite
from relay_core.storage.postgres.driver import INTEGRITY
from relay_core.storage.postgres.transaction import Held, Transaction, affected
from relay_core.storage.queries import R, Statement
from relay_core.storage.rows import as_model
from relay_core.topics import feed_topic


class PgStatements:
    """Named statements, run once the unit's held writes are sent (``Transaction.ready``);
    asyncpg prepares each text once per connection."""

    def __init__(
        self, statements: Mapping[str, Statement], tx: Transaction, observed: Observed
    ) -> None:
        self._statements = statements
        self._tx = tx
        self._observed = observed

    def _values(self, statement: Statement, params: Mapping[str, Any]) -> list[Any]:
        """The statement's parameters in order; a feed row's ordinal drawn from the
        transaction (see ``feed.FEED_ORDINALS``)."""
        return [
            self._tx.next_feed_ordinal() if parameter == "feed_ordinal" else params[parameter]
            for parameter in statement.parameters
        ]

    async def _fetch(self, name: str, params: Mapping[str, Any]) -> list[Any]:
        return list(await self._call("fetch", name, params))

    async def run(self, name: str, /, **params: Any) -> int:
        return affected(await self._call("execute", name, params))

    async def _call(self, method: str, name: str, params: Mapping[str, Any]) -> Any:
        """The connection's ``method`` (asyncpg's fetch or execute) on the named statement."""
        statement = self._statements[name]
        values = self._values(statement, params)
        conn = await self._tx.ready()
        watching = self._observed.observer
        try:
            if watching is None:
                return await getattr(conn, method)(statement.text, *values)
            with watching.running(name, statement.text):
                return await getattr(conn, method)(statement.text, *values)
        except INTEGRITY as exc:
            raise StaleWrite(f"{name}: {exc}") from exc

    async def record(self, model: type[R], name: str, /, **params: Any) -> R | None:
        rows = await self._fetch(name, params)
        return as_model(model, dict(rows[0])) if rows else None

    async def records(self, model: type[R], name: str, /, **params: Any) -> list[R]:
        return [as_model(model, dict(row)) for row in await self._fetch(name, params)]

    async def keyed_json(
        self, model: type[BaseModel], key: str, name: str, /, **params: Any
    ) -> list[tuple[Any, str]]:
        rows = await self._fetch(name, params)
        return [(row[key], model.model_validate(dict(row)).model_dump_json()) for row in rows]

    async def feed(
        self, model: type[R], name: str, wakes: tuple[str, ...], /, **params: Any
    ) -> list[R]:
        rows = await self._fetch(name, params)
        held, audience = rows[0]["held"], rows[0].get("held_audience")
        if held is not None:
            noted = self._tx.feeds_held_back
            for topic in wakes if audience is None else (feed_topic(audience),):
                noted[topic] = min(held, noted.get(topic, held))
        return [model.model_validate(dict(row)) for row in rows if row[0] is not None]

    async def json_array(self, model: type[R], name: str, /, **params: Any) -> JsonRecords[R]:
        return JsonRecords.of(model, await self.records(model, name, **params))

    async def rows(self, name: str, /, **params: Any) -> list[tuple[Any, ...]]:
        return [tuple(row) for row in await self._fetch(name, params)]

    async def value(self, name: str, /, **params: Any) -> Any:
        rows = await self._fetch(name, params)
        return rows[0][0]

    async def add(
        self, name: str, then: Callable[[Any], None] | None = None, /, **params: Any
    ) -> None:
        assert self._tx.write, "a read unit of work cannot write"
        statement = self._statements[name]
        self._tx.held.append(Held(statement, self._values(statement, params), then))
