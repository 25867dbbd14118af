"""One live server for the SDK tests (each test uses its own ids)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.live import LiveServer, live_server


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    # Webhooks go to the tests' receivers on this host.
    allowed = {"RELAY_WEBHOOKS_ALLOW_PRIVATE": "true"}
    with live_server(tmp_path_factory.mktemp("relay-client"), **allowed) as running:
        yield running
