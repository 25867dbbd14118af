"""Named SQL: both dialects name the same statements with the same parameters, a store method
runs each, parameters are numbered as each driver takes them; and the stores that are not the
tasks' (test_tasks_store.py), through every statement on both adapters."""

from __future__ import annotations

import asyncio
import functools
import inspect
import typing
from datetime import UTC, datetime, timedelta

import pytest

from relay_core import records
from relay_core.ports import StaleWrite, Storage
from relay_core.storage import queries, stores

# The source of every store a unit of work has (each an attribute of ``Stores``).
STORES = "".join(
    inspect.getsource(inspect.getmodule(typing.get_type_hints(made.func)["return"]))  # type: ignore[arg-type]
    for made in vars(stores.Stores).values()
    if isinstance(made, functools.cached_property)
)
NOW = datetime(2026, 11, 28, 10, 45, 1, 250000, tzinfo=UTC)


def test_both_dialects_name_the_same_statements_and_a_store_runs_each() -> None:
    sqlite, postgres = queries.load("sqlite"), queries.load("postgres")
    assert sqlite.keys() == postgres.keys()
    for name in sqlite:
        assert f'"{name}"' in STORES, f"{name} is run by no store method"
        assert given(sqlite[name]) == given(postgres[name]), name


def given(statement: queries.Statement) -> set[str]:
    """The parameters a store gives a statement (and those that follow it): not the feed's
    ordinal, which PostgreSQL's runner draws."""
    every = (statement, *statement.following)
    return {parameter for s in every for parameter in s.parameters} - {"feed_ordinal"}


def test_a_sqlite_name_may_hold_statements_that_follow_with_the_same_parameters() -> None:
    source = "-- name: q\nINSERT INTO a VALUES (:x);\nINSERT INTO b VALUES (:y, :x);\n"
    [statement] = queries.parse(source, "sqlite").values()
    assert (statement.text, statement.parameters) == ("INSERT INTO a VALUES (?1)", ("x",))
    [following] = statement.following
    assert (following.text, following.parameters) == ("INSERT INTO b VALUES (?1, ?2)", ("y", "x"))
    with pytest.raises(ValueError, match="one statement a name"):
        queries.parse(source, "postgres")


def test_parameters_are_numbered_by_name_and_a_cast_is_not_one() -> None:
    source = "-- name: q\n-- what it does\nSELECT :a::text, :b, :a, '10:30' FROM t;\n"
    [statement] = queries.parse(source, "postgres").values()
    assert statement.text == "SELECT $1::text, $2, $1, '10:30' FROM t"
    assert statement.parameters == ("a", "b")
    [sqlite] = queries.parse(source, "sqlite").values()
    assert sqlite.text == "SELECT ?1::text, ?2, ?1, '10:30' FROM t"


async def test_bridge_offsets_start_move_and_keep_a_cursor(storage: Storage) -> None:
    later = NOW + timedelta(seconds=5)
    async with storage.unit_of_work(write=True) as uow:
        offsets = uow.bridge_offsets
        assert await offsets.get("telegram") is None
        assert await offsets.start("telegram", 7, NOW) is True
        assert await offsets.start("telegram", 9, NOW) is False  # one is there: left as it is
        started = await offsets.get("telegram")
        assert started is not None
        assert (started.last_update_id, started.updated_at, started.cursor) == (7, NOW, None)
        assert await offsets.move(started, 2**40, later) is True
        assert await offsets.move(started, 12, later) is False  # it moved since it was read
        await offsets.keep_cursor("matrix", "s72_1", NOW)  # no offset yet: one is made
        await offsets.keep_cursor("telegram", "t9", later)
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        telegram = await uow.bridge_offsets.get("telegram")
        matrix = await uow.bridge_offsets.get("matrix")
    assert telegram is not None and matrix is not None
    assert (telegram.last_update_id, telegram.cursor, telegram.updated_at) == (2**40, "t9", later)
    assert (matrix.last_update_id, matrix.cursor) == (0, "s72_1")


async def test_two_instances_starting_one_offset_have_one_winner(storage: Storage) -> None:
    async def start(update_id: int) -> bool:
        try:
            async with storage.unit_of_work(write=True) as uow:
                started = await uow.bridge_offsets.start("slack", update_id, NOW)
                await uow.commit()
                return started
        except StaleWrite:
            return False

    results = await asyncio.gather(*(start(i) for i in range(1, 11)))
    assert results.count(True) == 1


async def test_stream_tickets_kept_read_and_forgotten_once_expired(storage: Storage) -> None:
    def ticket(name: str, expires_at: datetime) -> records.StreamTicket:
        return records.StreamTicket(
            ticket_hash=name * 64,
            kind="agent",
            agent_id="ada",
            token_hash="t" * 64,
            expires_at=expires_at,
        )

    async with storage.unit_of_work(write=True) as uow:
        await uow.stream_tickets.insert(ticket("a", NOW))
        await uow.stream_tickets.insert(ticket("b", NOW + timedelta(minutes=1)))
        await uow.commit()
    async with storage.unit_of_work(write=True) as uow:
        assert await uow.stream_tickets.get("a" * 64) == ticket("a", NOW)
        assert await uow.stream_tickets.delete_expired(NOW) == 0  # expired *before* now
        assert await uow.stream_tickets.delete_expired(NOW + timedelta(seconds=1)) == 1
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        assert await uow.stream_tickets.get("a" * 64) is None
        assert await uow.stream_tickets.get("b" * 64) == ticket("b", NOW + timedelta(minutes=1))
