"""OpenTelemetry traces through a running Suture: the SDK's in-memory exporter, and once the
OTLP/HTTP exporter against a small OTLP receiver."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from proxy.app import build_app
from proxy.settings import ConfigError, Settings
from proxy.tracing import ExchangeTracer
from tests._support.observed import BROKEN_ANTHROPIC, BROKEN_OPENAI, Observed, emulators, observed
from tests._support.proxy_e2e import wait_for
from tests._support.servers import running_server

REPO = Path(__file__).resolve().parents[2]
TRACE_ID = 0x4BF92F3577B34DA6A3CE929D0E0E4736
PARENT_ID = 0x00F067AA0BA902B7
TRACEPARENT = f"00-{TRACE_ID:032x}-{PARENT_ID:016x}-01"


@contextlib.contextmanager
def traced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: Any
) -> Iterator[tuple[Observed, InMemorySpanExporter]]:
    """Suture with ``otel.enabled``, its spans kept in memory."""
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with observed(tmp_path, otel={"enabled": True}, **kwargs) as s:
        state = s.app.state.suture
        tracer = state.tracer = ExchangeTracer(provider)
        state.observers = [tracer if isinstance(o, ExchangeTracer) else o for o in state.observers]
        yield s, exporter


def by_kind(spans: tuple[ReadableSpan, ...], kind: SpanKind) -> list[ReadableSpan]:
    return [span for span in spans if span.kind == kind]


def test_a_span_per_request_continues_the_clients_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with (
        traced(tmp_path, monkeypatch) as (s, exporter),
        s.openai(default_headers={"traceparent": TRACEPARENT}) as client,
    ):
        completion = client.chat.completions.create(**BROKEN_OPENAI)
        [server] = wait_for(lambda: by_kind(exporter.get_finished_spans(), SpanKind.SERVER))
    [call] = by_kind(exporter.get_finished_spans(), SpanKind.CLIENT)
    assert server.name == "chat gpt-4o-mini"
    assert server.context.trace_id == TRACE_ID and server.parent is not None and server.parent.span_id == PARENT_ID
    attributes = dict(server.attributes or {})
    port = int(s.app.state.suture.upstreams["openai"].base_url.split(":")[2].split("/")[0])
    assert {
        k: attributes[k] for k in attributes if k.startswith(("gen_ai.", "server.", "http.")) and "usage" not in k
    } == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "server.address": "127.0.0.1",
        "server.port": port,
        "http.request.method": "POST",
        "http.route": "/v1/chat/completions",
        "http.response.status_code": 200,
    }
    assert attributes["suture.repairs_applied"] == 1 and attributes["suture.outcome"] == "complete"
    # The answer's own token counts.
    assert completion.usage is not None and completion.usage.prompt_tokens > 0
    assert (attributes["gen_ai.usage.input_tokens"], attributes["gen_ai.usage.output_tokens"]) == (
        completion.usage.prompt_tokens,
        completion.usage.completion_tokens,
    )
    [event] = server.events
    assert event.name == "suture.repair"
    repair = dict(event.attributes or {})
    assert isinstance(repair.pop("suture.repair.action"), str)
    assert repair == {
        "suture.repair.code": "TP001",
        "suture.repair.rule": "orphan-tool-call",
        "suture.repair.message_index": 1,
        "suture.repair.tool_call_id": "tc_slow_1",
    }
    # The upstream call: a child of the request's span, inside it; the upstream's trace context names it.
    assert call.parent is not None and call.parent.span_id == server.context.span_id
    [forwarded] = [json.loads(line) for line in (tmp_path / "openai.jsonl").read_text().splitlines()]
    assert forwarded["headers"]["traceparent"] == f"00-{TRACE_ID:032x}-{call.context.span_id:016x}-01"
    assert call.context.trace_id == TRACE_ID
    assert dict(call.attributes or {})["http.response.status_code"] == 200
    assert server.start_time is not None and call.start_time is not None and call.end_time is not None
    assert server.end_time is not None
    assert server.start_time <= call.start_time <= call.end_time <= server.end_time
    assert server.status.status_code == StatusCode.UNSET


def test_a_stream_ends_its_span_with_the_last_byte(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with traced(tmp_path, monkeypatch, stream_delay=0.05) as (s, exporter), s.anthropic() as client:
        with client.messages.stream(**BROKEN_ANTHROPIC) as stream:
            next(iter(stream))
            assert exporter.get_finished_spans() == ()  # the answer is still being relayed
            for _ in stream:
                pass
            final = stream.get_final_message()
        [server] = wait_for(lambda: by_kind(exporter.get_finished_spans(), SpanKind.SERVER))
    attributes = dict(server.attributes or {})
    assert (attributes["gen_ai.provider.name"], attributes["suture.outcome"]) == ("anthropic", "complete")
    assert server.name == "chat claude-haiku-4-5"
    assert final.usage.input_tokens > 0 and final.usage.output_tokens > 0
    assert (attributes["gen_ai.usage.input_tokens"], attributes["gen_ai.usage.output_tokens"]) == (
        final.usage.input_tokens,
        final.usage.output_tokens,
    )


def test_a_client_that_leaves_mid_stream_ends_the_span_with_its_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with traced(tmp_path, monkeypatch, stream_delay=0.3) as (s, exporter), s.openai() as client:
        stream = client.chat.completions.create(**BROKEN_OPENAI, stream=True)
        with stream:
            next(iter(stream))
        [server] = wait_for(lambda: by_kind(exporter.get_finished_spans(), SpanKind.SERVER), timeout=5)
    attributes = dict(server.attributes or {})
    assert attributes["suture.outcome"] == attributes["error.type"] == "client_disconnected"


def test_an_unreachable_upstream_is_an_error_span(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with traced(tmp_path, monkeypatch, openai={"upstream": "http://127.0.0.1:9/v1"}) as (s, exporter):
        with s.openai() as client, pytest.raises(openai.APIStatusError):
            client.chat.completions.create(**BROKEN_OPENAI)
        [server] = wait_for(lambda: by_kind(exporter.get_finished_spans(), SpanKind.SERVER))
    assert server.status.status_code == StatusCode.ERROR
    assert dict(server.attributes or {})["error.type"] == "unreachable"
    [call] = by_kind(exporter.get_finished_spans(), SpanKind.CLIENT)
    assert call.status.status_code == StatusCode.ERROR and dict(call.attributes or {})["error.type"] == "unreachable"


def test_tracing_off_imports_no_opentelemetry() -> None:
    code = (
        "import sys; from proxy.app import build_app; from proxy.settings import Settings; build_app(Settings()); "
        "loaded = [m for m in sys.modules if m.startswith('opentelemetry')]; assert not loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, env={"PYTHONPATH": str(REPO)})


def test_tracing_without_opentelemetry_installed_is_one_config_error() -> None:
    code = (
        "import sys; sys.modules['opentelemetry'] = None\n"
        "from proxy.app import build_app; from proxy.settings import ConfigError, Settings\n"
        "try: build_app(Settings(otel={'enabled': True}))\n"
        "except ConfigError as exc: print(exc)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env={"PYTHONPATH": str(REPO)}, capture_output=True, text=True
    )
    assert done.stdout == "otel.enabled needs OpenTelemetry: pip install 'suture[otel]'\n", done.stderr


@pytest.mark.parametrize(
    ("variable", "value"), [("OTEL_TRACES_EXPORTER", "zipkin"), ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]
)
def test_an_exporter_suture_does_not_ship_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError, match=value):
        build_app(Settings(otel={"enabled": True}))


def test_the_environment_turns_tracing_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUTURE_OTEL_ENABLED", "true")
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
    assert build_app(Settings()).state.suture.tracer is not None


def test_spans_reach_an_otlp_receiver_over_http(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    received: list[ExportTraceServiceRequest] = []

    async def traces(request: Request) -> Response:
        message = ExportTraceServiceRequest()
        message.ParseFromString(await request.body())
        received.append(message)
        return Response(b"", media_type="application/x-protobuf")

    receiver = Starlette(routes=[Route("/v1/traces", traces, methods=["POST"])])
    with running_server(receiver) as otlp, emulators(tmp_path) as (oa, an):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp)
        monkeypatch.setenv("OTEL_SERVICE_NAME", "suture-under-test")
        monkeypatch.delenv("OTEL_TRACES_EXPORTER", raising=False)
        app = build_app(Settings(openai={"upstream": oa}, anthropic={"upstream": an}, otel={"enabled": True}))
        with running_server(app, timeout_graceful_shutdown=2) as url:
            httpx.post(
                url + "/v1/chat/completions",
                json=BROKEN_OPENAI,
                headers={"authorization": "Bearer sk-test", "traceparent": TRACEPARENT},
            ).raise_for_status()
        # The app's shutdown flushed the batch.
        assert received
    spans = [
        (resource.resource, span)
        for message in received
        for resource in message.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]
    names = {span.name for _, span in spans}
    assert names == {"chat gpt-4o-mini", "POST openai"}
    assert all(span.trace_id == TRACE_ID.to_bytes(16, "big") for _, span in spans)
    resource = {a.key: a.value.string_value for a in spans[0][0].attributes}
    assert resource["service.name"] == "suture-under-test"
