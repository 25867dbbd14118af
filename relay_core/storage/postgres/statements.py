"""The named statements of ``queries/`` in one unit of work's transaction on asyncpg
(``queries.Statements``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from relay_core.ports import StaleWrite
from relay_core.storage.postgres.driver import INTEGRITY
from relay_core.storage.postgres.tables import Transaction, affected
from relay_core.storage.queries import R, Statement


class PgStatements:
    """Named statements, run once the unit's held writes are sent (``Transaction.ready``);
    asyncpg prepares each text once per connection."""

    def __init__(self, statements: Mapping[str, Statement], tx: Transaction) -> None:
        self._statements = statements
        self._tx = tx

    async def _fetch(self, name: str, params: Mapping[str, Any]) -> list[Any]:
        return list(await self._call("fetch", name, params))

    async def run(self, name: str, **params: Any) -> int:
        return affected(await self._call("execute", name, params))

    async def _call(self, method: str, name: str, params: Mapping[str, Any]) -> Any:
        """The connection's ``method`` (asyncpg's fetch or execute) on the named statement."""
        statement = self._statements[name]
        values = [params[parameter] for parameter in statement.parameters]
        conn = await self._tx.ready()
        try:
            return await getattr(conn, method)(statement.text, *values)
        except INTEGRITY as exc:
            raise StaleWrite(f"{name}: {exc}") from exc

    async def record(self, model: type[R], name: str, **params: Any) -> R | None:
        rows = await self._fetch(name, params)
        return model.model_validate(dict(rows[0])) if rows else None

    async def records(self, model: type[R], name: str, **params: Any) -> list[R]:
        return [model.model_validate(dict(row)) for row in await self._fetch(name, params)]

    async def keyed_json(
        self, model: type[BaseModel], key: str, name: str, **params: Any
    ) -> list[tuple[Any, str]]:
        rows = await self._fetch(name, params)
        return [(row[key], model.model_validate(dict(row)).model_dump_json()) for row in rows]

    async def value(self, name: str, **params: Any) -> Any:
        rows = await self._fetch(name, params)
        return rows[0][0]
