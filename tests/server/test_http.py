"""HTTP-level promises: the OpenAPI document, error shapes, body limits, request ids, secrets."""

from __future__ import annotations

import io
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from queue import SimpleQueue
from typing import Any

import pytest
from aiohttp import http_exceptions, web
from aiohttp.test_utils import TestClient, TestServer, make_mocked_request
from openapi_spec_validator import validate
from pydantic import SecretStr

from relay_api.operations import OPERATIONS
from relay_core.ports import UnitOfWork
from relay_core.storage.sqlite import SqliteStorage
from relay_server import Settings, create_app, logs
from relay_server.app import open_storage
from relay_server.app_keys import REQUEST_ID
from relay_server.logs import (
    ACCESS_LINE,
    AccessLine,
    AccessLogger,
    Batches,
    EscapingFormatter,
    JsonFormatter,
    NoRequestBytes,
    Unformatted,
    printable,
)
from relay_server.openapi import build_openapi
from tests.server.conftest import OPERATOR_TOKEN, Api

Client = Callable[..., Awaitable[TestClient[Any, Any]]]

# Every operation of INTERFACE.md with its success status: the promise, written out once here.
INTERFACE = {
    ("GET", "/health"): 200,
    ("GET", "/v1/status"): 200,
    ("POST", "/v1/agents/register"): 201,
    ("POST", "/v1/agents/{agent_id}/heartbeat"): 200,
    ("GET", "/v1/agents"): 200,
    ("GET", "/v1/agents/{agent_id}/inbox"): 200,
    ("POST", "/v1/messages"): 201,
    ("POST", "/v1/messages/{message_id}/ack"): 200,
    ("POST", "/v1/notify"): 201,
    ("GET", "/v1/rooms"): 200,
    ("POST", "/v1/rooms/{room_id}/join"): 201,
    ("GET", "/v1/rooms/{room_id}/messages"): 200,
    ("GET", "/v1/spaces"): 200,
    ("POST", "/v1/spaces"): 201,
    ("POST", "/v1/spaces/{space_id}/rooms"): 201,
    ("POST", "/v1/spaces/sync"): 200,
    ("POST", "/v1/spaces/{space_id}/archive"): 200,
    ("POST", "/v1/tasks"): 201,
    ("GET", "/v1/tasks"): 200,
    ("POST", "/v1/tasks/{task_id}/claim"): 200,
    ("POST", "/v1/tasks/{task_id}/events"): 201,
    ("POST", "/v1/tasks/{task_id}/complete"): 200,
    ("POST", "/v1/tasks/{task_id}/fail"): 200,
    ("POST", "/v1/actions"): 201,
    ("POST", "/v1/enroll"): 201,
    ("GET", "/v1/enroll/{enroll_id}"): 200,
    ("GET", "/v1/approvals"): 200,
    ("GET", "/v1/approvals/{approval_id}"): 200,
    ("POST", "/v1/approvals/{approval_id}/approve"): 200,
    ("POST", "/v1/approvals/{approval_id}/reject"): 200,
    ("POST", "/v1/interventions/{intervention_id}/request-approval"): 201,
    ("GET", "/v1/interventions/{intervention_id}/approval"): 200,
    ("POST", "/v1/interventions/{intervention_id}/diagnostic"): 201,
    ("GET", "/v1/interventions/{intervention_id}/diagnostic"): 200,
    ("GET", "/v1/interventions"): 200,
    ("POST", "/v1/interventions/{intervention_id}/action"): 201,
}
QUERY = {
    ("GET", "/v1/rooms/{room_id}/messages"): {"limit": 100},
    ("GET", "/v1/interventions"): {"limit": 50},
    ("GET", "/v1/spaces"): {"include_archived": False},
    ("GET", "/v1/enroll/{enroll_id}"): {"claim": ""},
    ("GET", "/v1/approvals"): {"status": None},
}
SCHEMAS = {
    "AgentRegister": ("POST", "/v1/agents/register"),
    "AgentHeartbeat": ("POST", "/v1/agents/{agent_id}/heartbeat"),
    "MessageCreate": ("POST", "/v1/messages"),
    "NotifyText": ("POST", "/v1/notify"),
    "MessageAck": ("POST", "/v1/rooms/{room_id}/join"),
    "SpaceCreate": ("POST", "/v1/spaces"),
    "RoomInSpaceCreate": ("POST", "/v1/spaces/{space_id}/rooms"),
    "TaskCreate": ("POST", "/v1/tasks"),
    "TaskClaim": ("POST", "/v1/tasks/{task_id}/claim"),
    "TaskEventCreate": ("POST", "/v1/tasks/{task_id}/events"),
    "TaskFinish": ("POST", "/v1/tasks/{task_id}/fail"),
    "ActionCreate": ("POST", "/v1/actions"),
    "EnrollRequest": ("POST", "/v1/enroll"),
    "ApprovalDecision": ("POST", "/v1/approvals/{approval_id}/reject"),
    "InterventionApprovalRequest": ("POST", "/v1/interventions/{intervention_id}/request-approval"),
    "DiagnosticUpload": ("POST", "/v1/interventions/{intervention_id}/diagnostic"),
}
RESPONSES = {
    "AgentsResponse": ("GET", "/v1/agents"),
    "InboxResponse": ("GET", "/v1/agents/{agent_id}/inbox"),
    "TasksResponse": ("GET", "/v1/tasks"),
}


async def test_openapi_document_keeps_every_promise(api: Api) -> None:
    response = await api.client.get("/openapi.json")
    assert response.status == 200
    doc = await response.json()
    validate(doc)
    assert doc["openapi"] == "3.1.0" and doc["info"]["version"] == "0.1.0"
    operations = {
        (method.upper(), path): op
        for path, item in doc["paths"].items()
        for method, op in item.items()
    }
    for key, status in INTERFACE.items():
        assert key in operations, key
        assert str(status) in operations[key]["responses"], key
    for key, defaults in QUERY.items():
        declared = {p["name"]: p for p in operations[key]["parameters"] if p["in"] == "query"}
        for name, default in defaults.items():
            assert declared[name]["schema"].get("default") == default, (key, name)
    schemas = doc["components"]["schemas"]
    for name, key in SCHEMAS.items():
        ref = operations[key]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert ref == f"#/components/schemas/{name}"
    for name, key in RESPONSES.items():
        ref = operations[key]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        assert ref == f"#/components/schemas/{name}"
    assert set(SCHEMAS) | set(RESPONSES) | {"HTTPValidationError", "ValidationError"} <= set(
        schemas
    )
    assert schemas["ValidationError"]["required"] == ["loc", "msg", "type"]
    assert schemas["HTTPValidationError"]["properties"]["detail"]["items"] == {
        "$ref": "#/components/schemas/ValidationError"
    }
    assert schemas["HTTPValidationError"]["properties"]["code"]["const"] == "validation_error"
    register = operations[("POST", "/v1/agents/register")]
    assert register["responses"]["422"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/HTTPValidationError"
    )
    headers = {p["name"] for p in register["parameters"] if p["in"] == "header"}
    assert headers == {"X-Agent-ID", "Idempotency-Key"}
    enroll = {p["name"] for p in operations[("POST", "/v1/enroll")]["parameters"]}
    assert enroll == {"Idempotency-Key"}
    assert "parameters" not in operations[("GET", "/health")]


async def test_openapi_declares_every_status_an_operation_answers(api: Api) -> None:
    doc = await (await api.client.get("/openapi.json")).json()

    def declared(method: str, path: str) -> set[int]:
        return {int(code) for code in doc["paths"][path][method]["responses"]}

    assert 409 in declared("post", "/v1/enroll")
    assert 404 in declared("post", "/v1/notify/replies")
    assert 502 in declared("post", "/v1/notify")
    assert {429, 503} <= declared("post", "/v1/enroll")
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            statuses = declared(method, path)
            assert 503 in statuses, (method, path)  # the store, or the connection ceiling
            if operation["security"]:
                assert {401, 403, 429} <= statuses, (method, path)
            if "requestBody" in operation:
                assert {408, 413, 422} <= statuses, (method, path)
            for code in ("429", "503"):
                if code in operation["responses"]:
                    assert "Retry-After" in operation["responses"][code]["headers"]
            for code, response in operation["responses"].items():
                if code.startswith(("4", "5")):
                    assert response["content"]["application/json"]["schema"]["$ref"]
    paged = {"limit", "cursor"}
    for path in ("/v1/agents", "/v1/tasks", "/v1/approvals", "/v1/actions", "/v1/rooms"):
        names = {p["name"]: p for p in doc["paths"][path]["get"]["parameters"]}
        assert paged <= set(names) and names["limit"]["schema"]["maximum"] == 1000


async def test_health_is_public_and_all_strings(api: Api) -> None:
    response = await api.client.get("/health")
    body = await response.json()
    assert response.status == 200
    assert body == {"status": "ok", "version": "0.1.0"}
    assert all(isinstance(v, str) for v in body.values())


async def test_status_counts(api: Api) -> None:
    await api.agent("alice")
    await api.post("/v1/agents/alice/heartbeat", {}, as_="alice")
    await api.post("/v1/messages", {"to": "alice", "text": "x"}, expect=201)
    await api.post("/v1/tasks", {"title": "t"}, expect=201)
    await api.post("/v1/enroll", {"agent_id": "n"}, token="", expect=201)
    await api.post("/v1/notify", {"text": "hello"}, as_="alice", expect=201)
    status = await api.get("/v1/status", as_="alice")
    assert status["version"] == "0.1.0" and status["auth"] == "token"
    assert status["counts"] == {
        "agents": 1,
        "online_agents": 1,
        "pending_messages": 1,
        "open_tasks": 1,
        "pending_approvals": 1,
        "sent_notifications": 1,
        "failed_notifications": 0,
    }
    assert status["storage"] in {"sqlite", "postgresql"} and status["bridge"] == "local"


async def test_invalid_and_missing_bodies_are_422(api: Api) -> None:
    headers = {"Authorization": f"Bearer {OPERATOR_TOKEN}", "Content-Type": "application/json"}
    for raw, loc in [(b'{"agent_id": ', ["body", 13]), (b"\xff\xfe", ["body", 0])]:
        response = await api.client.post("/v1/agents/register", data=raw, headers=headers)
        body = await response.json()
        assert response.status == 422
        assert body["detail"][0]["type"] == "json_invalid"
        assert body["detail"][0]["loc"] == loc
    empty = await api.client.post("/v1/agents/register", data=b"", headers=headers)
    assert empty.status == 422
    assert (await empty.json())["detail"] == [
        {"type": "missing", "loc": ["body"], "msg": "Field required"}
    ]
    not_object = await api.post("/v1/agents/register", [1, 2], expect=422)
    assert not_object["detail"][0]["loc"] == ["body"]
    assert not_object["detail"][0]["type"] == "model_type"


async def test_body_over_the_limit_is_413(make_api: Any) -> None:
    api: Api = await make_api(max_body_bytes=2048)
    await api.agent("alice")
    big = {"to": "alice", "text": "x" * 5000}
    declared = await api.post("/v1/messages", big, as_="alice", expect=413)
    assert declared["code"] == "payload_too_large"

    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"to": "alice", "text": "'
        for _ in range(10):
            yield b"x" * 500
        yield b'"}'

    streamed = await api.client.post(
        "/v1/messages",
        data=chunks(),
        headers={"Authorization": f"Bearer {api.tokens['alice']}"},
    )
    assert streamed.status == 413
    assert (await streamed.json())["code"] == "payload_too_large"
    assert (await api.get("/v1/agents/alice/inbox", as_="alice"))["count"] == 0


async def test_request_id_is_echoed_or_made(api: Api) -> None:
    made = [(await api.client.get("/health")).headers["X-Request-ID"] for _ in range(3)]
    assert len(set(made)) == 3
    assert all(re.fullmatch(r"[0-9a-f]{24}", made_id) for made_id in made)
    kept = await api.client.get("/health", headers={"X-Request-ID": "trace-123"})
    assert kept.headers["X-Request-ID"] == "trace-123"
    replaced = await api.client.get("/health", headers={"X-Request-ID": "bad id!"})
    assert replaced.headers["X-Request-ID"] != "bad id!"


async def test_unknown_route_and_method_answer_json(api: Api) -> None:
    missing = await api.client.get("/v1/nothing")
    assert missing.status == 404 and (await missing.json())["code"] == "not_found"
    wrong = await api.client.delete("/v1/agents")
    assert wrong.status == 405 and (await wrong.json())["code"] == "method_not_allowed"


class ExplodingStorage(SqliteStorage):
    """Storage with a bug in it."""

    @asynccontextmanager
    async def unit_of_work(  # type: ignore[override]
        self, *, write: bool, following: bool = False
    ) -> AsyncIterator[UnitOfWork]:
        raise RuntimeError("secret internals: /etc/shadow")
        yield  # pragma: no cover


async def test_a_bug_is_500_without_internals(
    aiohttp_client: Client, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(data_dir=tmp_path, operator_token=SecretStr(OPERATOR_TOKEN))
    storage = ExplodingStorage(f"sqlite:///{tmp_path / 'relay.db'}")
    client = await aiohttp_client(create_app(settings, storage=storage))
    response = await client.get("/v1/agents", headers={"Authorization": f"Bearer {OPERATOR_TOKEN}"})
    body = await response.json()
    assert response.status == 500 and body["code"] == "internal"
    assert "shadow" not in body["detail"] and "Traceback" not in body["detail"]
    assert response.headers["X-Request-ID"] in body["detail"]
    assert "secret internals" in caplog.text  # logged for the operator, not shown to the caller


async def test_no_issued_secret_is_stored_in_plaintext(
    aiohttp_client: Client, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    url = f"sqlite:///{tmp_path / 'relay.db'}"
    settings = Settings(data_dir=tmp_path, database_url=url)
    # The server's own access log, as `relay serve` writes it.
    server = TestServer(create_app(settings))
    await server.start_server(
        access_log_class=AccessLogger, access_log=logging.getLogger("relay.access")
    )
    client = await aiohttp_client(server)
    operator = (tmp_path / "operator_token").read_text().strip()
    op = {"Authorization": f"Bearer {operator}"}
    secrets = [operator]
    for agent_id in ("alice", "bob"):
        # With an Idempotency-Key, as the SDK sends one: the answer is kept for a replay.
        keyed = {**op, "Idempotency-Key": f"register-{agent_id}-0123456789"}
        response = await client.post(
            "/v1/agents/register", json={"agent_id": agent_id}, headers=keyed
        )
        secrets.append((await response.json())["token"])
        replayed = await client.post(
            "/v1/agents/register", json={"agent_id": agent_id}, headers=keyed
        )
        assert replayed.headers["Idempotent-Replayed"] == "true"
        assert (await replayed.json())["token"] == secrets[-1]  # the holder of the key sees it
    keyed = {"Idempotency-Key": "enroll-carol-0123456789"}
    enrolled = await (
        await client.post("/v1/enroll", json={"agent_id": "carol"}, headers=keyed)
    ).json()
    secrets.append(enrolled["claim"])
    guessed = await client.post(
        "/v1/enroll",
        json={"agent_id": "carol"},
        headers={"Idempotency-Key": "enroll-carol-012345678X"},
    )
    assert "claim" in await guessed.json()
    assert (await guessed.json())["claim"] != enrolled["claim"]  # another key: another claim
    await client.post(f"/v1/approvals/{enrolled['approval_id']}/approve", json={}, headers=op)
    polled = await client.get(
        f"/v1/enroll/{enrolled['enroll_id']}", params={"claim": enrolled["claim"]}
    )
    secrets.append((await polled.json())["token"])
    assert all(secrets)
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("relay.db*"))
    assert b"alice" in stored  # the check reads the real files
    logged = caplog.text.encode()
    for secret in secrets:
        assert secret.encode() not in stored
        assert secret.encode() not in logged


async def test_operator_token_is_generated_once_with_mode_0600(
    aiohttp_client: Client, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path, database_url="memory://")
    client = await aiohttp_client(create_app(settings))
    token_file = tmp_path / "operator_token"
    assert token_file.stat().st_mode & 0o777 == 0o600
    token = token_file.read_text().strip()
    assert token.startswith("rly_op_")
    ok = await client.get("/v1/agents", headers={"Authorization": f"Bearer {token}"})
    assert ok.status == 200
    again = await aiohttp_client(create_app(settings))
    assert token_file.read_text().strip() == token
    assert (
        await again.get("/v1/agents", headers={"Authorization": f"Bearer {token}"})
    ).status == 200


async def test_a_memory_url_serves_a_sqlite_file_removed_at_close(tmp_path: Path) -> None:
    storage = await open_storage(Settings(data_dir=tmp_path, database_url="memory://"))
    assert isinstance(storage, SqliteStorage) and storage.path.exists()
    assert not storage.path.is_relative_to(tmp_path)  # nothing in the data directory
    await storage.close()
    assert not storage.path.parent.exists()


async def test_auth_none_trusts_the_agent_header(aiohttp_client: Client, tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, database_url="memory://", auth="none")
    client = await aiohttp_client(create_app(settings))
    registered = await client.post("/v1/agents/register", json={"agent_id": "alice"})
    assert registered.status == 201
    beat = await client.post("/v1/agents/alice/heartbeat", json={}, headers={"X-Agent-ID": "alice"})
    assert beat.status == 200
    other = await client.post("/v1/agents/alice/heartbeat", json={}, headers={"X-Agent-ID": "bob"})
    assert other.status == 403
    assert not (tmp_path / "operator_token").exists()
    status = await (await client.get("/v1/status")).json()
    assert status["auth"] == "none"


async def test_sqlite_file_storage_survives_a_restart(
    aiohttp_client: Client, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'relay.db'}"
    settings = Settings(
        data_dir=tmp_path, database_url=url, operator_token=SecretStr(OPERATOR_TOKEN)
    )
    op = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}
    first = await aiohttp_client(create_app(settings))
    await first.post("/v1/agents/register", json={"agent_id": "alice"}, headers=op)
    await first.post("/v1/messages", json={"to": "alice", "text": "kept"}, headers=op)
    await first.close()
    second = await aiohttp_client(create_app(settings))
    inbox = await (await second.get("/v1/agents/alice/inbox", headers=op)).json()
    assert [m["text"] for m in inbox["messages"]] == ["kept"]


async def test_the_console_is_served_without_exposing_anything_else(api: Api) -> None:
    page = await api.client.get("/console")
    assert page.status == 200 and "<title>Relay console</title>" in await page.text()
    assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
    script = await api.client.get("/console/static/console.js")
    assert script.status == 200 and "textContent" in await script.text()
    for path in ("/console/static/../__init__.py", "/console/static/__init__.py"):
        assert (await api.client.get(path)).status == 404


def test_access_log_writes_one_line_per_request_only_when_info_is_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = logging.getLogger("relay.access.test")
    access = AccessLogger(logger, "")
    logger.setLevel(logging.WARNING)
    assert not access.enabled  # aiohttp then skips the timing and the call altogether
    logger.setLevel(logging.INFO)
    assert access.enabled
    request = make_mocked_request("GET", "/health", headers={"Authorization": "Bearer secret-x"})
    request[REQUEST_ID] = "req-1"
    with caplog.at_level(logging.INFO, logger=logger.name):
        access.log(request, web.Response(status=200), 0.0012)
    (line,) = [r.getMessage() for r in caplog.records if r.name == logger.name]
    assert '"GET /health" 200 1.200ms op=- caller=- id=req-1' in line
    assert "secret-x" not in line


def test_an_access_record_is_the_one_logger_info_would_make(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = logging.getLogger("relay.access.record")
    access = AccessLogger(logger, "")
    request = make_mocked_request("POST", "/v1/messages")
    request[REQUEST_ID] = "req-2"
    with caplog.at_level(logging.INFO, logger=logger.name):
        before = time.time()
        access.log(request, web.Response(status=201), 0.0042)
        logger.info("by hand")
    made, by_hand = [r for r in caplog.records if r.name == logger.name]
    assert before <= made.created <= by_hand.created
    assert made.msecs == int((made.created - int(made.created)) * 1000)
    assert abs(made.relativeCreated - by_hand.relativeCreated) < 1000
    assert (made.status, made.method, made.path, made.request_id) == (
        201,
        "POST",
        "/v1/messages",
        "req-2",
    )
    same = ("levelno", "levelname", "process", "thread", "exc_info", "stack_info")
    assert {a: getattr(made, a) for a in same} == {a: getattr(by_hand, a) for a in same}
    assert (made.pathname, made.lineno) == ("(unknown file)", 0)  # as the server logs: no caller
    logger.setLevel(logging.WARNING)  # no line below INFO, however the logger is called
    with caplog.at_level(logging.WARNING, logger=logger.name):
        access.log(request, web.Response(status=201), 0.0042)
    logger.setLevel(logging.NOTSET)
    assert len([r for r in caplog.records if r.name == logger.name]) == 2


@pytest.mark.parametrize(
    "formatter",
    [EscapingFormatter(logs.TEXT), JsonFormatter()],
)
def test_an_access_line_queued_as_values_is_written_as_logger_info_would_write_it(
    formatter: logging.Formatter,
) -> None:
    """The server's set-up: its queue the only handler. The line goes in as its values and
    comes out as logging itself would have written it."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    queued = Unformatted(SimpleQueue())
    # A logger of its own: pytest adds its capture to a logger that does not propagate.
    logger = logging.getLogger(f"relay.access.queued.{type(formatter).__name__}")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    logger.addHandler(queued)
    try:
        request = make_mocked_request("GET", "/v1/agents/ann/inbox")
        request[REQUEST_ID] = "req-3"
        AccessLogger(logger, "").log(request, web.Response(status=200), 0.0015)
        (line,) = [queued.queue.get_nowait() for _ in range(queued.queue.qsize())]
        assert isinstance(line, AccessLine)  # not a record: no dictionary waits in the queue
        queued.queue.put_nowait(line)
        writer = Batches(queued, handler)
        writer.start()
        writer.stop()
    finally:
        logger.handlers.clear()
    args = ("unknown", "GET", "/v1/agents/ann/inbox", 200, 1.5, "-", "-", "req-3")
    fields = {"request_id": "req-3", "operation": "-", "status": 200, "duration_ms": 1.5}
    fields |= {"caller": "-", "method": "GET", "path": "/v1/agents/ann/inbox", "remote": "unknown"}
    record = logger.makeRecord(
        logger.name, logging.INFO, "(unknown file)", 0, ACCESS_LINE, args, None, extra=fields
    )
    record.created, record.msecs = line.created, int((line.created % 1) * 1000) + 0.0
    assert stream.getvalue() == handler.format(record) + "\n"


@pytest.mark.parametrize("created", [1_700_000_000.0, 1_700_000_000.9996, 1_700_000_001.25])
def test_the_servers_text_line_is_made_without_a_record_as_format_makes_it(
    created: float,
) -> None:
    line = AccessLine(
        "relay.access", created, "10.0.0.1", "GET", "/v1/tasks", 200, 0.25, "-", "-", "r"
    )
    ours = EscapingFormatter(logs.TEXT)
    ours.format_access(line._replace(created=created - 7))  # a stamp of another second, kept
    record = logging.makeLogRecord(line.record().__dict__)
    assert ours.format_access(line) == logging.Formatter(logs.TEXT).format(record)


@pytest.mark.parametrize("created", [1_700_000_000.0, 1_700_000_000.9996, 1_700_000_001.25])
def test_a_lines_time_is_loggings_own(created: float) -> None:
    ours = EscapingFormatter("%(asctime)s %(message)s")
    record = logging.LogRecord("x", logging.INFO, "p", 1, "hi", (), None)
    ours.format(record)  # a stamp of another second made before, kept
    record.created, record.msecs = created, int((created - int(created)) * 1000) + 0.0
    assert ours.format(record) == logging.Formatter("%(asctime)s %(message)s").format(record)


def test_queued_lines_are_written_in_order_filtered_and_all_of_them_at_stop() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(EscapingFormatter("%(name)s: %(message)s"))
    handler.addFilter(NoRequestBytes())
    queued = Unformatted(SimpleQueue())
    logger = logging.getLogger("relay.batches.test")
    logger.propagate = False
    logger.addHandler(queued)
    writer = Batches(queued, handler)
    writer.start()
    try:
        for n in range(500):
            logger.warning("line %d\nforged", n)
        try:
            raise http_exceptions.BadHttpMessage("Authorization: Bearer rly_secret")
        except http_exceptions.BadHttpMessage:
            logger.exception("unreadable")
    finally:
        writer.stop()
        logger.handlers.clear()
    lines = stream.getvalue().splitlines()
    assert lines[:500] == [f"relay.batches.test: line {n}\\nforged" for n in range(500)]
    assert lines[500:] == [
        "relay.batches.test: unreadable (BadHttpMessage; request bytes not logged)"
    ]
    assert "rly_secret" not in stream.getvalue()


def test_lines_past_the_queues_bound_are_dropped_and_said(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """stderr not read (a full pipe, a full disk) holds no memory without bound, nor a request."""
    monkeypatch.setattr(logs, "QUEUED", 10)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    queued = Unformatted(SimpleQueue())
    logger = logging.getLogger("relay.dropped.test")
    logger.propagate = False
    logger.addHandler(queued)
    try:
        for n in range(25):  # nothing writes yet: the queue fills
            logger.warning("line %d", n)
    finally:
        logger.handlers.clear()
    writer = Batches(queued, handler)
    writer.start()
    writer.stop()
    lines = stream.getvalue().splitlines()
    assert lines == [f"line {n}" for n in range(10)] + [
        "relay: 15 log lines dropped (stderr not read)"
    ]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("/v1/agents/ann/inbox", "/v1/agents/ann/inbox"),
        ("/é/名前 x", "/é/名前 x"),
        ("a\nb\rc", "a\\nb\\rc"),
        ("tab\there", "tab\\there"),
        ("\x1b[31mred", "\\x1b[31mred"),
        ("line\u2028sep\x85", "line\\u2028sep\\x85"),
    ],
)
def test_a_logged_value_cannot_break_its_line(value: str, shown: str) -> None:
    assert printable(value) == shown


def test_the_document_describes_the_operation_table_exactly_without_storage() -> None:
    """Built from the table alone (no storage opened): one operation per row, the other way
    round too, each under its row's method, path, id and success status."""
    document = build_openapi()
    described = {
        op["operationId"]: (method.upper(), path, op)
        for path, item in document["paths"].items()
        for method, op in item.items()
    }
    assert set(described) == {op.id for op in OPERATIONS}
    for row in OPERATIONS:
        method, path, op = described[row.id]
        assert (method, path) == (row.method, row.path)
        assert str(row.status) in op["responses"]
        assert ("Idempotency-Key" in str(op.get("parameters"))) == row.idempotent


async def test_an_agents_status_counts_its_own_unacknowledged_messages(api: Api) -> None:
    """Bob messaging carol changes nothing alice is told; the operator counts them all."""
    for agent in ("alice", "bob", "carol"):
        await api.agent(agent)
    await api.post("/v1/messages", {"to": "alice", "text": "for alice"}, as_="bob", expect=201)
    before = (await api.get("/v1/status", as_="alice"))["counts"]["pending_messages"]
    await api.post("/v1/messages", {"to": "carol", "text": "for carol"}, as_="bob", expect=201)
    assert (await api.get("/v1/status", as_="alice"))["counts"]["pending_messages"] == before == 1
    assert (await api.get("/v1/status", as_="carol"))["counts"]["pending_messages"] == 1
    assert (await api.get("/v1/status", as_="bob"))["counts"]["pending_messages"] == 0
    assert (await api.get("/v1/status"))["counts"]["pending_messages"] == 2
