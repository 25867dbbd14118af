"""SQL storage on SQLAlchemy 2.0 Core (async): SQLite through aiosqlite, PostgreSQL through asyncpg.

The schema below is what queries are built against; Alembic revisions in ``migrations/`` create
and upgrade it, and a test checks that the two agree.

SQLite is set up for a server with concurrent writers: WAL, a busy timeout, foreign keys on, and
write transactions that begin IMMEDIATE. A deferred transaction that reads and then writes can
fail with SQLITE_BUSY whatever the timeout, because it cannot upgrade its read snapshot; taking
the write lock up front makes writers queue instead.
"""

from __future__ import annotations

import asyncio
import logging
import operator
import zlib
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Dialect,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    UniqueConstraint,
    delete,
    event,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.sql.elements import ColumnElement

from relay_core.errors import StaleWrite
from relay_core.hub import Hub
from relay_core.ports import TABLES, Cond, Increment, R, TableSpec, UnitOfWork
from relay_core.storage.locks import ProcessLocks

log = logging.getLogger("relay.storage")


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend (SQLite keeps naive UTC text)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


# SQLite only auto-increments an INTEGER PRIMARY KEY; everywhere else ids are 64-bit.
Id = BigInteger().with_variant(Integer(), "sqlite")
Json = JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")
Name = String(200)
Ref = String(128)
State = String(32)

metadata = MetaData()


def _id(name: str) -> Column[Any]:
    return Column(name, Id, primary_key=True, autoincrement=True)


def _at(name: str, nullable: bool = True) -> Column[Any]:
    return Column(name, UTCDateTime(), nullable=nullable)


agents = Table(
    "agents",
    metadata,
    Column("agent_id", Ref, primary_key=True),
    Column("name", Name),
    Column("kind", Name),
    Column("capabilities", Json, nullable=False),
    Column("metadata", Json, nullable=False),
    Column("status", Name),
    Column("note", Text),
    _at("last_seen_at"),
    _at("created_at", nullable=False),
    _at("updated_at", nullable=False),
    Column("token_hash", String(64), unique=True),
)

spaces = Table(
    "spaces",
    metadata,
    Column("space_id", Ref, primary_key=True),
    Column("name", Name, nullable=False),
    Column("description", Text),
    Column("status", State, nullable=False),
    _at("created_at", nullable=False),
    _at("archived_at"),
)

rooms = Table(
    "rooms",
    metadata,
    Column("room_id", Ref, primary_key=True),
    Column("name", Name, nullable=False),
    Column("topic", Text),
    Column("space_id", Ref, ForeignKey("spaces.space_id"), index=True),
    Column("created_by", Ref, nullable=False),
    _at("created_at", nullable=False),
    Column("platform_thread_id", Name),
)

room_members = Table(
    "room_members",
    metadata,
    _id("member_id"),
    Column("room_id", Ref, ForeignKey("rooms.room_id"), nullable=False),
    Column("agent_id", Ref, ForeignKey("agents.agent_id"), nullable=False),
    _at("joined_at", nullable=False),
    UniqueConstraint("room_id", "agent_id", name="uq_room_members_room_agent"),
)

messages = Table(
    "messages",
    metadata,
    _id("message_id"),
    Column("from_agent", Ref, nullable=False),
    Column("to", Ref, ForeignKey("agents.agent_id")),
    Column("room_id", Ref, ForeignKey("rooms.room_id")),
    Column("subject", Name),
    Column("text", Text, nullable=False),
    Column("payload", Json, nullable=False),
    Column("reply_to", BigInteger),
    Column("reply_to_notification", BigInteger),
    Column("status", State, nullable=False),
    _at("created_at", nullable=False),
    _at("delivered_at"),
    _at("acked_at"),
    Column("delivery_count", Integer, nullable=False, server_default="0"),
    Index("ix_messages_inbox", "to", "status", "message_id"),
    Index("ix_messages_room", "room_id", "message_id"),
)

tasks = Table(
    "tasks",
    metadata,
    _id("task_id"),
    Column("title", String(500), nullable=False),
    Column("description", Text),
    Column("payload", Json, nullable=False),
    Column("priority", Integer, nullable=False),
    Column("assignee", Ref),
    Column("room_id", Ref),
    Column("status", State, nullable=False),
    Column("created_by", Ref, nullable=False),
    Column("claimed_by", Ref),
    _at("claimed_at"),
    _at("lease_expires_at"),
    Column("lease_seconds", Integer),
    Column("attempts", Integer, nullable=False),
    Column("max_attempts", Integer, nullable=False),
    Column("progress", Integer),
    Column("result", Json),
    Column("error", Text),
    _at("created_at", nullable=False),
    _at("updated_at", nullable=False),
    _at("finished_at"),
    Index("ix_tasks_status_lease", "status", "lease_expires_at"),
)

task_events = Table(
    "task_events",
    metadata,
    _id("event_id"),
    Column("task_id", BigInteger, ForeignKey("tasks.task_id"), nullable=False, index=True),
    Column("agent_id", Ref),
    Column("kind", Name, nullable=False),
    Column("message", Text),
    Column("progress", Integer),
    Column("data", Json, nullable=False),
    _at("created_at", nullable=False),
)

actions = Table(
    "actions",
    metadata,
    _id("action_id"),
    Column("agent_id", Ref, nullable=False, index=True),
    Column("action", Name, nullable=False),
    Column("target", String(1000)),
    Column("params", Json, nullable=False),
    Column("outcome", Text),
    Column("task_id", BigInteger),
    _at("created_at", nullable=False),
)

notifications = Table(
    "notifications",
    metadata,
    _id("notification_id"),
    Column("agent_id", Ref),
    Column("text", Text, nullable=False),
    Column("bridge", State, nullable=False),
    Column("platform_message_id", Name),
    Column("status", State, nullable=False),
    Column("error", Text),
    _at("created_at", nullable=False),
    _at("sent_at"),
    Index("ix_notifications_platform", "bridge", "platform_message_id"),
)

approvals = Table(
    "approvals",
    metadata,
    _id("approval_id"),
    Column("kind", State, nullable=False),
    Column("status", State, nullable=False, index=True),
    Column("title", String(500), nullable=False),
    Column("detail", Text),
    Column("requested_by", Ref, nullable=False),
    Column("subject_id", Ref, nullable=False),
    _at("created_at", nullable=False),
    _at("decided_at"),
    Column("decided_by", Name),
    Column("note", Text),
    Column("platform_message_id", Name),
)

enrollments = Table(
    "enrollments",
    metadata,
    _id("enroll_id"),
    Column("agent_id", Ref, nullable=False),
    Column("name", Name),
    Column("capabilities", Json, nullable=False),
    Column("metadata", Json, nullable=False),
    Column("reason", Text),
    Column("status", State, nullable=False),
    Column("approval_id", BigInteger),
    Column("token_delivered", Boolean, nullable=False),
    _at("created_at", nullable=False),
    _at("decided_at"),
    Column("claim_hash", String(64), nullable=False),
)

interventions = Table(
    "interventions",
    metadata,
    Column("intervention_id", Ref, primary_key=True),
    Column("status", State, nullable=False),
    Column("title", String(500)),
    Column("risk", State),
    Column("proposed_action", Text),
    Column("approval_id", BigInteger),
    Column("approval_status", State, nullable=False),
    Column("created_by", Ref, nullable=False),
    _at("created_at", nullable=False),
    _at("updated_at", nullable=False),
    Index("ix_interventions_created", "created_at"),
)

diagnostics = Table(
    "diagnostics",
    metadata,
    _id("diagnostic_id"),
    Column("intervention_id", Ref, ForeignKey("interventions.intervention_id"), nullable=False),
    Column("agent_id", Ref, nullable=False),
    Column("summary", String(2000), nullable=False),
    Column("content", Json, nullable=False),
    Column("content_type", Name),
    Column("severity", State, nullable=False),
    _at("created_at", nullable=False),
    Index("ix_diagnostics_intervention", "intervention_id", "diagnostic_id"),
)

intervention_actions = Table(
    "intervention_actions",
    metadata,
    _id("action_id"),
    Column("intervention_id", Ref, ForeignKey("interventions.intervention_id"), nullable=False),
    Column("agent_id", Ref, nullable=False),
    Column("action", Text, nullable=False),
    Column("status", State, nullable=False),
    Column("evidence_before", Json, nullable=False),
    Column("evidence_after", Json, nullable=False),
    Column("link", String(2000)),
    _at("created_at", nullable=False),
    Index("ix_intervention_actions_intervention", "intervention_id", "action_id"),
)


_ORDERING = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge}


events = Table(
    "events",
    metadata,
    _id("event_id"),
    Column("kind", Name, nullable=False),
    Column("audience", Ref, nullable=False),
    Column("subject_id", Ref, nullable=False),
    Column("data", Json, nullable=False),
    _at("created_at", nullable=False),
    Index("ix_events_audience", "audience", "event_id"),
)

idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    _id("record_id"),
    Column("scope", Ref, nullable=False),
    Column("key", Name, nullable=False),
    Column("fingerprint", String(64), nullable=False),
    Column("status", Integer, nullable=False),
    Column("body", Text, nullable=False),
    _at(
        "created_at",
        nullable=False,
    ),
    UniqueConstraint("scope", "key", name="uq_idempotency_keys_scope_key"),
    Index("ix_idempotency_keys_created", "created_at"),
)

bridge_offsets = Table(
    "bridge_offsets",
    metadata,
    Column("bridge", State, primary_key=True),
    Column("last_update_id", BigInteger, nullable=False),
    _at("updated_at", nullable=False),
)

# PostgreSQL: the channel hints travel on, and the advisory locks that order commits.
CHANNEL = "relay"
ORDERED_COMMITS_LOCK = 0x72656C6179  # "relay": rows of ordered tables become visible in id order
MIGRATION_LOCK = 0x72656C6D67  # one instance migrates at a time


def _condition(table: Table, cond: Cond) -> ColumnElement[bool]:
    column: Column[Any] = table.c[cond.field]
    if cond.op == "eq":
        return column.is_(None) if cond.value is None else column == cond.value
    if cond.op == "ne":
        return column.is_not(None) if cond.value is None else column != cond.value
    if cond.op == "in":
        return column.in_(cond.value)
    compared: ColumnElement[bool] = _ORDERING[cond.op](column, cond.value)
    return compared


class _Transaction:
    """What the tables of one unit of work share: the connection and what to publish."""

    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn
        self.postgres = conn.dialect.name == "postgresql"
        self.topics: set[str] = set()
        self.ordered = False

    async def order_commits(self) -> None:
        """On PostgreSQL, serialise transactions that insert into an ordered table until they
        commit, so ids are handed out in commit order and a cursor never skips a late row.
        (SQLite already serialises every writer.)"""
        if self.postgres and not self.ordered:
            await self.conn.execute(
                text("SELECT pg_advisory_xact_lock(:key)"), {"key": ORDERED_COMMITS_LOCK}
            )
            self.ordered = True


class SqlTable(Generic[R]):
    """One resource's rows, read and written inside a unit of work's connection."""

    def __init__(self, spec: TableSpec, table: Table, tx: _Transaction) -> None:
        self._spec = spec
        self._table = table
        self._key = table.c[spec.key]
        self._tx = tx
        self._conn = tx.conn

    def _record(self, row: Any) -> R:
        return self._spec.model.model_validate(dict(row._mapping))  # type: ignore[return-value]

    async def get(self, key: Any) -> R | None:
        row = (await self._conn.execute(select(self._table).where(self._key == key))).first()
        return self._record(row) if row is not None else None

    async def insert(self, record: R) -> R:
        values = {c.name: getattr(record, c.name) for c in self._table.columns}
        generated = self._spec.generated_key and not values[self._spec.key]
        if generated:
            del values[self._spec.key]
        if self._spec.ordered_commits:
            await self._tx.order_commits()
        try:
            result = await self._conn.execute(
                insert(self._table).values(**values).returning(self._key)
            )
        except IntegrityError as exc:
            raise StaleWrite(f"{self._spec.name}: {exc.orig}") from exc
        if generated:
            return record.model_copy(update={self._spec.key: result.scalar_one()})
        return record

    async def update(
        self, key: Any, values: Mapping[str, Any], *, expect: Mapping[str, Any] | None = None
    ) -> R | None:
        guards = [_condition(self._table, Cond(f, "eq", v)) for f, v in (expect or {}).items()]
        statement = (
            update(self._table)
            .where(self._key == key, *guards)
            .values(**self._resolve(values))
            .returning(*self._table.columns)
        )
        row = (await self._conn.execute(statement)).first()
        return self._record(row) if row is not None else None

    async def update_where(self, conds: Sequence[Cond], values: Mapping[str, Any]) -> int:
        statement = (
            update(self._table)
            .where(*(_condition(self._table, c) for c in conds))
            .values(**self._resolve(values))
        )
        result = await self._conn.execute(statement)
        return int(result.rowcount)

    async def delete_where(self, conds: Sequence[Cond]) -> int:
        statement = delete(self._table).where(*(_condition(self._table, c) for c in conds))
        result = await self._conn.execute(statement)
        return int(result.rowcount)

    def _resolve(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """Update values with every ``Increment`` as ``column + n``, computed by the database."""
        return {
            field: self._table.c[field] + value.by if isinstance(value, Increment) else value
            for field, value in values.items()
        }

    async def find(
        self,
        *conds: Cond,
        order_by: str | None = None,
        descending: bool = False,
        limit: int | None = None,
    ) -> list[R]:
        order = [self._table.c[order_by]] if order_by else []
        order.append(self._key)
        statement = select(self._table).where(*(_condition(self._table, c) for c in conds))
        statement = statement.order_by(*(c.desc() if descending else c.asc() for c in order))
        if limit is not None:
            statement = statement.limit(limit)
        return [self._record(row) for row in await self._conn.execute(statement)]

    async def count(self, *conds: Cond) -> int:
        statement = select(func.count()).select_from(self._table)
        statement = statement.where(*(_condition(self._table, c) for c in conds))
        return int((await self._conn.execute(statement)).scalar_one())


class SqlUnitOfWork:
    """Every table over one connection and its transaction."""

    def __init__(self, conn: AsyncConnection, hub: Hub) -> None:
        self._tx = _Transaction(conn)
        self._hub = hub
        for spec in TABLES:
            setattr(self, spec.name, SqlTable(spec, metadata.tables[spec.name], self._tx))

    def publish(self, topic: str) -> None:
        self._tx.topics.add(topic)

    async def commit(self) -> None:
        topics = sorted(self._tx.topics)
        if self._tx.postgres:
            # Sent by PostgreSQL at commit, to the listeners of every instance.
            for topic in topics:
                await self._tx.conn.execute(
                    text("SELECT pg_notify(:channel, :topic)"), {"channel": CHANNEL, "topic": topic}
                )
        await self._tx.conn.commit()
        self._hub.publish(topics)
        self._tx.topics.clear()


def _configure_sqlite(engine: AsyncEngine, *, synchronous: str, busy_timeout_ms: int) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # The driver's own implicit BEGIN is switched off so that ours (below) is the only one.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA synchronous={synchronous}")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        mode = conn.get_execution_options().get("relay_begin", "DEFERRED")
        conn.exec_driver_sql(f"BEGIN {mode}")


class SqlStorage:
    """Storage on a SQL database named by a SQLAlchemy URL."""

    def __init__(
        self,
        url: str,
        *,
        sqlite_synchronous: str = "FULL",
        busy_timeout_ms: int = 30_000,
        connect_args: dict[str, Any] | None = None,
        hub: Hub | None = None,
    ) -> None:
        self.hub = hub or Hub()
        self._locks = ProcessLocks()
        self._listener: asyncio.Task[None] | None = None
        self.listening = asyncio.Event()
        parsed = make_url(url)
        self.name = parsed.get_backend_name()
        if self.name == "sqlite" and parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        self.engine = create_async_engine(
            url, pool_pre_ping=self.name != "sqlite", connect_args=connect_args or {}
        )
        if self.name == "sqlite":
            _configure_sqlite(
                self.engine, synchronous=sqlite_synchronous, busy_timeout_ms=busy_timeout_ms
            )

    @property
    def _asyncpg_dsn(self) -> str:
        """The database URL as asyncpg itself takes it (for connections outside the pool)."""
        return self.engine.url.set(drivername="postgresql").render_as_string(hide_password=False)

    async def migrate(self) -> None:
        """Bring the schema to the newest revision, keeping every stored row."""
        from relay_core.storage.migrate import upgrade

        async with self.engine.connect() as conn:
            await conn.execution_options(relay_begin="IMMEDIATE")
            if self.name == "postgresql":
                await conn.execute(
                    text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK}
                )
            await conn.run_sync(upgrade)
            await conn.commit()

    async def listen(self) -> None:
        """On PostgreSQL, relay other instances' hints into this process's hub, on a dedicated
        connection outside the pool, reconnecting when it drops."""
        if self.name == "postgresql" and self._listener is None:
            self._listener = asyncio.create_task(self._listen_forever(), name="relay-listen")

    async def _listen_forever(self) -> None:
        import asyncpg

        while True:
            try:
                conn = await asyncpg.connect(self._asyncpg_dsn)
            except (OSError, asyncpg.PostgresError) as exc:
                log.warning("cannot LISTEN for hints (%s); retrying in 1 s", exc)
                await asyncio.sleep(1)
                continue
            try:
                await self._listen_until_lost(conn)
                log.warning("the LISTEN connection dropped; reconnecting")
            finally:
                self.listening.clear()
                if not conn.is_closed():
                    await conn.close()

    async def _listen_until_lost(self, conn: Any) -> None:
        lost = asyncio.Event()
        conn.add_termination_listener(lambda _conn: lost.set())
        await conn.add_listener(CHANNEL, self._on_hint)
        self.listening.set()
        await lost.wait()

    def _on_hint(self, _conn: Any, _pid: int, _channel: str, topic: str) -> None:
        self.hub.publish([topic])

    @asynccontextmanager
    async def unit_of_work(self, *, write: bool) -> AsyncIterator[UnitOfWork]:
        async with self.engine.connect() as conn:
            if write:
                await conn.execution_options(relay_begin="IMMEDIATE")
            await conn.begin()
            try:
                yield SqlUnitOfWork(conn, self.hub)  # type: ignore[misc]
            finally:
                if conn.in_transaction():
                    await conn.rollback()

    @asynccontextmanager
    async def exclusive(self, name: str) -> AsyncIterator[bool]:
        """On PostgreSQL a session advisory lock on a connection of its own (released by the
        server if this process dies); SQLite serves one process, so a process-local set."""
        if self.name != "postgresql":
            async with self._locks.exclusive(name) as mine:
                yield mine
            return
        import asyncpg

        conn = await asyncpg.connect(self._asyncpg_dsn)
        key = zlib.crc32(name.encode())
        try:
            mine = bool(await conn.fetchval("SELECT pg_try_advisory_lock($1)", key))
            yield mine
        finally:
            await conn.close()  # ends the session, and with it the lock

    async def close(self) -> None:
        self.hub.close()
        if self._listener is not None:
            self._listener.cancel()
            await asyncio.gather(self._listener, return_exceptions=True)
            self._listener = None
        await self.engine.dispose()
