"""What several end-to-end tests share."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from tests.conftest import PG_SKIP, PG_URL, asyncpg_url


async def _admin(statement: str) -> None:
    engine = create_async_engine(asyncpg_url(PG_URL), isolation_level="AUTOCOMMIT")
    async with engine.connect() as conn:
        await conn.execute(text(statement))
    await engine.dispose()


@pytest.fixture
def database() -> Iterator[str]:
    """A database of its own for this test, dropped afterwards."""
    if not PG_URL:
        pytest.skip(PG_SKIP)
    name = f"relay_e2e_{uuid.uuid4().hex[:10]}"
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    base = asyncpg_url(PG_URL).rsplit("/", 1)[0]
    yield f"{base}/{name}"
    asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
