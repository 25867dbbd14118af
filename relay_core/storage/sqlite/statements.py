"""The named statements of ``queries/`` on one SQLite connection (``queries.Statements``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from relay_core.json_records import JsonRecords
from relay_core.ports import Observed, StaleWrite
from relay_core.storage.json_text import encode_json
from relay_core.storage.queries import R, Statement
from relay_core.storage.rows import decoded_models
from relay_core.storage.sqlite.driver import sqlite3
from relay_core.storage.sqlite.times import decode_datetime, encode_datetime

# Parameters SQLite takes as they are. Tested by type before ``stored`` is called: a call for
# each of a direct message's 14 parameters took 6.4 µs, the test 1.8 (docs/performance.md).
AS_THEY_ARE = frozenset({str, int, float, bool, type(None)})


def stored(value: Any) -> Any:
    """A parameter as SQLite keeps it: a time and JSON as text."""
    if isinstance(value, datetime):
        return encode_datetime(value)
    if isinstance(value, (dict, list)):
        return encode_json(value)
    return value


class SqliteStatements:
    """Named statements on one connection; each runs to completion without yielding."""

    def __init__(
        self, statements: Mapping[str, Statement], conn: sqlite3.Connection, observed: Observed
    ) -> None:
        self._statements = statements
        self._conn = conn
        self._observed = observed

    def _run(
        self, name: str, params: Mapping[str, Any], statement: Statement | None = None
    ) -> sqlite3.Cursor:
        """Run the named statement (or ``statement``, one that follows it)."""
        statement = statement or self._statements[name]
        given = map(params.__getitem__, statement.parameters)
        values = [value if type(value) in AS_THEY_ARE else stored(value) for value in given]
        watching = self._observed.observer
        try:
            if watching is None:
                return self._conn.execute(statement.text, values)
            with watching.running(name, statement.text):
                return self._conn.execute(statement.text, values)
        except sqlite3.IntegrityError as exc:
            raise StaleWrite(f"{name}: {exc}") from exc

    async def record(self, model: type[R], name: str, /, **params: Any) -> R | None:
        found = self._models(model, self._run(name, params), one=True)
        return found[0] if found else None

    async def records(self, model: type[R], name: str, /, **params: Any) -> list[R]:
        return self._models(model, self._run(name, params))

    @staticmethod
    def _models(model: type[R], cursor: sqlite3.Cursor, one: bool = False) -> list[R]:
        """The cursor's rows as ``model``: plain columns by name (``rows.decoded_models``), or a
        record's JSON built in SQL, where a statement selects it alone as ``…_json``."""
        names = [column[0] for column in cursor.description]
        rows = [cursor.fetchone()] if one else cursor.fetchall()
        rows = [row for row in rows if row is not None]
        if len(names) == 1 and names[0].endswith("_json"):
            return [model.model_validate_json(json) for (json,) in rows]
        return decoded_models(model, names, rows, decode_datetime)

    async def keyed_json(
        self, model: type[BaseModel], key: str, name: str, /, **params: Any
    ) -> list[tuple[Any, str]]:
        return self._run(name, params).fetchall()

    async def feed(
        self, model: type[R], name: str, wakes: tuple[str, ...], /, **params: Any
    ) -> list[R]:
        return await self.records(model, name, **params)

    async def json_array(self, model: type[R], name: str, /, **params: Any) -> JsonRecords[R]:
        count, array = self._run(name, params).fetchone()
        return JsonRecords(model, count, array)

    async def rows(self, name: str, /, **params: Any) -> list[tuple[Any, ...]]:
        return self._run(name, params).fetchall()

    async def value(self, name: str, /, **params: Any) -> Any:
        return self._run(name, params).fetchone()[0]

    async def add(
        self, name: str, then: Callable[[Any], None] | None = None, /, **params: Any
    ) -> None:
        # One writer's connection, in process: nothing is gained by holding it back.
        rows = self._run(name, params).fetchall()  # all read before the next statement runs
        for following in self._statements[name].following:
            self._run(name, params, following)
        if then is not None:
            then(rows[0][0])

    async def run(self, name: str, /, **params: Any) -> int:
        return self._run(name, params).rowcount
