"""Stores already migrated, for the tests that each want a fresh one.

Running every revision costs a test about 0.1 s on SQLite and 0.4 s on PostgreSQL, and some
six hundred tests start on a fresh store: minutes of a run. A SQLite store starts as a copy of
one migrated once a run; a PostgreSQL schema a test is done with is emptied and handed to the
next, unless the test changed its schema (a downgrade, a table of its own), which drops it.
Either way the test's own ``migrate()`` still runs, and finds nothing left to do.
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import tempfile
import uuid
from pathlib import Path

import asyncpg

from relay_core.storage.sqlite import SqliteStorage

_template: Path | None = None


async def sqlite_store(path: Path) -> None:
    """A migrated store at ``path``, unless a file is there already."""
    global _template
    if path.exists():
        return
    if _template is None:
        made = Path(tempfile.mkdtemp(prefix="relay-test-template-")) / "relay.db"
        storage = SqliteStorage(f"sqlite:///{made}")
        await storage.migrate()
        await storage.close()  # the last connection to close folds the WAL into the file
        _template = made
    shutil.copyfile(_template, path)


def drop_sqlite_template() -> None:
    if _template is not None:
        shutil.rmtree(_template.parent, ignore_errors=True)


# What a schema holds, by name: its relations and columns, triggers, functions, constraints and
# revision. Names only, so that a schema of another name made by the same revisions matches.
_SHAPE = """
WITH n AS (SELECT oid FROM pg_namespace WHERE nspname = $1)
SELECT c.relname || ' ' || c.relkind::text FROM pg_class c
WHERE c.relnamespace = (SELECT oid FROM n)
UNION ALL
SELECT c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
  || ' ' || a.attnotnull::text || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE c.relnamespace = (SELECT oid FROM n) AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT t.tgname || ' ' || t.tgenabled::text || ' ' || pg_get_triggerdef(t.oid)
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE c.relnamespace = (SELECT oid FROM n) AND NOT t.tgisinternal
UNION ALL
SELECT p.proname || ' ' || md5(p.prosrc) FROM pg_proc p WHERE p.pronamespace = (SELECT oid FROM n)
UNION ALL
SELECT conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint
WHERE connamespace = (SELECT oid FROM n)
"""


# Every row gone (but the revision's) and every sequence starting again, as the revisions left
# them, in one round trip; triggers and foreign keys out of it (``replica``): every table's go.
_EMPTY = """
DO $$ DECLARE r record; BEGIN
  SET LOCAL session_replication_role = replica;
  FOR r IN SELECT tablename FROM pg_tables
           WHERE schemaname = '{schema}' AND tablename <> 'alembic_version' LOOP
    EXECUTE format('DELETE FROM %I.%I', '{schema}', r.tablename);
  END LOOP;
  FOR r IN SELECT sequencename, start_value FROM pg_sequences WHERE schemaname = '{schema}' LOOP
    PERFORM setval(format('%I.%I', '{schema}', r.sequencename)::regclass, r.start_value, false);
  END LOOP;
END $$
"""


class PostgresSchemas:
    """Migrated schemas of one database, used again once emptied."""

    def __init__(self, dsn: str) -> None:
        self._dsn = dsn
        self._free: list[str] = []
        self._migrated: str | None = None  # the shape of a schema fresh from the revisions
        self._all: set[str] = set()

    def fresh(self) -> str:
        """A new schema's name (dropped at the end of the run, if not before)."""
        schema = f"relay_test_{uuid.uuid4().hex[:12]}"
        self._all.add(schema)
        return schema

    def take(self) -> str | None:
        """An emptied migrated schema, if a test left one."""
        return self._free.pop() if self._free else None

    async def shape(self, conn: asyncpg.Connection, schema: str) -> str:
        rows = await conn.fetch(_SHAPE, schema)
        try:
            revision = await conn.fetchval(f'SELECT version_num FROM "{schema}".alembic_version')
        except asyncpg.UndefinedTableError:
            revision = None
        held = sorted(str(row[0]).replace(f"{schema}.", "") for row in rows)
        return hashlib.sha256("\n".join([*held, str(revision)]).encode()).hexdigest()

    async def migrated(self, schema: str) -> None:
        """``schema`` was just made by the revisions: the shape a schema must keep to be used
        again."""
        if self._migrated is None:
            conn = await asyncpg.connect(self._dsn)
            try:
                self._migrated = await self.shape(conn, schema)
            finally:
                await conn.close()

    async def release(self, schema: str) -> None:
        """Empty ``schema`` for the next test if its shape is still the revisions', else drop
        it."""
        conn = await asyncpg.connect(self._dsn)
        try:
            if self._migrated is not None and await self.shape(conn, schema) == self._migrated:
                await conn.execute(_EMPTY.replace("{schema}", schema))
                self._free.append(schema)
            else:
                await conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
                self._all.discard(schema)
        finally:
            await conn.close()

    def drop_all(self) -> None:
        """Drop every schema this run made (at its end)."""
        if not self._all:
            return

        async def drop() -> None:
            conn = await asyncpg.connect(self._dsn)
            try:
                for schema in self._all:
                    await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            finally:
                await conn.close()

        asyncio.run(drop())
