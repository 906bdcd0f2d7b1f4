"""Start-up work that the request path relies on."""

from __future__ import annotations

import gc

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


def test_a_finished_request_leaves_no_cycle_for_the_garbage_collector() -> None:
    """Each request's objects are freed by reference counting: a cycle per request (the exchange
    and its scope, its request, its retrier) made the collector run under load, for 17% more CPU."""
    from proxy.routes.exchange import Exchange
    from proxy.routes.rejections import Retrier
    from tests._support.proxy_e2e import EchoUpstream
    from tests._support.servers import running_server

    upstream = EchoUpstream()
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    broken = {"model": "m", "messages": [{"role": "assistant", "content": None, "tool_calls": []}, *body["messages"]]}
    with running_server(upstream.app()) as up, suture(openai={"upstream": up + "/v1"}) as url, httpx.Client() as client:
        client.post(url + "/v1/chat/completions", json=body)
        gc.collect()
        gc.disable()
        try:
            for payload in (body, broken) * 10:
                assert client.post(url + "/v1/chat/completions", json=payload).status_code == 200
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
