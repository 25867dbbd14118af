"""Traces as a user runs them: ``relay serve`` with the standard OTEL_* variables sends its
spans over OTLP/HTTP to a real receiver started here (decoding them with
``opentelemetry-proto``), and a request the SDK makes inside the agent's own trace is a span
of that trace."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast

import pytest
from mcp.types import RequestParamsMeta
from opentelemetry import context, trace
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from relay_client import RelayClient, continue_trace
from tests.e2e.test_mcp_http import connected
from tests.live import LiveServer, agent_token, live_server
from tests.smtp_server import body_of, relay_env, smtp_server

AGENT_TRACE = "0af7651916cd43dd8448eb211c80319c"
AGENT_SPAN = "b7ad6b7169203331"


class Receiver:
    """An OTLP/HTTP receiver: the spans it was sent, with their service's name."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, Span]] = []
        # Each webhook request's path (under /hook/) and traceparent.
        self.hooked: list[tuple[str, str | None]] = []
        self.lock = threading.Lock()

    def found(
        self, name: str, trace_id: str | None = None, seconds: float = 15.0
    ) -> list[tuple[str, Span]]:
        """The spans of that name (in the trace ``trace_id``, if given), once one came (the
        batch processor sends them late)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self.lock:
                named = [
                    (service, span)
                    for service, span in self.spans
                    if span.name == name and trace_id in (None, span.trace_id.hex())
                ]
            if named:
                return named
            time.sleep(0.05)
        raise AssertionError(f"no span {name} within {seconds} s")


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
            if self.path.startswith("/hook/"):  # an endpoint: what trace it was sent in
                self.rfile.read(int(self.headers["Content-Length"]))
                with receiver.lock:
                    receiver.hooked.append((self.path, self.headers.get("traceparent")))
                self.send_response(204)
                self.end_headers()
                return
            assert self.path == "/v1/traces", self.path
            assert self.headers["Content-Type"] == "application/x-protobuf"
            body = self.rfile.read(int(self.headers["Content-Length"]))
            request = ExportTraceServiceRequest.FromString(body)
            with receiver.lock:
                for resource_spans in request.resource_spans:
                    attributes = {
                        a.key: a.value.string_value for a in resource_spans.resource.attributes
                    }
                    for scope_spans in resource_spans.scope_spans:
                        for span in scope_spans.spans:
                            receiver.spans.append((attributes["service.name"], span))
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return None

    return Handler


@pytest.fixture(scope="module")
def receiver() -> Iterator[tuple[Receiver, str]]:
    found = Receiver()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(found))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield found, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, receiver: tuple[Receiver, str]
) -> Iterator[LiveServer]:
    _, endpoint = receiver
    hooks = {"RELAY_WEBHOOKS_ALLOW_PRIVATE": "true"}  # the receiver's /hook, on loopback
    otel = traced_to(endpoint, "relay-e2e")
    with live_server(tmp_path_factory.mktemp("relay-otlp"), None, **otel, **hooks) as running:
        yield running


def traced_to(endpoint: str, service: str) -> dict[str, str]:
    """The standard variables that send a server's traces to ``endpoint``, soon."""
    return {
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_SERVICE_NAME": service,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }


def in_the_agents_trace() -> object:
    """Make the agent's own span current, as a traced agent program has it."""
    agents = SpanContext(
        trace_id=int(AGENT_TRACE, 16),
        span_id=int(AGENT_SPAN, 16),
        is_remote=False,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )
    return context.attach(trace.set_span_in_context(NonRecordingSpan(agents)))


def test_one_trace_from_the_sender_through_relay_to_the_handler(
    server: LiveServer, receiver: tuple[Receiver, str]
) -> None:
    """Agent A sends in its own trace; Relay's span of it is in that trace and kept with the
    message; agent B, hours later as far as anyone knows, handles it inside that trace: its
    ack is a span of A's trace too, under Relay's span of the send."""
    spans, _ = receiver
    alice = agent_token(server, "alice")
    bob = agent_token(server, "bob")
    token = in_the_agents_trace()
    try:
        with RelayClient(server.url, token=alice, agent_id="alice") as client:
            sent = client.messages.send("the build is green", to="bob")
    finally:
        context.detach(token)  # type: ignore[arg-type]
    assert sent.message_id
    ((service, span),) = spans.found("messages.send", AGENT_TRACE)
    assert service == "relay-e2e" and span.parent_span_id.hex() == AGENT_SPAN
    assert span.kind == Span.SPAN_KIND_SERVER
    attributes = {a.key: a.value for a in span.attributes}
    assert attributes["relay.caller"].string_value == "alice"
    assert attributes["http.response.status_code"].int_value == 201

    with RelayClient(server.url, token=bob, agent_id="bob") as client:
        (received,) = client.agents.inbox().messages
        assert received.traceparent == f"00-{AGENT_TRACE}-{span.span_id.hex()}-01"
        with continue_trace(received):
            client.messages.ack(received.message_id)
    ((_, acked),) = spans.found("messages.ack", AGENT_TRACE)
    assert acked.parent_span_id == span.span_id


def test_a_request_outside_any_trace_starts_one(
    server: LiveServer, receiver: tuple[Receiver, str]
) -> None:
    spans, _ = receiver
    with RelayClient(server.url, token=server.operator_token) as client:
        client.tasks.create("traced on its own")
    ((_, span),) = spans.found("tasks.create")
    assert span.trace_id.hex() != AGENT_TRACE and not span.parent_span_id


MCP_TRACE = "5b8efff798038103d269b633813fc60c"
MCP_SPAN = "eee19b7ec3c1b174"


async def test_an_mcp_tool_call_continues_the_trace_its_meta_names(
    server: LiveServer, receiver: tuple[Receiver, str]
) -> None:
    """The official MCP client over /mcp sends W3C trace context in params._meta: the tool's
    span (GenAI's execute_tool) is its child, and Relay's span of what the tool did, the
    tool's."""
    spans, _ = receiver
    agent_token(server, "ivan")
    async with connected(server.url, agent_token(server, "hana")) as hana:
        # An open map (extra_items), which mypy does not read yet.
        meta = cast(RequestParamsMeta, {"traceparent": f"00-{MCP_TRACE}-{MCP_SPAN}-01"})
        sent = await hana.call_tool("send_message", {"to": "ivan", "text": "traced"}, meta=meta)
        assert not sent.is_error, sent.content
    ((_, tool),) = spans.found("execute_tool send_message", MCP_TRACE)
    assert tool.trace_id.hex() == MCP_TRACE and tool.parent_span_id.hex() == MCP_SPAN
    attributes = {a.key: a.value.string_value for a in tool.attributes}
    assert attributes == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "send_message",
        "gen_ai.agent.id": "hana",
    }
    ((_, send),) = spans.found("messages.send", MCP_TRACE)
    assert send.parent_span_id == tool.span_id


def test_a_webhook_delivery_is_a_client_span_whose_trace_it_sends(
    server: LiveServer, receiver: tuple[Receiver, str]
) -> None:
    spans, endpoint = receiver
    with RelayClient(server.url, token=server.operator_token) as op:
        hook = op.webhooks.create(f"{endpoint}/hook/test", events=["webhook.test"])
        op.webhooks.test(hook.webhook_id)
    ((_, span),) = spans.found("POST webhook")
    assert span.kind == Span.SPAN_KIND_CLIENT
    attributes = {a.key: a.value for a in span.attributes}
    assert attributes["relay.peer"].string_value == "webhook"
    assert attributes["http.response.status_code"].int_value == 204
    assert attributes["server.address"].string_value == "127.0.0.1"
    assert not any(key.startswith("url.") for key in attributes)  # a URL may hold a secret
    with spans.lock:
        (sent,) = [traceparent for path, traceparent in spans.hooked if path == "/hook/test"]
    assert sent is not None and sent[:-2] == f"00-{span.trace_id.hex()}-{span.span_id.hex()}-"
    assert int(sent[-2:], 16) & 1  # sampled (level 2 of Trace Context may add "random": 03)


def test_a_delivery_of_an_event_goes_on_in_the_trace_it_happened_in(
    server: LiveServer, receiver: tuple[Receiver, str]
) -> None:
    """Agent A sends in its own trace; the webhook delivery of the message's event, made
    later by the sender in the background, is a span of A's trace under Relay's span of the
    send, and its endpoint is sent that trace."""
    spans, endpoint = receiver
    with RelayClient(server.url, token=server.operator_token) as op:
        op.webhooks.create(f"{endpoint}/hook/messages", events=["message.created"])
    agent_token(server, "rita")
    token = in_the_agents_trace()
    try:
        with RelayClient(server.url, token=agent_token(server, "quinn")) as client:
            sent_in = client.messages.send("deploy done", to="rita").traceparent
    finally:
        context.detach(token)  # type: ignore[arg-type]
    assert sent_in is not None  # Relay's span of the send, in A's trace
    ((_, delivered),) = spans.found("POST webhook", AGENT_TRACE)
    assert delivered.parent_span_id.hex() == sent_in.split("-")[2]
    with spans.lock:
        (sent,) = [traceparent for path, traceparent in spans.hooked if path == "/hook/messages"]
    assert sent == f"00-{AGENT_TRACE}-{delivered.span_id.hex()}-01"


def test_a_call_to_the_operators_platform_is_a_client_span(
    tmp_path: Path, receiver: tuple[Receiver, str]
) -> None:
    """Relay mailing the operator through a real SMTP server: the call is a span, its failure
    (none here) would be named by its type alone."""
    spans, endpoint = receiver
    otel = traced_to(endpoint, "relay-email")
    with (
        smtp_server(tmp_path) as box,
        live_server(tmp_path, None, **otel, **relay_env(box)) as running,
    ):
        with RelayClient(running.url, token=running.operator_token) as op:
            op.notify.send("the nightly build is red")
        ((service, span),) = spans.found("email send")
    assert service == "relay-email" and span.kind == Span.SPAN_KIND_CLIENT
    attributes = {a.key: a.value.string_value for a in span.attributes}
    assert attributes == {"relay.peer": "email", "rpc.method": "send"}
    assert [body_of(message) for message in box.messages][0].startswith("the nightly build")
