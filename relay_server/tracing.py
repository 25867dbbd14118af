"""Traces (OpenTelemetry), off unless asked for.

With the extra installed (``pip install 'relay-agents[otel]'``) and the standard variables
saying where traces go (``OTEL_TRACES_EXPORTER``, or an OTLP endpoint:
``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``), every request is a
span named by its operation (``messages.send``), continuing the caller's W3C ``traceparent``:
the method, the route, the status, the caller (an agent's id, or ``operator``) and, for a
refusal or a failure, its error code. The SDK reads the rest of its settings itself
(``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_TRACES_SAMPLER``, the batch
processor's and the exporter's). Off, nothing of OpenTelemetry is imported, and a request pays
a lookup of the app's tracing and of its ``traceparent`` header (kept with what it creates,
``relay_core.trace_context``).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from relay_client.tracing import in_trace

if TYPE_CHECKING:  # the platforms' senders import this module, and some speak httpx alone
    import aiohttp
    from aiohttp import web
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span, Tracer

log = logging.getLogger("relay.server")

SERVICE_NAME = "relay"  # unless OTEL_SERVICE_NAME names it
_ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def wanted(environ: Mapping[str, str]) -> bool:
    """Whether the environment asks for traces."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporter = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter == "none":
        return False
    return bool(exporter) or any(environ.get(name) for name in _ENDPOINTS)


class Tracing:
    """The server's tracer, and the request spans it starts and ends."""

    def __init__(self, provider: TracerProvider) -> None:
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        self.provider = provider
        self.tracer = provider.get_tracer("relay_server")
        self.propagator = TraceContextTextMapPropagator()

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ) -> Tracing | None:
        """The tracing the OTEL_* variables ask for; None when they ask for none, or when the
        extra that sends traces is not installed (said once, in the log)."""
        if not wanted(environ):
            return None
        try:
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
        except ImportError:
            log.warning(
                "OTEL_* variables ask for traces, and the OpenTelemetry SDK is not installed:"
                " no traces (pip install 'relay-agents[otel]')"
            )
            return None
        named = {} if environ.get("OTEL_SERVICE_NAME") else {"service.name": SERVICE_NAME}
        provider = TracerProvider(resource=Resource.create(named))
        exporters = [e.strip() for e in environ.get("OTEL_TRACES_EXPORTER", "otlp").split(",")]
        for exporter in exporters:
            if exporter == "console":
                provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
            elif exporter == "otlp":
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
                    OTLPSpanExporter,
                )

                provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
            else:
                log.warning("OTEL_TRACES_EXPORTER=%s: Relay sends by otlp or console", exporter)
        # The process's provider: the MCP door's tool spans (relay_mcp.results) go out too.
        from opentelemetry import trace

        trace.set_tracer_provider(provider)
        return cls(provider)

    def start(self, request: web.Request, operation: str | None) -> Traced:
        """A request's span, current until it ends: named by its operation (else its method
        and route), the child of the caller's ``traceparent`` if it sent one."""
        from opentelemetry import context, trace

        parent = self.propagator.extract(request.headers)
        route = request.match_info.route.resource
        path = route.canonical if route is not None else request.path
        span = self.tracer.start_span(
            operation or f"{request.method} {path}",
            context=parent,
            kind=trace.SpanKind.SERVER,
            attributes={
                "http.request.method": request.method,
                "http.route": path,
                "url.path": request.path,
            },
        )
        token = context.attach(trace.set_span_in_context(span, parent))
        return Traced(span, token)

    def statements(self, system: str) -> StatementSpans:
        """The spans of a storage's named statements: ``system`` is its database's name."""
        return StatementSpans(self.provider.get_tracer("relay_core.storage"), system)

    def shutdown(self) -> None:
        """Send the spans still held, and stop."""
        self.provider.shutdown()


class StatementSpans:
    """A span of each named statement (``relay_core.ports.StatementObserver``) a recorded
    request runs, a child of the request's: named by the statement (``claim_open_task``), with
    its SQL (parameters apart: never their values) and the database's name."""

    def __init__(self, tracer: Tracer, system: str) -> None:
        self.tracer = tracer
        self.system = system

    def running(self, name: str, text: str) -> AbstractContextManager[object]:
        from opentelemetry import trace

        if not trace.get_current_span().is_recording():
            # Outside a request, or in one the sampler left out: a span would be one of a
            # trace of its own, or dropped. Not made, it costs a sampled-out request nothing.
            return nullcontext()
        attributes = {
            "db.system.name": self.system,
            "db.query.summary": name,
            "db.query.text": text,
        }
        return self.tracer.start_as_current_span(
            name, kind=trace.SpanKind.CLIENT, attributes=attributes
        )


class Traced:
    """A request's span while it is current."""

    def __init__(self, span: Span, token: object) -> None:
        self.span = span
        self.token = token

    @property
    def traceparent(self) -> str:
        """The span as W3C Trace Context writes it: what the request creates is handed on in
        it."""
        found = self.span.get_span_context()
        return f"00-{found.trace_id:032x}-{found.span_id:016x}-{int(found.trace_flags):02x}"

    def end(self, status: int, caller: str | None, error: str | None) -> None:
        """End the span with what the request's answer was: its status, who called, and the
        error code of a refusal or a failure (a 5xx marks the span as an error)."""
        from opentelemetry import context, trace

        attributes: dict[str, Any] = {"http.response.status_code": status}
        if caller is not None:
            attributes["relay.caller"] = caller
        if error is not None:
            attributes["error.type"] = error
        self.span.set_attributes(attributes)
        if status >= 500:
            self.span.set_status(trace.Status(trace.StatusCode.ERROR, error))
        self.span.end()
        context.detach(self.token)  # type: ignore[arg-type]


def outbound(peer: str) -> list[aiohttp.TraceConfig]:
    """aiohttp's client hooks that make each request to ``peer`` (``webhook``, ``a2a``) a
    client span of the current trace, named by its method and the peer (``POST webhook``), and
    send that trace in its ``traceparent`` header, in a process that traces; none otherwise.
    The URL is not recorded (only its host and port): a path or a query may hold a secret."""
    if "opentelemetry.trace" not in sys.modules:
        return []
    import aiohttp
    from opentelemetry import trace
    from opentelemetry.propagate import inject

    tracer = trace.get_tracer("relay_server.outbound")
    hooks = aiohttp.TraceConfig()

    async def started(
        _: aiohttp.ClientSession, call: SimpleNamespace, sent: aiohttp.TraceRequestStartParams
    ) -> None:
        call.span = tracer.start_span(
            f"{sent.method} {peer}",
            kind=trace.SpanKind.CLIENT,
            attributes={
                "http.request.method": sent.method,
                "server.address": sent.url.host or "",
                "server.port": sent.url.port or 0,
                "relay.peer": peer,
            },
        )
        carrier: dict[str, str] = {}
        inject(carrier, context=trace.set_span_in_context(call.span))
        sent.headers.update(carrier)

    async def answered(
        _: aiohttp.ClientSession, call: SimpleNamespace, done: aiohttp.TraceRequestEndParams
    ) -> None:
        status = done.response.status
        call.span.set_attribute("http.response.status_code", status)
        if status >= 400:
            call.span.set_attribute("error.type", str(status))
            call.span.set_status(trace.Status(trace.StatusCode.ERROR))
        call.span.end()

    async def failed(
        _: aiohttp.ClientSession,
        call: SimpleNamespace,
        done: aiohttp.TraceRequestExceptionParams,
    ) -> None:
        call.span.set_attribute("error.type", type(done.exception).__name__)
        call.span.set_status(trace.Status(trace.StatusCode.ERROR))
        call.span.end()

    hooks.on_request_start.append(started)
    hooks.on_request_end.append(answered)
    hooks.on_request_exception.append(failed)
    return [hooks]


@contextmanager
def continuing(traceparent: str | None) -> Iterator[dict[str, str]]:
    """Inside, a call out is made in the trace ``traceparent`` names (a record's: the work it
    was made in): the headers given hand it on as it is, and in a process that traces, the
    call's client span (``outbound``) is a child of it and sends its own instead."""
    with in_trace(traceparent):
        yield {} if traceparent is None else {"traceparent": traceparent}


@contextmanager
def platform_call(peer: str, operation: str) -> Iterator[None]:
    """A client span of one call to an operator's platform (``telegram sendMessage``, ``slack
    chat.postMessage``), in a process that traces; nothing otherwise. A failure is recorded by
    its type alone: a platform's error may quote what must not leave (a bot token)."""
    if "opentelemetry.trace" not in sys.modules:
        yield
        return
    from opentelemetry import trace

    tracer = trace.get_tracer("relay_server.bridges")
    with tracer.start_as_current_span(
        f"{peer} {operation}",
        kind=trace.SpanKind.CLIENT,
        attributes={"relay.peer": peer, "rpc.method": operation},
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        try:
            yield
        except Exception as exc:
            span.set_attribute("error.type", type(exc).__name__)
            span.set_status(trace.Status(trace.StatusCode.ERROR))
            raise
