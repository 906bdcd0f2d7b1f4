"""Start-up work that the request path relies on."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from tests._support.proxy_e2e import suture


def test_startup_objects_are_frozen_out_of_the_garbage_collector() -> None:
    """Full collections must not rescan the long-lived start-up heap on every request (p99 pauses)."""
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    with suture(openai={"upstream": "http://127.0.0.1:9/v1"}) as url:
        assert httpx.get(url + "/healthz").status_code == 200
        assert gc.get_freeze_count() > 0
    gc.unfreeze()


def test_steady_traffic_does_not_run_the_garbage_collector() -> None:
    """At CPython's default threshold (700) the youngest generation was collected every few
    requests under concurrency, rescanning what the requests in flight hold: 5% of each request."""
    default = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with suture(openai={"upstream": "http://127.0.0.1:9/v1"}) as url:
            assert httpx.get(url + "/healthz").status_code == 200
            young, *older = gc.get_threshold()
            assert young >= 10_000
            assert older == [10, 10], "the older generations keep their own thresholds"
    finally:
        gc.set_threshold(*default)


def test_a_finished_request_leaves_no_cycle_for_the_garbage_collector(tmp_path: Path) -> None:
    """Each request's objects are freed by reference counting: a cycle per request (the exchange
    and its scope, its request, its retrier) made the collector run under load, for 17% more CPU."""
    from proxy.emulator import EmulatorConfig, build_emulator_app
    from proxy.emulator.extra_rules import ExtraRule
    from proxy.exchange import Exchange
    from proxy.routes.rejections import Retrier
    from tests._support.servers import running_server

    alternate = ExtraRule(
        api="openai-chat", same_role_runs=True, message="Invalid 'messages[{n}]': roles must alternate."
    )
    emulator = build_emulator_app(EmulatorConfig(provider="openai", extra_rules=(alternate,)))
    clean = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    broken = {"model": "m", "messages": [{"role": "assistant", "content": None, "tool_calls": []}, *clean["messages"]]}
    refused = {"model": "m", "messages": [*clean["messages"], {"role": "user", "content": "there?"}]}
    auth = {"authorization": "Bearer sk-test"}
    with (
        running_server(emulator) as up,
        suture(openai={"upstream": up + "/v1"}) as url,
        httpx.Client(headers=auth) as client,
    ):
        client.post(url + "/v1/chat/completions", json=clean)
        gc.collect()
        gc.disable()
        try:
            for payload in (clean, broken, refused) * 10:
                answer = client.post(url + "/v1/chat/completions", json=payload)
                assert answer.status_code == 200, answer.text
            assert answer.headers["x-suture-retried"] == "1"  # the last one was refused, repaired and retried
            gc.set_debug(gc.DEBUG_SAVEALL)
            gc.collect()
            kinds = {f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.garbage}
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()
    # The test's own client (httpx) may leave cycles of its own; Suture's side must leave none.
    suture_side = {k for k in kinds if k.startswith(("proxy.", "starlette.", "uvicorn."))}
    assert not suture_side, suture_side
    assert f"{Exchange.__module__}.Exchange" not in kinds and f"{Retrier.__module__}.Retrier" not in kinds


def test_the_upstream_s_request_id_reaches_the_client_and_suture_s_headers_are_its_own() -> None:
    """The upstream's own x-request-id (OpenAI's, which its support asks for, and which the
    OpenAI SDK reports) reaches the client unchanged; Suture's id is x-suture-request-id, and
    x-suture-* headers the upstream sends (another Suture's) are not relayed, whether its answer
    arrives whole or streams."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    from tests._support.servers import running_server

    claimed = {"x-request-id": "req_up_7", "x-suture-repairs": "42", "x-suture-request-id": "other"}

    async def chat(request: Request) -> Response:
        if (await request.json()).get("stream"):

            async def events() -> AsyncIterator[bytes]:
                yield b'data: {"choices":[]}\n\n'
                await asyncio.sleep(0.05)  # a second read: the relay streams, not whole
                yield b"data: [DONE]\n\n"

            return StreamingResponse(events(), media_type="text/event-stream", headers=claimed)
        return JSONResponse({"choices": []}, headers=claimed)

    upstream = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with running_server(upstream) as up, suture(openai={"upstream": up + "/v1"}) as base, httpx.Client() as client:
        for stream in (False, True):
            response = client.post(base + "/v1/chat/completions", json={**body, "stream": stream})
            assert response.status_code == 200
            assert response.headers.get_list("x-suture-repairs") == ["0"]
            assert response.headers.get_list("x-request-id") == ["req_up_7"]
            [request_id] = response.headers.get_list("x-suture-request-id")
            assert request_id not in ("req_up_7", "other")
