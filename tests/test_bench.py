"""The benchmark's pieces work: the mock provider answers every shape, the load generator counts.

No timing is asserted here: bench/run.py is run by hand.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import httpx
import pytest

from tests._support.servers import free_port

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def mock() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(BENCH / "mock_provider.py"), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                httpx.get(base + "/v1/models", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.05)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize(
    ("path", "text"), [("/v1/chat/completions", '"content":"42"'), ("/v1/messages", '"text":"42"')]
)
def test_mock_answers_json_and_streams(mock: str, path: str, text: str) -> None:
    with httpx.Client(base_url=mock) as client:
        plain = client.post(path, content=b'{"messages":[]}')
        assert plain.status_code == 200
        assert text in plain.text
        # A chunked request body, and a stream back: events end with [DONE] or message_stop.
        streamed = client.post(path, content=iter([b'{"stream": ', b"true}"]))
        assert streamed.headers["content-type"] == "text/event-stream"
        assert streamed.text.rstrip().endswith(("data: [DONE]", 'data: {"type":"message_stop"}'))
        assert client.post("/nowhere", content=b"{}").status_code == 404


def test_load_generator_runs_latency_and_count_jobs(mock: str, tmp_path: Path) -> None:
    load = _module("load")
    body = tmp_path / "body.json"
    body.write_text(json.dumps({"model": "gpt-4o", "messages": [], "stream": True}))
    target = {"name": "direct", "url": mock + "/v1/chat/completions"}
    latency = asyncio.run(load.run({"mode": "latency", "targets": [target], "body_file": str(body), "rounds": 5}))
    assert len(latency["direct"]["latencies_ms"]) == 5 and latency["direct"]["errors"] == 0
    assert all(
        0 < t <= total for t, total in zip(latency["direct"]["ttfb_ms"], latency["direct"]["latencies_ms"], strict=True)
    )
    count = asyncio.run(
        load.run({"mode": "count", "targets": [target], "body_file": str(body), "n": 20, "concurrency": 4})
    )
    assert count["direct"]["done"] == 20 and count["direct"]["errors"] == 0


def test_nginx_config_is_one_worker_keepalive_and_unbuffered(tmp_path: Path) -> None:
    run = _module("run")
    conf = run.nginx_config(tmp_path, 18080, 19100, connections=4096)
    for line in (
        "worker_processes 1;",
        "listen 127.0.0.1:18080",
        "server 127.0.0.1:19100;",
        "keepalive 4096;",
        "proxy_http_version 1.1;",
        'proxy_set_header Connection "";',
        "proxy_buffering off;",
        "proxy_request_buffering off;",
        "access_log off;",
        "daemon off;",
    ):
        assert line in conf
    # Everything nginx writes stays under the prefix: nothing of the system's nginx is touched.
    for directive in ("pid", "error_log", "client_body_temp_path", "proxy_temp_path"):
        path = conf.split(f"{directive} ", 1)[1].split()[0].rstrip(";")
        assert path.startswith(str(tmp_path))
    nginx = run._which_nginx()
    if nginx is None:
        pytest.skip("nginx is not installed: the syntax check needs it")
    (tmp_path / "nginx.conf").write_text(conf)
    checked = subprocess.run(
        [nginx, "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stderr


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_agent_bodies_have_their_size_and_the_seed_defect_only_when_broken(api: str) -> None:
    from sanitizer import sanitize, validate

    bodies = _module("agent_bodies")
    name = {"openai": "openai-chat", "anthropic": "anthropic-messages"}[api]
    for size in bodies.SIZES[:3]:  # 2 MB takes a while to check and adds nothing the others do not show
        valid = bodies.agent_transcript(api, size, False)
        broken = bodies.agent_transcript(api, size, True)
        for body in (valid, broken):
            assert 0.85 * size <= len(bodies.encode(body)) <= 1.1 * size
        assert bodies.encode(valid) == bodies.encode(bodies.agent_transcript(api, size, False))  # deterministic
        assert validate(valid, api=name) == [] and sanitize(valid, api=name).repairs == []
        assert validate(broken, api=name) != []
        assert [r.code for r in sanitize(broken, api=name).repairs] == ["TP001"]
        assert bodies.RECOVERY in json.dumps(broken)
        if size >= 100_000:  # screenshots as base64, as agents attach them
            assert "base64," in json.dumps(valid) or '"base64"' in json.dumps(valid)
    assert bodies.label(2_000_000) == "2 MB" and bodies.label(500_000) == "500 KB"


def test_paced_streams_are_stamped_and_counted(mock: str, tmp_path: Path) -> None:
    load = _module("load")
    body = tmp_path / "body.json"
    body.write_text(json.dumps({"model": "gpt-4o", "messages": [], "stream": True, "max_tokens": 3}))
    target = {"name": "direct", "url": mock + "/v1/chat/completions"}
    job = {"mode": "streams", "targets": [target], "body_file": str(body), "streams": 4, "spread_s": 0.01}
    result = asyncio.run(load.run(job))["direct"]
    assert result["errors"] == 0 and result["done"] == 4 * 3
    assert len(result["latencies_ms"]) == 12
    # Steady: the chunks written after the last stream's first; the first chunks never are.
    assert 0 < len(result["steady_ms"]) <= 4 * 2
    assert load.stamps(b'data: {"delta":{"content":"t123"}}\n\ndata: {"delta":{"content":"t45"}}') == [123, 45]
