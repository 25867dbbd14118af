"""The agents store: every named statement of ``queries/agents.sql`` run through its store
method on both adapters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from relay_api import models as m
from relay_core.ports import StaleWrite, Storage

NOW = datetime(2026, 11, 28, 14, 30, 0, 500000, tzinfo=UTC)


def agent(agent_id: str, **fields: object) -> m.Agent:
    return m.Agent(agent_id=agent_id, created_at=NOW, updated_at=NOW, **fields)  # type: ignore[arg-type]


async def test_every_statement_through_its_store_method(storage: Storage) -> None:
    later = NOW + timedelta(seconds=30)
    full = agent(
        "ada",
        name="Ada",
        kind="llm",
        capabilities=["x", "é"],
        metadata={"n": 2**70, "deep": {"list": [1, None]}},
        status="busy",
        note="n",
        last_seen_at=NOW,
        token_hash="a" * 64,
    )
    async with storage.unit_of_work(write=True) as uow:
        agents = uow.agents
        assert await agents.insert(full) == full
        await agents.insert(agent("bob"))
        await agents.insert(agent("cy"))
        assert await agents.get("ada") == full
        assert await agents.get("nobody") is None
        assert (await agents.exists("bob"), await agents.exists("nobody")) == (True, False)
        assert await agents.by_token("a" * 64) == "ada"
        assert await agents.by_token("b" * 64) is None
        again = await agents.register_again("ada", {"name": None, "capabilities": []}, None, later)
        assert again is not None
        assert (again.name, again.kind, again.capabilities) == (None, "llm", [])
        assert (again.metadata, again.token_hash, again.updated_at) == (
            full.metadata,
            "a" * 64,
            later,
        )
        rotated = await agents.register_again("ada", {}, "c" * 64, later)
        assert rotated is not None and rotated.token_hash == "c" * 64
        assert await agents.register_again("nobody", {}, None, later) is None
        beat = await agents.record_heartbeat("bob", {"status": "up", "metadata": {"k": 1}}, later)
        assert beat is not None and (beat.status, beat.note, beat.last_seen_at) == (
            "up",
            None,
            later,
        )
        quiet = await agents.record_heartbeat("bob", {"note": "n"}, later)  # the rest stays
        assert quiet is not None and (quiet.status, quiet.note, quiet.metadata) == (
            "up",
            "n",
            {"k": 1},
        )
        assert await agents.record_heartbeat("nobody", {}, later) is None
        token = await agents.set_token("cy", "d" * 64, later)
        assert token is not None and (token.token_hash, token.updated_at) == ("d" * 64, later)
        assert await agents.set_token("nobody", "e" * 64, later) is None
        await uow.commit()
    async with storage.unit_of_work(write=False) as uow:
        assert await uow.agents.count() == 3
        assert await uow.agents.count_seen_since(NOW) == 1  # bob's beat; ada's is at NOW
        first = await uow.agents.page(None, 2)
        rest = await uow.agents.page("bob", 2)
        stored = await uow.agents.get("ada")
    assert [a.agent_id for a in first] == ["ada", "bob"] and [a.agent_id for a in rest] == ["cy"]
    assert stored == rotated


async def test_a_token_is_one_agents(storage: Storage) -> None:
    async with storage.unit_of_work(write=True) as uow:
        await uow.agents.insert(agent("ada", token_hash="a" * 64))
        await uow.agents.insert(agent("bob"))
        await uow.commit()
    try:
        async with storage.unit_of_work(write=True) as uow:
            await uow.agents.set_token("bob", "a" * 64, NOW)
            await uow.commit()
    except StaleWrite:
        pass
    else:
        raise AssertionError("a second agent took the same token")
