"""A database that cannot serve is a 503 with Retry-After, never a 500."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient
from pydantic import SecretStr

from relay_core.storage.postgres import PostgresStorage
from relay_server import Settings, create_app
from tests.live import free_port
from tests.server.conftest import OPERATOR_TOKEN

Client = Callable[..., Awaitable[TestClient[Any, Any]]]
OPERATOR = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}


async def test_an_unreachable_postgresql_is_503_storage_unavailable(
    aiohttp_client: Client, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Nothing listens on that port: every unit of work fails to connect.
    storage = PostgresStorage(f"postgresql+asyncpg://relay@127.0.0.1:{free_port()}/relay")
    settings = Settings(data_dir=tmp_path, operator_token=SecretStr(OPERATOR_TOKEN))
    client = await aiohttp_client(create_app(settings, storage=storage))
    for method, path, body in (
        ("POST", "/v1/tasks", {"title": "t"}),
        ("GET", "/v1/tasks", None),
        ("GET", "/v1/status", None),
    ):
        response = await client.request(method, path, json=body, headers=OPERATOR)
        assert response.status == 503, await response.text()
        assert (await response.json())["code"] == "storage_unavailable"
        assert int(response.headers["Retry-After"]) >= 1
    warnings = [r for r in caplog.records if "storage unavailable" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].exc_info is None  # one line, no traceback
