"""GET /v1/search over HTTP on every store: what each caller finds, the query's syntax, the
filters, the pages, and what is refused."""

from __future__ import annotations

from tests.server.conftest import Api


async def world(api: Api) -> dict[str, int]:
    for agent in ("alice", "bob", "carol"):
        await api.agent(agent)
    await api.post("/v1/rooms/ops/join", {"agent_id": "alice"}, as_="alice", expect=201)
    direct = {"to": "bob", "text": "the TLS certificate expires Friday", "subject": "certs"}
    sent = await api.post("/v1/messages", direct, as_="alice", expect=201)
    post = {"room_id": "ops", "text": "rotating the TLS certificate now"}
    posted = await api.post("/v1/messages", post, as_="alice", expect=201)
    task = await api.post("/v1/tasks", {"title": "Renew the TLS certificate"}, expect=201)
    asked = {"title": "Restart nginx", "detail": "after the certificate swap"}
    approval = await api.post("/v1/approvals", asked, as_="carol", expect=201)
    return {
        "message": sent["message_id"],
        "room_post": posted["message_id"],
        "task": task["task_id"],
        "approval": approval["approval_id"],
    }


def kinds_found(answer: dict[str, object]) -> set[tuple[str, int]]:
    return {(hit["kind"], hit["id"]) for hit in answer["hits"]}  # type: ignore[attr-defined, index]


async def test_each_caller_finds_what_it_may_read(api: Api) -> None:
    ids = await world(api)
    everything = {(kind, ids[kind]) for kind in ids}
    assert kinds_found(await api.get("/v1/search", q="certificate")) == everything
    assert kinds_found(await api.get("/v1/search", as_="bob", q="certificate")) == {
        ("message", ids["message"]), ("task", ids["task"])
    }  # fmt: skip
    assert kinds_found(await api.get("/v1/search", as_="carol", q="certificate")) == {
        ("task", ids["task"]), ("approval", ids["approval"])
    }  # fmt: skip
    alice = await api.get("/v1/search", as_="alice", q='"TLS certificate" -friday')
    assert kinds_found(alice) == {("room_post", ids["room_post"]), ("task", ids["task"])}
    [post] = [hit for hit in alice["hits"] if hit["kind"] == "room_post"]
    # A phrase is marked whole (SQLite) or word by word (PostgreSQL, memory).
    marked = post["snippet"].replace("] [", " ")
    assert marked == "rotating the [TLS certificate] now"
    assert post["room_id"] == "ops" and post["from_agent"] == "alice" and post["title"] is None


async def test_filters_and_pages(api: Api) -> None:
    ids = await world(api)
    only = await api.get("/v1/search", q="certificate", kinds="task,approval")
    assert kinds_found(only) == {("task", ids["task"]), ("approval", ids["approval"])}
    by_carol = await api.get("/v1/search", q="certificate", agent_id="carol")
    assert kinds_found(by_carol) == {("approval", ids["approval"])}
    in_ops = await api.get("/v1/search", q="certificate", room_id="ops")
    assert kinds_found(in_ops) == {("room_post", ids["room_post"])}
    later = await api.get("/v1/search", q="certificate", since="2100-01-01T00:00:00Z")
    assert later["hits"] == [] and "next_cursor" not in later
    seen, cursor = [], None
    while True:
        page = await api.get(
            "/v1/search", q="certificate", limit="1", **({"cursor": cursor} if cursor else {})
        )
        seen += [(hit["kind"], hit["id"]) for hit in page["hits"]]
        cursor = page.get("next_cursor")
        if cursor is None:
            break
    everything = await api.get("/v1/search", q="certificate")
    assert seen == [(hit["kind"], hit["id"]) for hit in everything["hits"]] and len(seen) == 4


async def test_what_is_refused(api: Api) -> None:
    await api.agent("alice")
    for query in (
        {},
        {"q": ""},
        {"q": "-only -exclusions"},
        {"q": "x" * 501},
        {"q": "x", "kinds": "message,files"},
        {"q": "x", "limit": "101"},
        {"q": "x", "cursor": "forged"},
        {"q": "x", "since": "2026-02-01T00:00:00Z", "until": "2026-01-01T00:00:00Z"},
    ):
        refused = await api.get("/v1/search", as_="alice", expect=422, **query)
        assert refused["code"] == "validation_error" or refused["detail"], query
    await api.get("/v1/search", token="", q="x", expect=401)


async def test_times_without_a_zone_are_taken_as_utc(api: Api) -> None:
    ids = await world(api)
    found = await api.get("/v1/search", q="certificate", since="2000-01-01T00:00:00")
    assert len(found["hits"]) == len(ids)
    assert (await api.get("/v1/search", q="certificate", until="2000-01-01T00:00:00"))["hits"] == []


async def test_readers_are_found_by_id_whatever_its_characters_and_rooms_as_joined(
    api: Api,
) -> None:
    """Who may read an entry is found inside the index: an id with '.', ':', '@' and '-' is
    one reader, and a room's older posts are found once the agent joins it."""
    for agent in ("ci.bot:1@x-y", "ci", "eve"):
        await api.agent(agent)
    await api.post(
        "/v1/messages", {"to": "ci", "text": "zebra one"}, as_="ci.bot:1@x-y", expect=201
    )
    await api.post("/v1/rooms/zoo/join", {}, as_="ci", expect=201)
    await api.post("/v1/messages", {"room_id": "zoo", "text": "zebra two"}, as_="ci", expect=201)
    for who, count in (("ci.bot:1@x-y", 1), ("ci", 2), ("eve", 0)):
        assert len((await api.get("/v1/search", as_=who, q="zebra"))["hits"]) == count, who
    await api.post("/v1/rooms/zoo/join", {}, as_="eve", expect=201)
    [hit] = (await api.get("/v1/search", as_="eve", q="zebra"))["hits"]
    assert hit["kind"] == "room_post"
