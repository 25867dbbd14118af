"""In-memory storage: dictionaries, one lock, an undo log. For tests and throwaway demos.

Every unit of work holds the lock for its whole life, so transactions are serial (the strictest
isolation there is) and a claim race has exactly one winner here just as on a database.
"""

from __future__ import annotations

import asyncio
import itertools
import operator
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime
from typing import Any, Generic, NamedTuple

from pydantic import BaseModel

from relay_api import models as m
from relay_core import search_query
from relay_core.hub import Hub
from relay_core.ports import (
    FEED,
    TABLES,
    Cond,
    Expect,
    Increment,
    R,
    SearchRow,
    SearchSpec,
    StaleWrite,
    TableSpec,
    UnitOfWork,
    expected,
    stamped,
)
from relay_core.storage.locks import ProcessLocks
from relay_core.storage.rows import ThroughModels

_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "lt": operator.lt,
    "gt": operator.gt,
}


def _matches(record: Any, cond: Cond) -> bool:
    value = getattr(record, cond.field)
    if cond.op == "eq":
        return bool(value == cond.value)
    if cond.op == "ne":
        return bool(value != cond.value)
    if cond.op == "in":
        return value in cond.value
    if cond.op == "not_in":
        return value not in cond.value
    # SQL semantics: NULL compares as unknown, so it never matches an ordering condition.
    return value is not None and _COMPARE[cond.op](value, cond.value)


def _resolve(row: Any, values: Mapping[str, Any]) -> dict[str, Any]:
    """Update values with every ``Increment`` turned into the new number."""
    return {
        field: getattr(row, field) + value.by if isinstance(value, Increment) else value
        for field, value in values.items()
    }


class _Undo:
    """Restores what a unit of work changed when it ends without a commit."""

    def __init__(self) -> None:
        self.steps: list[tuple[dict[Any, Any], Any, Any]] = []

    def remember(self, rows: dict[Any, Any], key: Any) -> None:
        self.steps.append((rows, key, rows.get(key)))

    def apply(self) -> None:
        for rows, key, before in reversed(self.steps):
            if before is None:
                rows.pop(key, None)
            else:
                rows[key] = before
        self.steps.clear()


class MemoryTable(ThroughModels, Generic[R]):
    """One resource's records, keyed by its id."""

    def __init__(self, spec: TableSpec, rows: dict[Any, Any], ids: itertools.count[int]) -> None:
        self._spec = spec
        self._rows = rows
        self._ids = ids
        self._undo: _Undo | None = None

    def bind(self, undo: _Undo) -> MemoryTable[R]:
        self._undo = undo
        return self

    def _remember(self, key: Any) -> None:
        assert self._undo is not None, "tables are used inside a unit of work"
        self._undo.remember(self._rows, key)

    async def get(self, key: Any) -> R | None:
        row = self._rows.get(key)
        return row.model_copy(deep=True) if row is not None else None

    async def insert(self, record: R) -> R:
        key_field = self._spec.key
        if self._spec.generated_key and not getattr(record, key_field):
            record = record.model_copy()
            self._spec.keyed(record, next(self._ids))
        key = getattr(record, key_field)
        if key in self._rows:
            raise StaleWrite(f"{self._spec.name} {key!r} exists")
        self._remember(key)
        self._rows[key] = record.model_copy(deep=True)
        return record

    async def add(self, record: R) -> None:
        inserted = await self.insert(record)
        if inserted is not record:  # the key was generated on a copy
            self._spec.keyed(record, getattr(inserted, self._spec.key))

    async def update(
        self, key: Any, values: Mapping[str, Any], *, expect: Expect | None = None
    ) -> R | None:
        row = self._rows.get(key)
        if row is None:
            return None
        if not all(_matches(row, cond) for cond in expected(expect)):
            return None
        self._remember(key)
        updated = row.model_copy(update=_resolve(row, values), deep=True)
        self._rows[key] = updated
        return updated.model_copy(deep=True)  # type: ignore[no-any-return]

    async def update_where(self, conds: Sequence[Cond], values: Mapping[str, Any]) -> int:
        keys = [k for k, row in self._rows.items() if all(_matches(row, c) for c in conds)]
        for key in keys:
            self._remember(key)
            row = self._rows[key]
            self._rows[key] = row.model_copy(update=_resolve(row, values), deep=True)
        return len(keys)

    async def delete_where(self, conds: Sequence[Cond]) -> int:
        keys = [k for k, row in self._rows.items() if all(_matches(row, c) for c in conds)]
        for key in keys:
            self._remember(key)
            del self._rows[key]
        return len(keys)

    async def find(
        self,
        *conds: Cond,
        order_by: str | None = None,
        descending: bool = False,
        limit: int | None = None,
        skip_locked: bool = False,  # write units run one at a time: nothing is held
    ) -> list[R]:
        key_field = self._spec.key
        rows = [row for row in self._rows.values() if all(_matches(row, c) for c in conds)]
        field = order_by or key_field
        rows.sort(key=lambda r: (getattr(r, field), getattr(r, key_field)), reverse=descending)
        if limit is not None:
            rows = rows[:limit]
        return [row.model_copy(deep=True) for row in rows]

    async def count(self, *conds: Cond) -> int:
        return sum(1 for row in self._rows.values() if all(_matches(row, c) for c in conds))

    async def count_by(self, field: str, *conds: Cond) -> dict[Any, int]:
        counts: dict[Any, int] = {}
        for row in self._rows.values():
            if all(_matches(row, c) for c in conds):
                value = getattr(row, field)
                counts[value] = counts.get(value, 0) + 1
        return counts

    async def newest_by(self, field: str, *conds: Cond) -> dict[Any, R]:
        newest: dict[Any, R] = {}
        for row in await self.find(*conds):  # in key order: the last of each value wins
            newest[getattr(row, field)] = row
        return newest


# An entry's key, as revision 0019 makes it: a record's id times KINDS, plus its kind's place (a
# message and a task of the same id are two entries); it orders hits of one score and time.
KIND_CODES = {"message": 1, "room_post": 1, "task": 2, "approval": 3, "action": 4}
KINDS = 8
# The trail's kinds whose message Relay writes as a task's state changes: not what anyone wrote,
# so not searched (revision 0023).
RELAYS_NOTES = frozenset({"claimed", "lease_expired"})


def _strings(value: Any) -> list[str]:
    """The strings in a JSON value, in order."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


class _Entry(NamedTuple):
    key: int
    kind: str
    id: int
    title: str | None
    body: str
    from_agent: str | None
    to: str | None
    room_id: str | None
    audience: str | None
    created_at: datetime


class MemorySearch:
    """The search index of the memory store: each record's entry made as it is searched, as
    the SQL stores' triggers make it as it is written (revisions 0019 and 0023)."""

    def __init__(self, tables: dict[str, MemoryTable[Any]]) -> None:
        self._tables = tables

    def _rows(self, name: str) -> list[Any]:
        return list(self._tables[name]._rows.values())

    def _entries(self) -> Iterator[_Entry]:
        for message in self._rows("messages"):
            kind = "message" if message.room_id is None else "room_post"
            yield _Entry(
                message.message_id * KINDS + KIND_CODES[kind], kind, message.message_id,
                message.subject, message.text, message.from_agent, message.to, message.room_id,
                None, message.created_at,
            )  # fmt: skip
        told: dict[int, list[str]] = {}
        for event in self._rows("task_events"):
            if event.message is not None and event.kind not in RELAYS_NOTES:
                told.setdefault(event.task_id, []).append(event.message)
        for task in self._rows("tasks"):
            words = [task.description or "", *_strings(task.payload), *_strings(task.result)]
            yield _Entry(
                task.task_id * KINDS + KIND_CODES["task"], "task", task.task_id, task.title,
                " ".join([*words, *told.get(task.task_id, [])]), task.created_by, None,
                task.room_id, m.EVERYONE, task.created_at,
            )  # fmt: skip
        for approval in self._rows("approvals"):
            yield _Entry(
                approval.approval_id * KINDS + KIND_CODES["approval"], "approval",
                approval.approval_id, approval.title, approval.detail or "",
                approval.requested_by, None, None, approval.audience, approval.created_at,
            )  # fmt: skip
        for action in self._rows("actions"):
            body = " ".join([action.target or "", action.outcome or "", *_strings(action.params)])
            yield _Entry(
                action.action_id * KINDS + KIND_CODES["action"], "action", action.action_id,
                action.action, body, action.agent_id, None, None, None, action.created_at,
            )  # fmt: skip

    def _readable(self, reader: str) -> Callable[[_Entry], bool]:
        rooms = {r.room_id for r in self._rows("room_members") if r.agent_id == reader}
        return lambda e: (
            e.audience in (m.EVERYONE, reader)
            or reader in (e.from_agent, e.to)
            or e.room_id in rooms
        )

    async def search(self, spec: SearchSpec) -> list[SearchRow]:
        readable = self._readable(spec.reader) if spec.reader is not None else None
        found: list[SearchRow] = []
        for e in self._entries():
            if e.kind not in spec.kinds or (readable is not None and not readable(e)):
                continue
            if spec.agent_id is not None and e.from_agent != spec.agent_id:
                continue
            if spec.room_id is not None and e.room_id != spec.room_id:
                continue
            if (spec.since and e.created_at < spec.since) or (
                spec.until and e.created_at >= spec.until
            ):
                continue
            text = _shown(e)
            if not search_query.matches(spec.query, text):
                continue
            score = search_query.score(spec.query, e.title or "", e.body)
            cut = search_query.snippet(spec.query, text)
            hit = SearchRow(
                e.key, e.kind, e.id, e.title, cut, score, e.created_at, e.from_agent, e.room_id
            )
            if spec.after is None or _order(hit) < spec.after:
                found.append(hit)
        found.sort(key=_order, reverse=True)
        return found[: spec.limit]


def _shown(entry: _Entry) -> str:
    """What a snippet is cut from: the title and the body."""
    return " · ".join(part for part in (entry.title, entry.body) if part)


def _order(hit: SearchRow) -> tuple[float, datetime, int]:
    return (hit.score, hit.created_at, hit.key)


class MemoryUnitOfWork:
    """Tables bound to one undo log."""

    events: MemoryTable[m.Event]

    def __init__(self, storage: MemoryStorage) -> None:
        self._undo = _Undo()
        self._hub = storage.hub
        self._topics: set[str] = set()
        for spec in TABLES:
            setattr(self, spec.name, storage.tables[spec.name].bind(self._undo))
        self.search_index = MemorySearch(storage.tables)

    def publish(self, topic: str) -> None:
        self._topics.add(topic)

    async def announce(self, event: m.Event, *, about: BaseModel | None = None) -> None:
        await self.events.add(event if about is None else stamped(event, about))
        self.publish(FEED)

    async def flush(self) -> None:
        """Nothing is held back."""

    async def commit(self, *, durable: bool = True) -> None:
        self._undo.steps.clear()
        self._hub.publish(self._topics)
        self._topics.clear()

    def rollback(self) -> None:
        self._undo.apply()


class MemoryStorage:
    """Storage that lives and dies with the process."""

    name = "memory"

    def __init__(self, hub: Hub | None = None) -> None:
        self.hub = hub or Hub()
        self._lock = asyncio.Lock()
        self._locks = ProcessLocks()
        self.tables: dict[str, MemoryTable[Any]] = {
            spec.name: MemoryTable(spec, {}, itertools.count(1)) for spec in TABLES
        }

    @asynccontextmanager
    async def unit_of_work(self, *, write: bool) -> AsyncIterator[UnitOfWork]:
        async with self._lock:
            uow = MemoryUnitOfWork(self)
            try:
                yield uow  # type: ignore[misc]
            finally:
                uow.rollback()

    def exclusive(self, name: str) -> AbstractAsyncContextManager[bool]:
        return self._locks.exclusive(name)

    async def close(self) -> None:
        self.hub.close()
