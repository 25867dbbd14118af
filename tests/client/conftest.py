"""One live server for the SDK tests (each test uses its own ids)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.live import LiveServer, live_server


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with live_server(tmp_path_factory.mktemp("relay-client")) as running:
        yield running
