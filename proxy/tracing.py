"""OpenTelemetry traces of Suture's exchanges (``otel.enabled``; ``pip install 'suture[otel]'``).

Imported only when tracing is on: with it off, no OpenTelemetry module is loaded and the
request path pays one ``is None`` test where a request goes upstream. The tracer is an observer of
finished exchanges (``proxy.exchange``).

One span per request, ended when the exchange finishes (a stream's when its last byte was
relayed). On the native routes it begins as the request goes upstream (:meth:`ExchangeTracer.begin`),
whose ``traceparent`` then names Suture's span of the call; otherwise (litellm, Suture's own
answers) it is written whole at the end, with the times the exchange measured:

* the request's span (kind SERVER), following the GenAI semantic conventions: named
  ``{gen_ai.operation.name} {gen_ai.request.model}``, with ``gen_ai.provider.name``,
  ``server.address`` and ``server.port`` (the upstream's), ``http.response.status_code``,
  ``gen_ai.usage.input_tokens`` and ``output_tokens`` when the answer carries them,
  ``error.type``, Suture's own ``suture.*`` attributes, and one ``suture.repair`` event per repair
  (code, rule, action, message index, tool call id). Its parent is the client's ``traceparent``;
* its child (kind CLIENT), the upstream call: from the request going upstream to the last byte
  relayed, with the upstream's status (``error.type`` when it gave no answer).

The exporter, its endpoint and the sampling are the standard ``OTEL_*`` variables':
``OTEL_TRACES_EXPORTER`` (``otlp``, the default, over HTTP/protobuf; ``console``; ``none``),
``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, ``OTEL_TRACES_SAMPLER``
and its argument, ``OTEL_SERVICE_NAME`` (default ``suture``), ``OTEL_RESOURCE_ATTRIBUTES``,
``OTEL_BSP_*`` for the batching.
"""

from __future__ import annotations

import os
import re
import time
import urllib.parse
from collections.abc import AsyncIterator

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from opentelemetry.util.types import AttributeValue

from .exchange import Exchange
from .metrics import version
from .settings import ConfigError
from .upstreams.streamed import StreamedAnswer

# Token counts as each format writes them, in a body or in its stream's last events (Anthropic's
# message_delta repeats the final counts; OpenAI's last chunk holds them with include_usage).
_INPUT_TOKENS = re.compile(rb'"(?:prompt_tokens|input_tokens|inputTokens|promptTokenCount)"\s*:\s*(\d+)')
_OUTPUT_TOKENS = re.compile(rb'"(?:completion_tokens|output_tokens|outputTokens|candidatesTokenCount)"\s*:\s*(\d+)')
_SAMPLE = 8192
_PROPAGATOR = TraceContextTextMapPropagator()
_TRACE_HEADERS = frozenset({b"traceparent", b"tracestate"})


class ExchangeTracer:
    """Writes the spans of finished exchanges to a :class:`TracerProvider`."""

    def __init__(self, provider: TracerProvider) -> None:
        self.provider = provider
        self._tracer = provider.get_tracer("suture", version())
        self._servers: dict[str, tuple[str, int] | None] = {}

    @classmethod
    def from_environment(cls) -> ExchangeTracer:
        """A tracer whose exporter, endpoint and sampler come from the standard OTEL_* variables;
        raises ConfigError for an exporter or protocol Suture does not ship."""
        attributes: dict[str, AttributeValue] = {"service.version": version()}
        if not os.environ.get("OTEL_SERVICE_NAME"):
            attributes["service.name"] = "suture"
        provider = TracerProvider(resource=Resource.create(attributes))  # reads OTEL_TRACES_SAMPLER
        exporter = _exporter(os.environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower())
        if exporter is not None:
            provider.add_span_processor(BatchSpanProcessor(exporter))
        return cls(provider)

    def shutdown(self) -> None:
        """Send what is batched, then stop (the app's shutdown)."""
        self.provider.shutdown()

    def sample(self, answer: StreamedAnswer, exchange: Exchange) -> None:
        """Keep the first and last few KiB of ``answer`` as it is relayed, for its token usage.

        Only with tracing on: the relay's own loop stays as it is."""
        chunks = answer.chunks
        kept = exchange.answer.sample = [b"", b""]

        async def sampled() -> AsyncIterator[bytes]:
            async for chunk in chunks():
                if len(kept[0]) < _SAMPLE:
                    kept[0] += chunk[: _SAMPLE - len(kept[0])]
                kept[1] = (kept[1] + chunk)[-_SAMPLE:]
                yield chunk

        whole = answer.whole

        def sampled_whole() -> bytes | None:
            body = whole()
            if body is not None:
                kept[0], kept[1] = body[:_SAMPLE], body[-_SAMPLE:]
            return body

        answer.chunks = sampled  # type: ignore[method-assign]
        answer.whole = sampled_whole  # type: ignore[method-assign]

    def begin(self, exchange: Exchange) -> list[tuple[bytes, bytes]]:
        """Start the request's span and the upstream call's, as the request goes upstream (native
        routes), and return the ``traceparent`` (and ``tracestate``) headers the upstream gets in
        place of the client's: the trace goes on past Suture."""
        now = time.time_ns()
        start = now - int((time.perf_counter() - exchange.started) * 1e9)
        server = self._tracer.start_span("suture", _parent(exchange), SpanKind.SERVER, start_time=start)
        call = self._tracer.start_span("upstream", trace.set_span_in_context(server), SpanKind.CLIENT, start_time=now)
        exchange.upstream.spans = (server, call)
        carrier: dict[str, str] = {}
        _PROPAGATOR.inject(carrier, trace.set_span_in_context(call))
        return [(name.encode("latin-1"), value.encode("latin-1")) for name, value in carrier.items()]

    def finished(self, exchange: Exchange) -> None:
        """Write the spans of ``exchange``."""
        end = time.time_ns()
        start = end - int(exchange.elapsed * 1e9)
        route = exchange.route_label
        destination, transcript, answer = exchange.destination, exchange.transcript, exchange.answer
        attempt = exchange.upstream
        scope = exchange.scope
        method: str = scope["method"]
        operation = destination.route.otel_operation if destination.route is not None else None
        model = transcript.model[:256] if transcript.model is not None else None
        attributes: dict[str, AttributeValue] = {
            "http.request.method": method,
            "http.route": route,
            "http.response.status_code": answer.status,
            "suture.request_id": exchange.request_id,
            "suture.outcome": answer.outcome,
            "suture.repairs": transcript.found,
            "suture.repairs_applied": transcript.applied,
        }
        if operation is not None:
            attributes["gen_ai.operation.name"] = operation
        if model is not None:
            attributes["gen_ai.request.model"] = model
        if transcript.mode is not None:
            attributes["suture.mode"] = transcript.mode
        upstream = destination.upstream
        server = None
        if upstream is not None:
            attributes["suture.upstream"] = upstream
            provider = destination.provider
            attributes["gen_ai.provider.name"] = (
                (provider.otel_name or provider.name) if provider is not None else upstream
            )
            server = self._server(exchange, upstream)
            if server is not None:
                attributes["server.address"], attributes["server.port"] = server
        upstream_status = attempt.outcome
        if upstream_status is not None:
            attributes["suture.upstream_status"] = str(upstream_status)
        if answer.sample is not None:
            head, tail = answer.sample
            for key, pattern in (("input", _INPUT_TOKENS), ("output", _OUTPUT_TOKENS)):
                found = pattern.findall(tail) or pattern.findall(head)
                if found:
                    attributes[f"gen_ai.usage.{key}_tokens"] = int(found[-1])
        error = _error_type(exchange)
        if error is not None:
            attributes["error.type"] = error
        name = f"{operation} {model}" if operation is not None and model else f"{method} {route}"
        begun = attempt.spans
        if begun is None:
            span = self._tracer.start_span(name, _parent(exchange), SpanKind.SERVER, attributes, start_time=start)
        else:
            span = begun[0]
            span.update_name(name)
            span.set_attributes(attributes)
        for repair in transcript.repairs:
            event: dict[str, AttributeValue] = {"suture.repair.code": repair.code, "suture.repair.rule": repair.rule}
            event["suture.repair.action"] = repair.action
            if repair.message_index is not None:
                event["suture.repair.message_index"] = repair.message_index
            if repair.tool_call_id is not None:
                event["suture.repair.tool_call_id"] = repair.tool_call_id
            span.add_event("suture.repair", event, timestamp=start)
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, error))
        if begun is not None or attempt.sent_at:
            child: dict[str, AttributeValue] = {"http.request.method": method, "suture.upstream": str(upstream)}
            if server is not None:
                child["server.address"], child["server.port"] = server
            if isinstance(upstream_status, int):
                child["http.response.status_code"] = upstream_status
            failed = attempt.failure
            if failed is None and answer.outcome == "upstream_error":
                failed = answer.outcome
            if failed is None and isinstance(upstream_status, int) and upstream_status >= 500:
                failed = str(upstream_status)
            if failed:
                child["error.type"] = failed
            if begun is None:
                sent = start + int((attempt.sent_at - exchange.started) * 1e9)
                call = self._tracer.start_span("", trace.set_span_in_context(span), SpanKind.CLIENT, start_time=sent)
            else:
                call = begun[1]
            call.update_name(f"{method} {upstream}")
            call.set_attributes(child)
            if failed:
                call.set_status(Status(StatusCode.ERROR, failed))
            call.end(end)
        span.end(end)

    def _server(self, exchange: Exchange, name: str) -> tuple[str, int] | None:
        if name not in self._servers:
            state = exchange.state
            found = state.upstreams.get(name) or state.named_upstreams.get(name)
            base = found.base_url if found is not None else None
            if base is None:
                base = next((t.api_base for t in state.router.targets if t.name == name), None)
            self._servers[name] = _address(base) if base else None
        return self._servers[name]


def _parent(exchange: Exchange) -> Context:
    """The client's trace context, from its ``traceparent`` and ``tracestate`` headers."""
    headers = exchange.scope["headers"]
    return _PROPAGATOR.extract({k.decode("latin-1"): v.decode("latin-1") for k, v in headers if k in _TRACE_HEADERS})


def _address(url: str) -> tuple[str, int] | None:
    parts = urllib.parse.urlsplit(url)
    if not parts.hostname:
        return None
    return parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)


def _error_type(exchange: Exchange) -> str | None:
    """The conventions' ``error.type``: why the request failed, or None when it did not."""
    if exchange.answer.outcome != "complete":
        return exchange.answer.outcome
    if exchange.upstream.failure is not None:
        return exchange.upstream.failure
    if exchange.answer.status >= 500:
        return str(exchange.answer.status)
    return None


def _exporter(name: str) -> SpanExporter | None:
    if name in ("", "none"):
        return None
    if name == "console":
        return ConsoleSpanExporter()
    if name not in ("otlp", "otlp_proto_http"):
        raise ConfigError(f"OTEL_TRACES_EXPORTER={name!r}: Suture exports with otlp, console or none")
    protocol = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or os.environ.get(
        "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"
    )
    if protocol != "http/protobuf":
        raise ConfigError(f"OTLP protocol {protocol!r}: Suture exports OTLP over http/protobuf")
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()  # its endpoint, headers and timeout from OTEL_EXPORTER_OTLP_*
