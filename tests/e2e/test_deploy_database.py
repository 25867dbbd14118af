"""docs/deploy.md's database set-up, run as written on a PostgreSQL cluster of the test's own:
the role and the database it makes are enough for Relay to create its tables and serve."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import asyncpg
import httpx

from tests.live import live_server
from tests.postgres_cluster import private_cluster

DEPLOY = Path(__file__).parents[2] / "docs" / "deploy.md"


def documented() -> tuple[str, str]:
    """The SQL that makes the role and the database, and the URL that reaches them."""
    text = DEPLOY.read_text()
    [sql] = re.findall(r"`(CREATE ROLE [^`]+)`", text)
    [url] = re.findall(r"RELAY_DATABASE_URL=(postgresql\+asyncpg://relay:<password>@[^`\s]+)", text)
    return sql, url


async def run_as_superuser(cluster_url: str, sql: str) -> None:
    conn = await asyncpg.connect(cluster_url.replace("postgresql+asyncpg", "postgresql"))
    try:
        for statement in filter(None, (s.strip() for s in sql.split(";"))):
            await conn.execute(statement)  # CREATE DATABASE runs outside a transaction
    finally:
        await conn.close()


def test_the_documented_role_and_database_are_enough_to_serve(tmp_path: Path) -> None:
    sql, url = documented()
    password = "s3cret"
    with private_cluster() as cluster:
        asyncio.run(run_as_superuser(cluster.url, sql.replace("'…'", f"'{password}'")))
        host_port = cluster.url.split("@", 1)[1].split("/", 1)[0]
        relay_url = url.replace("<password>", password).replace("<host>:5432", host_port)
        with live_server(tmp_path, RELAY_DATABASE_URL=relay_url) as server:
            op = {"Authorization": f"Bearer {server.operator_token}"}
            created = httpx.post(f"{server.url}/v1/tasks", json={"title": "t"}, headers=op)
            assert created.status_code == 201, created.text
            status = httpx.get(f"{server.url}/v1/status", headers=op).json()
            assert status["storage"] == "postgresql" and status["counts"]["open_tasks"] == 1
