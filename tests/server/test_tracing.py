"""Traces: each request a span named by its operation, continuing the caller's trace, with
its caller, status and error code; with the OpenTelemetry SDK's in-memory exporter."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from relay_core.storage import queries
from relay_server.app_keys import SERVICES
from relay_server.tracing import Tracing, wanted
from tests.server.conftest import ONE_BACKEND, AppFactory

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"


@pytest.fixture
def exported() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    yield exporter
    exporter.clear()


def tracing_to(exporter: InMemorySpanExporter) -> Tracing:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return Tracing(provider)


def named(exporter: InMemorySpanExporter, name: str) -> ReadableSpan:
    (span,) = [span for span in exporter.get_finished_spans() if span.name == name]
    return span


@ONE_BACKEND
async def test_a_request_continues_its_callers_trace(
    make_api: AppFactory, exported: InMemorySpanExporter
) -> None:
    api = await make_api(tracing=tracing_to(exported))
    await api.agent("alice")
    await api.agent("bob")
    traceparent = f"00-{TRACE_ID}-{PARENT_ID}-01"
    await api.post(
        "/v1/messages",
        {"to": "bob", "text": "hi"},
        as_="alice",
        expect=201,
        headers={"traceparent": traceparent},
    )
    span = named(exported, "messages.send")
    assert span.kind is SpanKind.SERVER
    assert format(span.context.trace_id, "032x") == TRACE_ID
    assert span.parent is not None and format(span.parent.span_id, "016x") == PARENT_ID
    assert span.attributes is not None
    assert dict(span.attributes) == {
        "http.request.method": "POST",
        "http.route": "/v1/messages",
        "url.path": "/v1/messages",
        "http.response.status_code": 201,
        "relay.caller": "alice",
    }
    assert span.status.status_code is StatusCode.UNSET


@ONE_BACKEND
async def test_a_refusal_is_named_by_its_code_and_a_new_trace_starts(
    make_api: AppFactory, exported: InMemorySpanExporter
) -> None:
    api = await make_api(tracing=tracing_to(exported))
    await api.get("/v1/tasks/12345", expect=404)
    await api.get("/v1/agents", token="rly_agent_forged", expect=401)
    await api.post("/v1/tasks", {"title": ""}, expect=422)
    missing = named(exported, "tasks.get")
    assert missing.parent is None  # no traceparent: a trace of its own
    assert missing.attributes is not None
    assert missing.attributes["error.type"] == "not_found"
    assert missing.attributes["relay.caller"] == "operator"
    assert missing.attributes["http.route"] == "/v1/tasks/{task_id}"
    assert missing.attributes["url.path"] == "/v1/tasks/12345"
    refused = named(exported, "agents.list")
    assert refused.attributes is not None and "relay.caller" not in refused.attributes
    assert refused.attributes["error.type"] == "unauthenticated"
    invalid = named(exported, "tasks.create")
    assert invalid.attributes is not None
    assert invalid.attributes["error.type"] == "validation_error"
    assert invalid.attributes["http.response.status_code"] == 422


def test_the_environment_asks_for_traces_or_not() -> None:
    assert not wanted({})
    assert wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    assert wanted({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"})
    assert wanted({"OTEL_TRACES_EXPORTER": "console"})
    assert not wanted({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "x"})
    assert not wanted({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"})
    assert Tracing.from_environment({}) is None


async def test_a_message_keeps_the_trace_it_was_sent_in(make_api: AppFactory) -> None:
    """Without tracing of its own, Relay hands the sender's trace on with the message."""
    api = await make_api()
    await api.agent("alice")
    await api.agent("bob")
    traceparent = f"00-{TRACE_ID}-{PARENT_ID}-01"
    sent = await api.post(
        "/v1/messages",
        {"to": "bob", "text": "traced"},
        as_="alice",
        expect=201,
        headers={"traceparent": traceparent},
    )
    assert sent["traceparent"] == traceparent
    for malformed in ("00-" + "0" * 32 + f"-{PARENT_ID}-01", "not a trace"):
        await api.post(
            "/v1/messages",
            {"to": "bob", "text": "untraced"},
            as_="alice",
            expect=201,
            headers={"traceparent": malformed},
        )
    await api.post("/v1/messages", {"to": "bob", "text": "untraced"}, as_="alice", expect=201)
    inbox = await api.get("/v1/agents/bob/inbox", as_="bob")
    assert [message["traceparent"] for message in inbox["messages"]] == [
        traceparent,
        None,
        None,
        None,
    ]


async def test_an_approval_keeps_the_trace_it_was_asked_in(make_api: AppFactory) -> None:
    """The agent that waits on an approval reads the trace it asked in, to continue it once
    the operator decides; the decision leaves it as it was."""
    api = await make_api()
    await api.agent("alice")
    traceparent = f"00-{TRACE_ID}-{PARENT_ID}-01"
    asked = await api.post(
        "/v1/approvals",
        {"title": "Deploy?"},
        as_="alice",
        expect=201,
        headers={"traceparent": traceparent},
    )
    assert asked["traceparent"] == traceparent
    decided = await api.post(f"/v1/approvals/{asked['approval_id']}/approve", {"note": "go"})
    assert decided["traceparent"] == traceparent
    shown = await api.get(f"/v1/approvals/{asked['approval_id']}", as_="alice")
    assert (shown["status"], shown["traceparent"]) == ("approved", traceparent)
    listed = await api.get("/v1/approvals", as_="alice")
    assert [a["traceparent"] for a in listed["approvals"]] == [traceparent]


async def test_each_statement_is_a_span_of_its_request(
    make_api: AppFactory, exported: InMemorySpanExporter
) -> None:
    api = await make_api(tracing=tracing_to(exported))
    await api.post("/v1/tasks", {"title": "the-title-we-never-record"}, expect=201)
    created = named(exported, "tasks.create")
    statements = [
        span
        for span in exported.get_finished_spans()
        if span.parent is not None and span.parent.span_id == created.context.span_id
    ]
    assert statements, "no statement span under the request's"
    system = api.client.app[SERVICES].ctx.storage.name  # sqlite, postgresql
    named_sql = queries.load("postgres" if system == "postgresql" else "sqlite")
    for span in statements:
        assert span.kind is SpanKind.CLIENT and span.name in named_sql
        assert span.attributes is not None
        assert span.attributes["db.system.name"] == system
        assert span.attributes["db.query.summary"] == span.name
        assert "the-title-we-never-record" not in str(dict(span.attributes))
    exported.clear()
    # A caller's trace the sampler leaves out (flags 00): neither the request nor what it ran
    # is a span. Nor is a statement of work outside any request (a sweep, the webhook sender):
    # each would be a trace of its own.
    unsampled = {"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-00"}
    await api.post("/v1/tasks", {"title": "not sampled"}, expect=201, headers=unsampled)
    assert await api.client.app[SERVICES].approvals.sweep() == 0
    assert exported.get_finished_spans() == ()


async def test_the_operators_reply_goes_on_in_the_notifications_trace(
    make_api: AppFactory,
) -> None:
    api = await make_api()
    await api.agent("alice")
    traceparent = f"00-{TRACE_ID}-{PARENT_ID}-01"
    note = await api.post(
        "/v1/notify",
        {"text": "Which branch?"},
        as_="alice",
        expect=201,
        headers={"traceparent": traceparent},
    )
    assert note["traceparent"] == traceparent
    reply = {"platform_message_id": note["platform_message_id"], "text": "main"}
    other = f"00-{'1' * 32}-{'2' * 16}-01"  # the operator's own trace stays the operator's
    await api.post("/v1/notify/replies", reply, expect=201, headers={"traceparent": other})
    (answer,) = (await api.get("/v1/agents/alice/inbox", as_="alice"))["messages"]
    assert (answer["text"], answer["traceparent"]) == ("main", traceparent)
    (listed,) = (await api.get("/v1/notifications", as_="alice"))["notifications"]
    assert listed["traceparent"] == traceparent


async def test_a_task_keeps_the_trace_it_was_created_in(make_api: AppFactory) -> None:
    """Whoever claims the task reads the trace it was created in, to work in it."""
    api = await make_api()
    await api.agent("worker")
    traceparent = f"00-{TRACE_ID}-{PARENT_ID}-01"
    created = await api.post(
        "/v1/tasks", {"title": "Renew"}, expect=201, headers={"traceparent": traceparent}
    )
    assert created["traceparent"] == traceparent
    claimed = await api.post(
        f"/v1/tasks/{created['task_id']}/claim", {"agent_id": "worker"}, as_="worker"
    )
    assert (claimed["status"], claimed["traceparent"]) == ("claimed", traceparent)
    (listed,) = (await api.get("/v1/tasks"))["tasks"]
    assert listed["traceparent"] == traceparent
    untraced = await api.post("/v1/tasks", {"title": "Plain"}, expect=201)
    assert untraced["traceparent"] is None
