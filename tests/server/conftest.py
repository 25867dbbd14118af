"""The real aiohttp app over each storage backend, and a small helper to call it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from pydantic import SecretStr

from relay_core.ports import Bridge
from relay_server import create_app
from relay_server.app_keys import SERVICES
from relay_server.settings import settings_from
from relay_server.tracing import Tracing
from tests.conftest import BACKENDS, Clock, make_storage, release_schema
from tests.server.fake_slack import FakeSlack

OPERATOR_TOKEN = "rly_op_test-operator-token-0123456789"


class Api:
    """Calls the app and checks the status in one line per request."""

    def __init__(self, client: TestClient[Any, Any], clock: Clock, db_path: Path) -> None:
        self.client = client
        self.clock = clock
        self.db_path = db_path
        self.tokens: dict[str, str] = {}

    def headers(self, as_: str | None, token: str | None) -> dict[str, str]:
        if token is None:
            token = OPERATOR_TOKEN if as_ in (None, "operator") else self.tokens[as_]  # type: ignore[index]
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return headers

    async def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        as_: str | None = None,
        token: str | None = None,
        expect: int = 200,
        headers: dict[str, str] | None = None,
        **params: Any,
    ) -> Any:
        sent = {**self.headers(as_, token), **(headers or {})}
        response = await self.client.request(method, path, json=body, headers=sent, params=params)
        payload = await response.json()
        assert response.status == expect, (response.status, payload)
        await self.sent()
        return payload

    async def sent(self) -> None:
        """Wait until the outbox's sender has done the platforms' jobs due now (what a request
        asked of the platforms is done within moments of its answer, not before it)."""
        outbox = self.client.app[SERVICES].outbox
        for _ in range(500):
            if not await outbox.due(1):
                return
            await asyncio.sleep(0.01)
        raise AssertionError("the platforms' jobs due were not done within 5 s")

    async def get(self, path: str, **kw: Any) -> Any:
        return await self.call("GET", path, **kw)

    async def post(self, path: str, body: Any = None, **kw: Any) -> Any:
        return await self.call("POST", path, body, **kw)

    async def agent(self, agent_id: str, **fields: Any) -> str:
        """Register an agent as the operator; remember and return its token."""
        registered = await self.post(
            "/v1/agents/register", {"agent_id": agent_id, **fields}, expect=201
        )
        self.tokens[agent_id] = registered["token"]
        return str(registered["token"])


AppFactory = Callable[..., Awaitable[Api]]

# For a test of what the server answers before storage has a say (a body it cannot read, a
# header, an origin): run on SQLite alone, not once per backend.
ONE_BACKEND = pytest.mark.parametrize("make_api", ["sqlite"], indirect=True)


@pytest.fixture(params=BACKENDS)
async def make_api(
    request: pytest.FixtureRequest,
    aiohttp_client: Callable[..., Awaitable[TestClient[Any, Any]]],
    tmp_path: Path,
    clock: Clock,
    sqlite_url: str,
) -> AsyncIterator[AppFactory]:
    """Build the app over this backend, with settings and bridge the test may override."""
    clients: list[TestClient[Any, Any]] = []
    cleanups: list[Any] = []

    async def build(
        bridge: Bridge | None = None, tracing: Tracing | None = None, **overrides: Any
    ) -> Api:
        store, cleanup = await make_storage(request.param, sqlite_url)
        cleanups.append(cleanup)
        given = {"data_dir": tmp_path, "operator_token": SecretStr(OPERATOR_TOKEN), **overrides}
        settings = settings_from(given)  # by their flag names: rate_limit, telegram_mode...
        bridges = [bridge] if bridge else None
        app = create_app(settings, storage=store, bridges=bridges, clock=clock, tracing=tracing)
        client = await aiohttp_client(app)
        clients.append(client)
        return Api(client, clock, tmp_path / "relay.db")

    yield build
    for client in clients:
        await client.close()
    for cleanup in cleanups:
        if cleanup is not None:
            await release_schema(*cleanup)


@pytest.fixture
async def api(make_api: AppFactory) -> Api:
    """The app with default settings."""
    return await make_api()


@pytest.fixture
async def slack(aiohttp_server: Callable[..., Awaitable[TestServer]]) -> tuple[FakeSlack, str]:
    fake = FakeSlack()
    app = web.Application()
    app.router.add_post("/api/{method}", fake.handle)
    server = await aiohttp_server(app)
    return fake, str(server.make_url("/api/"))
