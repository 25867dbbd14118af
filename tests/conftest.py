"""Shared fixtures: storage backends, a controllable clock, and the app under test."""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from relay_core.ports import Storage
from relay_core.storage.postgres import PostgresStorage
from relay_core.storage.sqlite import SqliteStorage
from tests import home, migrated
from tests.synapse import Homeserver, running_homeserver

PG_URL = os.environ.get("RELAY_TEST_DATABASE_URL", "")
PG_SKIP = "RELAY_TEST_DATABASE_URL is not set: no PostgreSQL server to test against"
# The test server as asyncpg itself takes it, whatever driver the URL names.
PG_DSN = "postgresql://" + PG_URL.split("://", 1)[-1]
SCHEMAS = migrated.PostgresSchemas(PG_DSN)

BACKENDS = [
    "sqlite",
    pytest.param("postgres", marks=pytest.mark.postgres),
]


def asyncpg_url(url: str) -> str:
    """The test URL with the asyncpg driver, whatever driver it was given with."""
    scheme, rest = url.split("://", 1)
    return f"postgresql+asyncpg://{rest}" if scheme.startswith("postgres") else url


class Clock:
    """A clock the tests move by hand."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'relay.db'}"


async def _postgres_schema() -> tuple[str, str]:
    """A fresh schema for one test, so runs never see each other's rows."""
    url = asyncpg_url(PG_URL)
    schema = SCHEMAS.fresh()
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    await engine.dispose()
    return url, schema


async def release_schema(url: str, schema: str) -> None:
    """Done with ``schema``: the next test may have it, emptied (``tests.migrated``)."""
    await SCHEMAS.release(schema)


async def make_storage(backend: str, sqlite_url: str) -> tuple[Storage, Any]:
    """A migrated storage of the named backend, and what is needed to clean it up."""
    if backend == "sqlite":
        await migrated.sqlite_store(SqliteStorage.file_of(sqlite_url))
        storage = SqliteStorage(sqlite_url)
        await storage.migrate()
        return storage, None
    if not PG_URL:
        pytest.skip(PG_SKIP)
    schema = SCHEMAS.take()
    fresh = schema is None
    if schema is None:
        _, schema = await _postgres_schema()
    url = asyncpg_url(PG_URL)
    storage = PostgresStorage(url, connect_args={"server_settings": {"search_path": schema}})
    await storage.migrate()
    if fresh:
        await SCHEMAS.migrated(schema)
    return storage, (url, schema)


@pytest.fixture(params=BACKENDS)
async def storage(request: pytest.FixtureRequest, sqlite_url: str) -> AsyncIterator[Storage]:
    """Every storage adapter in turn, freshly migrated."""
    store, cleanup = await make_storage(request.param, sqlite_url)
    yield store
    await store.close()
    if cleanup is not None:
        await release_schema(*cleanup)


@asynccontextmanager
async def other_application() -> AsyncIterator[asyncpg.Connection]:
    """A transaction of another application on the same cluster, holding a transaction id
    and writing no feed row."""
    conn = await asyncpg.connect(PG_DSN)
    try:
        await conn.execute("BEGIN")
        await conn.fetchval("SELECT pg_current_xact_id()")
        yield conn
    finally:
        await conn.close()  # which ends the transaction if it is still open


# The tests that run one at a time, as without pytest-xdist, on one worker: those that use the
# PostgreSQL server of RELAY_TEST_DATABASE_URL. A read of the event feed sees a commit once
# every older transaction of the cluster has ended, so another worker's would hold it back.
# The others (SQLite, and the end-to-end tests of a private cluster or none) are spread over
# the rest. By the test's id: the scheduler sees ids, not marks (and under pytest 9
# pytest-xdist's xdist_group, which it appends to the id, groups nothing); a test that uses the
# server and is not named here stops the collection (below).
ONE_AT_A_TIME = (
    "tests/storage/test_migrated_stores.py",
    "tests/storage/test_postgres_",
    "tests/storage/test_migrations.py::test_both_adapters_migrate",
    "tests/e2e/test_bench_smoke.py",
    "tests/e2e/test_container.py",
    "tests/e2e/test_deploy_database.py",
    "tests/e2e/test_instances.py",
    "tests/e2e/test_pg_concurrency.py",
)
ON_POSTGRES = re.compile(r"[\[-]postgres[\]-]")


def one_at_a_time(nodeid: str) -> bool:
    return nodeid.startswith(ONE_AT_A_TIME) or ON_POSTGRES.search(nodeid) is not None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that uses the PostgreSQL server is one the scheduler runs one at a time."""
    for item in items:
        uses_postgres = item.get_closest_marker("postgres") or "database" in getattr(
            item, "fixturenames", ()
        )
        if uses_postgres and not one_at_a_time(item.nodeid):
            raise pytest.UsageError(f"{item.nodeid} uses PostgreSQL: add it to ONE_AT_A_TIME")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    from xdist.scheduler import LoadGroupScheduling

    class OneAtATime(LoadGroupScheduling):
        """Load scheduling, the tests ``one_at_a_time`` names in one unit of work."""

        def _split_scope(self, nodeid: str) -> str:
            return "one-at-a-time" if one_at_a_time(nodeid) else nodeid

    return OneAtATime(config, log)


def pytest_configure(config: pytest.Config) -> None:
    """Before anything runs: a home of the run's own, and a watch on the real one."""
    config.stash[REAL_HOME_BEFORE] = home.start_run()


REAL_HOME_BEFORE = pytest.StashKey[dict[str, tuple[int, float]]]()


@pytest.fixture(autouse=True)
def own_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Each test with a home (and XDG directories) of its own; one that wrote into the real
    home fails, naming what it wrote."""
    home.use_home(tmp_path_factory.mktemp("home"), monkeypatch.setenv)
    yield
    written = list(home.taken_writes())
    assert not written, f"the test wrote into the real home: {written}"


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A process a test started that wrote into Relay's directories in the real home fails
    the run."""
    migrated.drop_sqlite_template()
    if PG_URL:
        SCHEMAS.drop_all()
    changed = home.changes(session.config.stash[REAL_HOME_BEFORE])
    if changed:
        session.config.get_terminal_writer().line(
            f"FAILED: the tests changed the real home: {changed}", red=True
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say how many tests ran on PostgreSQL, so a CI log shows they ran rather than skipped."""
    passed = terminalreporter.stats.get("passed", [])
    on_postgres = sum(1 for report in passed if "postgres" in report.keywords)
    where = PG_URL or "not configured (set RELAY_TEST_DATABASE_URL)"
    terminalreporter.write_line(f"PostgreSQL: {on_postgres} tests passed against {where}")


@pytest.fixture(scope="module")
def homeserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Homeserver]:
    """A real Synapse for the Matrix tests of one module (installed once, started here)."""
    with running_homeserver(tmp_path_factory.mktemp("synapse")) as running:
        yield running
