"""An inbox read is answered before its delivery marks reach the disk
(docs/resources/storage.md): the marks are advice, and what a crash can lose is only them — the
message stays in the inbox and is delivered again, its ``delivery_count`` short by the read that
was lost."""

from __future__ import annotations

import asyncio

import pytest

from relay_core.storage.sqlite import SqliteStorage
from relay_core.storage.sqlite.driver import sqlite3
from relay_server.app_keys import SERVICES
from tests.server.conftest import Api
from tests.storage.test_sqlite_writer import HeldCommit

pytestmark = pytest.mark.parametrize("make_api", ["sqlite"], indirect=True)


def on_disk(api: Api, message_id: int) -> tuple[str, int]:
    """The message's status and delivery count as another process finds them in the file."""
    conn = sqlite3.connect(api.db_path)
    try:
        query = "SELECT status, delivery_count FROM messages WHERE message_id = ?"
        status, count = conn.execute(query, (message_id,)).fetchone()
        return str(status), int(count)
    finally:
        conn.close()


def hold_commits(api: Api, *, fail: bool = False) -> HeldCommit:
    storage = api.client.app[SERVICES].ctx.storage
    assert isinstance(storage, SqliteStorage)
    writer = storage._writer_for_loop()
    held = HeldCommit(writer.conn, fail=fail)
    writer.conn = held  # type: ignore[assignment]
    return held


async def test_an_inbox_read_does_not_wait_for_its_marks_to_reach_the_disk(api: Api) -> None:
    await api.agent("bob")
    sent = await api.post("/v1/messages", {"to": "bob", "text": "hello"}, expect=201)
    held = hold_commits(api)

    inbox = await asyncio.wait_for(api.get("/v1/agents/bob/inbox", as_="bob"), 5)
    [message] = inbox["messages"]
    assert (message["status"], message["delivery_count"]) == ("delivered", 1)
    assert on_disk(api, sent["message_id"]) == ("pending", 0)  # the answer came first
    # A write that is not advice still waits for its COMMIT.
    posting = asyncio.create_task(api.post("/v1/messages", {"to": "bob", "text": "x"}, expect=201))
    await asyncio.sleep(0.2)
    assert not posting.done()

    held.passage.set()
    await asyncio.wait_for(posting, 5)
    assert on_disk(api, sent["message_id"]) == ("delivered", 1)


async def test_marks_lost_with_their_commit_leave_the_message_to_be_delivered_again(
    api: Api,
) -> None:
    await api.agent("bob")
    sent = await api.post("/v1/messages", {"to": "bob", "text": "hello"}, expect=201)
    held = hold_commits(api, fail=True)
    held.passage.set()

    first = await api.get("/v1/agents/bob/inbox", as_="bob")
    assert first["messages"][0]["delivery_count"] == 1
    for _ in range(50):  # the failed COMMIT rolled the marks back, as a crash would lose them
        if not held.fail:
            break
        await asyncio.sleep(0.02)
    assert on_disk(api, sent["message_id"]) == ("pending", 0)

    again = await api.get("/v1/agents/bob/inbox", as_="bob")
    [message] = again["messages"]
    assert message["message_id"] == sent["message_id"]
    assert message["delivery_count"] == 1  # two reads, one counted: the loss is the count
    await api.post(f"/v1/messages/{sent['message_id']}/ack", {}, as_="bob")
    assert on_disk(api, sent["message_id"]) == ("acked", 1)
