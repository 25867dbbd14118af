"""The search index on every store: what is written is found as it commits, by words, phrases,
exclusions and OR, of the kinds asked, in the time asked, as far as the reader may read it; and
the same query finds the same records on every store."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from relay_api import models as m
from relay_api.params import SEARCH_KINDS
from relay_core.ports import SearchRow, SearchSpec, Storage
from relay_core.search_query import parse
from relay_core.storage.sqlite import SqliteStorage
from relay_core.storage.sqlite.driver import sqlite3
from relay_core.storage.sqlite.search import SearchThreads

T0 = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


async def seed(storage: Storage) -> dict[str, int]:
    """A small world: direct messages, room posts, a task with events, approvals, an action."""
    async with storage.unit_of_work(write=True) as uow:
        for agent_id in ("alice", "bob", "carol"):
            await uow.agents.insert(m.Agent(agent_id=agent_id, created_at=T0, updated_at=T0))
        await uow.rooms.insert(m.Room(room_id="ops", name="ops", created_by="alice", created_at=T0))
        await uow.rooms.join(m.RoomMember(room_id="ops", agent_id="alice", joined_at=T0))
        await uow.rooms.join(m.RoomMember(room_id="ops", agent_id="carol", joined_at=T0))

        async def say(minutes: int, **fields: object) -> int:
            status = "posted" if fields.get("room_id") else "pending"
            message = m.Message(status=status, created_at=at(minutes), **fields)  # type: ignore[arg-type]
            return (await uow.messages.insert(message)).message_id

        tls = "The TLS certificate expires on Friday"
        ids = {
            "tls": await say(1, from_agent="alice", to="bob", subject="certs", text=tls),
            "disk": await say(2, from_agent="bob", to="alice", text="disk full on the build host"),
            "post": await say(
                3,
                from_agent="alice",
                room_id="ops",
                text="rotating the TLS cert for api.example.com",
            ),
            "path": await say(
                4,
                from_agent="carol",
                room_id="ops",
                text="see /etc/ssl/tls_cert.pem, restart nginx",
            ),
        }
        task = m.Task(
            title="Renew the certificate",
            description="before it expires",
            payload={"host": "api.example.com", "notes": ["ask security"], "n": 3},
            status="open",
            created_by="operator",
            created_at=at(5),
            updated_at=at(5),
        )
        ids["task"] = (await uow.tasks.insert(task)).task_id
        event = m.TaskEvent(
            task_id=ids["task"], kind="progress", message="ordered from the CA", created_at=at(6)
        )
        await uow.task_events.insert(event)
        stored = await uow.tasks.get(ids["task"])
        assert stored is not None
        await uow.tasks.complete(stored, {"summary": "renewed until 2027"}, None, at(7))
        approval = m.Approval(
            kind="request",
            title="Restart nginx on the edge",
            detail="after the certificate swap",
            requested_by="bob",
            subject_id="bob",
            audience="bob",
            created_at=at(7),
        )
        ids["approval"] = (await uow.approvals.insert(approval)).approval_id
        action = m.Action(
            agent_id="carol",
            action="restarted nginx",
            target="edge-1",
            params={"signal": "HUP"},
            created_at=at(8),
        )
        ids["action"] = (await uow.actions.insert(action)).action_id
        await uow.commit()
    return ids


async def search(storage: Storage, q: str, **fields: object) -> list[SearchRow]:
    kinds = fields.pop("kinds", SEARCH_KINDS)
    reader = fields.pop("reader", None)
    spec = SearchSpec(query=parse(q), kinds=kinds, reader=reader, **fields)  # type: ignore[arg-type]
    async with storage.unit_of_work(write=False) as uow:
        return await uow.search_index.search(spec)


def found(rows: list[SearchRow]) -> set[tuple[str, int]]:
    return {(row.kind, row.id) for row in rows}


async def test_words_phrases_exclusions_and_or(storage: Storage) -> None:
    ids = await seed(storage)
    tls = ("message", ids["tls"])
    post = ("room_post", ids["post"])
    path = ("room_post", ids["path"])
    assert found(await search(storage, "tls")) == {tls, post, path}
    assert found(await search(storage, "TLS certificate")) == {tls}
    assert found(await search(storage, '"tls certificate"')) == {tls}
    assert found(await search(storage, '"certificate tls"')) == set()
    assert found(await search(storage, "tls -nginx")) == {tls, post}
    assert found(await search(storage, "disk OR nginx")) == {
        ("message", ids["disk"]), path, ("approval", ids["approval"]), ("action", ids["action"])
    }  # fmt: skip
    # A code identifier or a path is the phrase of its words.
    assert found(await search(storage, "tls_cert.pem")) == {path}
    assert found(await search(storage, "api.example.com")) == {post, ("task", ids["task"])}


async def test_a_tasks_title_payload_events_and_result_are_its_text(storage: Storage) -> None:
    ids = await seed(storage)
    task = {("task", ids["task"])}
    for words in ("renew", "security", "CA ordered", "2027", "expires before"):
        assert found(await search(storage, words, kinds=("task",))) == task, words
    assert found(await search(storage, "HUP edge")) == {("action", ids["action"])}
    [hit] = await search(storage, "renewed", kinds=("task",))
    assert hit.title == "Renew the certificate" and hit.from_agent == "operator"


async def test_kinds_authors_rooms_and_time(storage: Storage) -> None:
    ids = await seed(storage)
    assert found(await search(storage, "tls", kinds=("message",))) == {("message", ids["tls"])}
    assert found(await search(storage, "tls", agent_id="carol")) == {("room_post", ids["path"])}
    assert found(await search(storage, "tls", room_id="ops")) == {
        ("room_post", ids["post"]), ("room_post", ids["path"])
    }  # fmt: skip
    assert found(await search(storage, "tls", since=at(3), until=at(4))) == {
        ("room_post", ids["post"])
    }


async def test_a_reader_finds_only_what_it_may_read(storage: Storage) -> None:
    """Bob: his direct messages, no room he is not in, his own approval, no one's action;
    carol: the room's posts and her action, not alice and bob's messages nor bob's request."""
    ids = await seed(storage)
    assert found(await search(storage, "tls OR disk OR nginx OR certificate", reader="bob")) == {
        ("message", ids["tls"]), ("message", ids["disk"]), ("approval", ids["approval"]),
        ("task", ids["task"]),
    }  # fmt: skip
    assert found(await search(storage, "tls OR disk OR nginx OR certificate", reader="carol")) == {
        ("room_post", ids["post"]), ("room_post", ids["path"]), ("action", ids["action"]),
        ("task", ids["task"]),
    }  # fmt: skip


async def test_hits_come_best_first_with_their_words_marked_and_page_by_the_last(
    storage: Storage,
) -> None:
    ids = await seed(storage)
    every = await search(storage, "tls OR certificate OR nginx", limit=100)
    assert len(every) == 6
    order = [(-h.score, -h.created_at.timestamp(), -h.key) for h in every]
    assert order == sorted(order)
    [tls] = [h for h in every if h.id == ids["tls"] and h.kind == "message"]
    assert "[TLS]" in tls.snippet and "[certificate]" in tls.snippet
    assert tls.title == "certs" and tls.from_agent == "alice" and tls.created_at == at(1)
    pages, after = [], None
    while True:
        page = await search(storage, "tls OR certificate OR nginx", limit=3, after=after)
        pages.append([(h.kind, h.id) for h in page])
        if len(page) < 3:
            break
        last = page[-1]
        after = (last.score, last.created_at, last.key)
    assert [hit for page in pages for hit in page] == [(h.kind, h.id) for h in every]


async def test_a_snippet_is_at_most_300_characters(storage: Storage) -> None:
    long = "filler " * 200 + "needle " + "filler " * 200
    async with storage.unit_of_work(write=True) as uow:
        await uow.agents.insert(m.Agent(agent_id="a", created_at=T0, updated_at=T0))
        sent = m.Message(from_agent="a", to="a", text=long, status="pending", created_at=T0)
        await uow.messages.insert(sent)
        await uow.commit()
    for reader in (None, "a"):  # the operator's page and an agent's make snippets apart
        [hit] = await search(storage, "needle", reader=reader)
        assert "[needle]" in hit.snippet and len(hit.snippet) <= 300


@pytest.mark.parametrize("q", ["", "-tls", '""', "OR"])
def test_a_query_with_nothing_to_find_is_refused(q: str) -> None:
    from relay_api.errors import InvalidInput

    with pytest.raises(InvalidInput):
        parse(q)


async def test_what_units_sharing_a_commit_wrote_is_found_but_what_a_failed_one_wrote(
    storage: Storage,
) -> None:
    """On SQLite the units share a group commit, and the index is written as it commits."""
    await seed(storage)

    async def write(word: str, fail: bool = False) -> None:
        async with storage.unit_of_work(write=True) as uow:
            text = f"{word} in the rack"
            await uow.messages.insert(
                m.Message(
                    from_agent="alice", to="bob", text=text, status="pending", created_at=at(9)
                )
            )
            if fail:
                raise RuntimeError("the unit fails after its write")
            await uow.commit()

    words = [f"zebra{n}" for n in range(20)]
    outcomes = await asyncio.gather(
        *(write(word) for word in words), write("okapi", fail=True), return_exceptions=True
    )
    assert sum(isinstance(outcome, RuntimeError) for outcome in outcomes) == 1
    for word in words:
        assert len(await search(storage, word)) == 1
    assert await search(storage, "okapi") == []
    assert len(await search(storage, "rack")) == 20


async def test_a_tasks_entry_follows_its_later_events_and_changes(storage: Storage) -> None:
    ids = await seed(storage)
    task = ("task", ids["task"])
    async with storage.unit_of_work(write=True) as uow:
        event = m.TaskEvent(
            task_id=ids["task"], kind="progress", message="installed on quokka", created_at=at(9)
        )
        await uow.task_events.insert(event)
        await uow.commit()
    assert found(await search(storage, "quokka")) == {task}
    assert found(await search(storage, "ordered CA")) == {task}  # its earlier event's words
    async with storage.unit_of_work(write=True) as uow:  # its result changed: a retry's
        stored = await uow.tasks.get(ids["task"])
        assert stored is not None
        await uow.tasks.retry(stored, {"summary": "the wombat ate it"}, "eaten", at(10))
        await uow.commit()
    assert found(await search(storage, "wombat quokka")) == {task}
    assert await search(storage, "2027", kinds=("task",)) == []


async def test_the_notes_relay_writes_on_a_trail_are_not_searched(storage: Storage) -> None:
    ids = await seed(storage)
    async with storage.unit_of_work(write=True) as uow:
        for kind, message in [
            ("claimed", "lease 300s"),
            ("lease_expired", "the lease of agent 'bob' lapsed; the task is open again"),
            ("failed", "the lapsed wombat"),
        ]:
            event = m.TaskEvent(task_id=ids["task"], kind=kind, message=message, created_at=at(9))
            await uow.task_events.insert(event)
        await uow.commit()
    assert await search(storage, "lease") == []
    assert found(await search(storage, "lapsed")) == {("task", ids["task"])}
    assert found(await search(storage, "wombat ordered")) == {("task", ids["task"])}


async def test_a_note_relay_writes_does_not_index_its_task_again(sqlite_url: str) -> None:
    storage = SqliteStorage(sqlite_url)
    await storage.migrate()
    await storage.close()
    conn = sqlite3.connect(SqliteStorage.file_of(sqlite_url), isolation_level=None)
    try:
        conn.execute(
            "INSERT INTO tasks (task_id, title, payload, priority, status, created_by, attempts, "
            "max_attempts, created_at, updated_at) "
            "VALUES (1, 'Renew', '{}', 0, 'open', 'operator', 0, 1, '2026', '2026')"
        )
        queued = []
        for kind, message in [("claimed", "lease 300s"), ("progress", "ordered")]:
            conn.execute("DELETE FROM search_queue")
            conn.execute(
                "INSERT INTO task_events (task_id, kind, message, data, created_at) "
                "VALUES (1, ?, ?, '{}', '2026')",
                (kind, message),
            )
            queued += conn.execute("SELECT ref_id FROM search_queue").fetchall()
        assert queued == [(1,)]  # the progress's
    finally:
        conn.close()


async def test_a_search_whose_caller_leaves_is_interrupted_and_its_thread_freed(
    tmp_path: Path,
) -> None:
    opened: list[sqlite3.Connection] = []

    def connect() -> sqlite3.Connection:
        opened.append(sqlite3.connect(tmp_path / "relay.db", check_same_thread=False))
        return opened[-1]

    endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n"
    searches = SearchThreads(connect, threads=1)
    try:
        running = asyncio.ensure_future(searches.run(lambda c: c.execute(endless).fetchall()))
        await asyncio.sleep(0.2)
        running.cancel()
        await asyncio.wait([running], timeout=10)
        assert running.cancelled()
        # The one thread is free again, on the same connection, for the next search.
        answer = searches.run(lambda c: c.execute("SELECT 41 + 1").fetchone())
        assert await asyncio.wait_for(answer, 10) == (42,)
        assert len(opened) == 1
    finally:
        for conn in opened:
            conn.interrupt()  # should the test fail, its thread ends all the same
        searches.close()


async def test_a_reader_among_many_hidden_matches_finds_only_its_own(storage: Storage) -> None:
    """Past a thousand matches the index itself finds what the reader may read (SQLite's
    readers column, PostgreSQL's readers array): the same answer as below it."""
    ids = await seed(storage)
    async with storage.unit_of_work(write=True) as uow:
        for n in range(1_100):
            hidden = m.Message(
                from_agent="alice",
                to="carol",
                text=f"the zebra crossing {n}",
                status="pending",
                created_at=at(10),
            )
            await uow.messages.insert(hidden)
        mine = m.Message(
            from_agent="alice",
            to="bob",
            text="a zebra for bob",
            status="pending",
            created_at=at(11),
        )
        ids["mine"] = (await uow.messages.insert(mine)).message_id
        await uow.commit()
    assert found(await search(storage, "zebra", reader="bob")) == {("message", ids["mine"])}
    assert len(await search(storage, "zebra", reader="carol", limit=20)) == 20
    everyone = "zebra OR certificate"
    assert ("task", ids["task"]) in found(await search(storage, everyone, reader="bob"))
    posts = await search(storage, "zebra OR tls", reader="carol", kinds=("room_post",))
    assert found(posts) == {("room_post", ids["post"]), ("room_post", ids["path"])}
