"""The SQLite library a server runs on (``relay_core/storage/sqlite/driver.py``): pysqlite3's
where its wheel installed, the interpreter's ``sqlite3`` where none did; never both."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import httpx
import pytest

from tests.live import LiveServer, live_server, registered

# The compiled module of each library, as the process's memory maps name it.
PYSQLITE3 = "/pysqlite3/_sqlite3."
INTERPRETERS = "/lib-dynload/_sqlite3."


def loaded(server: LiveServer) -> str:
    """The files mapped into the server's memory, one a line."""
    return Path(f"/proc/{server.process.pid}/maps").read_text()


def walkthrough(server: LiveServer) -> None:
    """A message sent, read and found by search, and the thread it starts."""
    with httpx.Client(base_url=server.url, timeout=10) as http:
        as_alice = registered(http, server.operator_token, "alice")
        as_bob = registered(http, server.operator_token, "bob")
        text = "the TLS certificate of api.internal expires on Friday"
        sent = http.post("/v1/messages", json={"to": "bob", "text": text}, headers=as_alice)
        assert sent.status_code == 201, sent.text
        inbox = http.get("/v1/agents/bob/inbox", params={"limit": 10}, headers=as_bob).json()
        assert [m["text"] for m in inbox["messages"]] == [text]
        found = http.get("/v1/search", params={"q": '"tls certificate"'}, headers=as_bob).json()
        assert [(hit["kind"], hit["id"]) for hit in found["hits"]] == [
            ("message", sent.json()["message_id"])
        ]
        assert "the [TLS certificate] of" in found["hits"][0]["snippet"]
        thread = http.get(f"/v1/messages/{sent.json()['message_id']}/thread", headers=as_bob)
        assert [m["text"] for m in thread.json()["messages"]] == [text]


@pytest.mark.skipif(
    importlib.util.find_spec("pysqlite3") is None, reason="pysqlite3 has no wheel here"
)
def test_where_pysqlite3_installed_the_server_runs_on_it_alone(tmp_path: Path) -> None:
    with live_server(tmp_path) as server:
        walkthrough(server)
        maps = loaded(server)
    assert PYSQLITE3 in maps
    assert INTERPRETERS not in maps  # two copies of SQLite on one file lose each other's locks
    assert re.search(
        r"storage sqlite \(SQLite 3\.\d+\.\d+, pysqlite3\.dbapi2\)", server.log.read_text()
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/<pid>/maps")
def test_without_pysqlite3_the_server_runs_on_the_interpreters_sqlite(tmp_path: Path) -> None:
    # As on a platform with no wheel of it: importing it fails.
    shim = tmp_path / "shim" / "pysqlite3"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text('raise ImportError("no wheel of pysqlite3 here")\n')
    with live_server(tmp_path, PYTHONPATH=str(shim.parent)) as server:
        walkthrough(server)
        maps = loaded(server)
    assert INTERPRETERS in maps
    assert PYSQLITE3 not in maps
    assert re.search(r"storage sqlite \(SQLite 3\.\d+\.\d+, sqlite3\)", server.log.read_text())
