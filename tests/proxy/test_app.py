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
