"""The adversarial review's findings (issue 15), each through a real Suture on a loopback port:
Suture's own keys never come back to a client, a client's leaving or stalling frees the upstream,
a request head cannot grow without bound, odd upstream statuses get an answer."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from proxy.app import build_app
from proxy.settings import Settings
from tests._support.faulty_upstream import ORPHAN, FaultyUpstream
from tests._support.proxy_e2e import LogLines, suture, wait_for
from tests._support.servers import running_asyncio_server, running_server

OWN_KEY = "sk-suture-own-upstream-key-5f1e9c"
CLIENT_KEY = "suture-client-key-a41b7d"
NAMED_KEY = "sk-named-upstream-key-93c0aa"
CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
BROKEN_CHAT = {
    **CHAT,
    "messages": [
        {"role": "user", "content": "ls"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": ORPHAN, "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
        },
        {"role": "user", "content": "stop"},
    ],
}


@pytest.fixture
def faulty() -> Iterator[FaultyUpstream]:
    upstream = FaultyUpstream()
    with upstream.running():
        yield upstream


def _client(base: str) -> httpx.Client:
    return httpx.Client(base_url=base, headers={"authorization": f"Bearer {CLIENT_KEY}"}, timeout=10)


# 1. Suture's own upstream key reaches the client.


@pytest.mark.parametrize("fault", ["echo-key", "echo-key-stream", "echo-key-header", "echo-key-gzip"])
def test_suture_s_own_upstream_key_quoted_by_the_provider_never_reaches_the_client(
    faulty: FaultyUpstream, fault: str
) -> None:
    with (
        suture(
            openai={"upstream": faulty.url + "/v1", "upstream_api_key": OWN_KEY, "client_api_key": CLIENT_KEY}
        ) as base,
        _client(base) as client,
    ):
        response = client.post("/v1/chat/completions", json={**CHAT, "stream": True}, headers={"x-fault": fault})
    # Not vacuous: the provider did receive Suture's key, and quoted it.
    assert faulty.seen[-1].headers["authorization"] == f"Bearer {OWN_KEY}"
    assert faulty.seen[-1].headers["accept-encoding"] == "identity"
    shown = response.text + str(response.headers)
    assert OWN_KEY not in shown
    assert "*" * len(OWN_KEY) in shown
    if fault == "echo-key-gzip":
        # Decoded to be checked, and relayed decoded: the JSON is still the provider's.
        assert response.status_code == 401
        assert response.json()["error"]["message"] == "Incorrect API key provided: " + "*" * len(OWN_KEY)


def test_a_named_upstream_s_key_is_redacted_from_the_answer_and_the_capture(
    faulty: FaultyUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NAMED_UPSTREAM_KEY", NAMED_KEY)
    captures = tmp_path / "captures"
    with (
        suture(
            upstreams={
                "mine": {"protocol": "openai", "base_url": faulty.url + "/v1", "api_key_env": "NAMED_UPSTREAM_KEY"}
            },
            routes=[{"match": "gpt-*", "upstream": "mine"}],
            capture={"dir": str(captures)},
        ) as base,
        httpx.Client(base_url=base, timeout=10) as client,
    ):
        response = client.post("/v1/chat/completions", json=BROKEN_CHAT, headers={"x-fault": "echo-key"})
        deadline = time.monotonic() + 5
        while not list(captures.glob("*.json")) and time.monotonic() < deadline:
            time.sleep(0.02)
    assert faulty.seen[-1].headers["authorization"] == f"Bearer {NAMED_KEY}"
    assert response.status_code == 401
    assert NAMED_KEY not in response.text
    files = list(captures.glob("*.json"))
    assert files, "the repaired, rejected request should have been captured"
    text = files[0].read_text()
    assert NAMED_KEY not in text
    assert json.loads(text)["upstream_status"] == 401


# 3. An encoded query parameter name slips past the filter.


@pytest.mark.parametrize("name", ["key", "%6Bey", "k%65y", "%6B%65%79"])
def test_the_client_key_in_an_encoded_query_parameter_never_reaches_google(faulty: FaultyUpstream, name: str) -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    with (
        suture(gemini={"upstream": faulty.url, "upstream_api_key": OWN_KEY, "client_api_key": CLIENT_KEY}) as base,
        httpx.Client(base_url=base, timeout=10) as client,
    ):
        response = client.post(
            f"/v1beta/models/gemini-2.5-flash:generateContent?alt=json&{name}={CLIENT_KEY}", json=body
        )
    assert response.status_code == 200, response.text  # the key authenticated (its name decoded)
    seen = faulty.seen[-1]
    assert CLIENT_KEY not in seen.path and CLIENT_KEY not in str(seen.headers)
    assert seen.path.endswith(":generateContent?alt=json")
    assert seen.headers["x-goog-api-key"] == OWN_KEY


# 6. Request header flood.


@pytest.mark.parametrize("flood", ["endless-lines", "one-endless-line", "many-headers"])
def test_an_oversized_request_head_is_answered_431_and_the_connection_closed(
    faulty: FaultyUpstream, flood: str
) -> None:
    with suture(openai={"upstream": faulty.url + "/v1"}) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            with contextlib.suppress(ConnectionError):
                if flood == "many-headers":
                    sock.sendall(b"".join(b"X-H%d: 1\r\n" % i for i in range(150)) + b"\r\n")
                else:
                    line = b"X-Flood: " + b"a" * 1000 + (b"\r\n" if flood == "endless-lines" else b"")
                    for _ in range(1000):  # 1 MB at most: the answer comes long before
                        sock.sendall(line)
            answer = _read_all(sock)
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
        assert b"connection: close" in answer.lower()
        with httpx.Client(base_url=base) as client:
            assert client.get("/healthz").status_code == 200
    assert faulty.seen == []


def test_a_normal_head_with_a_large_body_in_the_same_read_is_not_refused(faulty: FaultyUpstream) -> None:
    padding = "x" * 300_000
    with suture(openai={"upstream": faulty.url + "/v1"}) as base, httpx.Client(base_url=base, timeout=10) as client:
        body = {**CHAT, "messages": [{"role": "user", "content": padding}]}
        headers = {f"x-custom-{i}": "v" * 200 for i in range(60)}  # 12 KB of head, 60 fields
        assert client.post("/v1/chat/completions", json=body, headers=headers).status_code == 200


# 8. A client that leaves before the first byte of the answer.


class HangingUpstream:
    """Reads a request, answers nothing, and notes when Suture closed the connection."""

    def __init__(self) -> None:
        self.closed_at: list[float] = []
        self.requests = 0
        self.url = ""

    @contextlib.contextmanager
    def running(self) -> Iterator[str]:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readuntil(b"\r\n\r\n")
            self.requests += 1
            with contextlib.suppress(ConnectionError):
                await reader.read()  # until Suture closes
            self.closed_at.append(time.monotonic())
            writer.close()

        with running_asyncio_server(handle) as url:
            self.url = url
            yield url


# A large body: uvicorn pauses reading while more than 64 KiB of it waits for the app, so its
# last piece left the connection paused and the client's leaving unseen until the answer.
LARGE_CHAT = {**CHAT, "messages": [{"role": "user", "content": "x" * 1_000_000}]}


@pytest.mark.parametrize(
    ("path", "body"),
    [("/v1/chat/completions", CHAT), ("/v1/models", None), ("/v1/chat/completions", LARGE_CHAT)],
    ids=["chat", "models", "large-chat"],
)
def test_a_client_leaving_before_the_first_byte_cancels_the_upstream_request(
    path: str, body: dict[str, Any] | None, logs: LogLines
) -> None:
    hanging = HangingUpstream()
    with hanging.running(), suture(openai={"upstream": hanging.url + "/v1"}, timeouts={"read": 60}) as base:
        with httpx.Client(base_url=base, timeout=0.5) as client, pytest.raises(httpx.ReadTimeout):
            if body is None:
                client.get(path)
            else:
                client.post(path, json=body)
        left = time.monotonic()
        deadline = left + 10
        while not hanging.closed_at and time.monotonic() < deadline:
            time.sleep(0.02)
        assert hanging.requests == 1
        assert hanging.closed_at, "the upstream request was never cancelled"
        # Cancelled when the client left, not when timeouts.read (60 s) ran out.
        assert hanging.closed_at[0] - left < 5
        with httpx.Client(base_url=base) as client:
            metrics = client.get("/metrics").text
    assert 'suture_client_disconnects_total{upstream="openai"} 1.0' in metrics
    assert logs.records("suture.upstream", "client disconnected; upstream request cancelled"), logs.lines


def test_under_another_server_a_client_leaving_before_the_first_byte_still_cancels_the_upstream() -> None:
    """uvicorn's own protocol has no disconnect hook: the watch waits on receive() instead."""
    hanging = HangingUpstream()
    with hanging.running():
        app = build_app(Settings(openai={"upstream": hanging.url + "/v1"}, timeouts={"read": 60}))
        with running_server(app, http="httptools", timeout_graceful_shutdown=2) as base:
            with httpx.Client(base_url=base, timeout=0.5) as client, pytest.raises(httpx.ReadTimeout):
                client.post("/v1/chat/completions", json=CHAT)
            left = time.monotonic()
            while not hanging.closed_at and time.monotonic() < left + 10:
                time.sleep(0.02)
    assert hanging.closed_at and hanging.closed_at[0] - left < 5


# 9. A client that stops reading pins its upstream connection.


class EndlessStream:
    """Streams SSE chunks as fast as Suture takes them; notes when Suture closed the connection."""

    def __init__(self) -> None:
        self.stopped_at: list[float] = []
        self.url = ""

    @contextlib.contextmanager
    def running(self) -> Iterator[str]:
        ready = threading.Event()
        listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{listener.getsockname()[1]}"

        def serve() -> None:
            conn, _ = listener.accept()
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                )
                event = b'data: {"choices": [{"delta": {"content": "' + b"x" * 4000 + b'"}}]}\n\n'
                chunk = f"{len(event):x}\r\n".encode() + event + b"\r\n"
                conn.settimeout(30)
                try:
                    for _ in range(100_000):  # 400 MB at most; Suture stops it long before
                        conn.sendall(chunk)
                except OSError:
                    self.stopped_at.append(time.monotonic())

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        ready.set()
        try:
            yield self.url
        finally:
            listener.close()
            thread.join(35)


def test_a_client_that_stops_reading_is_dropped_after_the_send_timeout_and_the_upstream_freed(logs: LogLines) -> None:
    endless = EndlessStream()
    with endless.running(), suture(openai={"upstream": endless.url + "/v1"}, timeouts={"client_send": 1}) as base:
        port = int(base.rsplit(":", 1)[1])
        body = json.dumps({**CHAT, "stream": True}).encode()
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(("127.0.0.1", port))
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                b"content-length: %d\r\n\r\n" % len(body) + body
            )
            started = time.monotonic()
            sock.recv(1024)  # the head, then nothing more is read
            deadline = started + 20
            while not endless.stopped_at and time.monotonic() < deadline:
                time.sleep(0.05)
            assert endless.stopped_at, "the upstream stream was never stopped"
            assert endless.stopped_at[0] - started < 10
            # The client's side was closed too: draining what it holds ends in EOF or a reset.
            sock.settimeout(5)
            with contextlib.suppress(ConnectionError):
                while sock.recv(1 << 20):
                    pass
    assert logs.records("suture.upstream", "client stopped reading; both connections closed"), logs.lines


# 11. A 304 or 204 with Content-Length.


class RawAnswer:
    """Answers every request with the same raw bytes (keep-alive)."""

    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.url = ""

    @contextlib.contextmanager
    def running(self) -> Iterator[str]:
        listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        stop = threading.Event()

        def serve_one(conn: socket.socket) -> None:
            with conn, contextlib.suppress(OSError):
                data = b""
                while not stop.is_set():
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                    while b"\r\n\r\n" in data:
                        head, _, data = data.partition(b"\r\n\r\n")
                        length = 0
                        for line in head.split(b"\r\n"):
                            if line.lower().startswith(b"content-length:"):
                                length = int(line.split(b":")[1])
                        while len(data) < length:
                            data += conn.recv(65536)
                        data = data[length:]
                        conn.sendall(self.answer)

        def serve() -> None:
            listener.settimeout(0.2)
            while not stop.is_set():
                try:
                    conn, _ = listener.accept()
                except OSError:
                    continue
                threading.Thread(target=serve_one, args=(conn,), daemon=True).start()

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        try:
            yield self.url
        finally:
            stop.set()
            thread.join(5)
            listener.close()


@pytest.mark.parametrize("status", [204, 304])
def test_a_bodyless_status_with_content_length_is_relayed_without_a_body(status: int) -> None:
    upstream = RawAnswer(b'HTTP/1.1 %d X\r\ncontent-length: 42\r\netag: "v1"\r\n\r\n' % status)
    with (
        upstream.running(),
        suture(openai={"upstream": upstream.url + "/v1"}) as base,
        httpx.Client(base_url=base, timeout=5) as client,
    ):
        for _ in range(2):  # the client's connection stays usable
            response = client.get("/v1/models")
            assert response.status_code == status
            assert response.content == b""
            assert response.headers["etag"] == '"v1"'
            assert "content-length" not in response.headers


# 10. A status outside 100-599.


@pytest.mark.parametrize("status_line", [b"HTTP/1.1 600 Beyond", b"HTTP/1.1 999 Nine", b"HTTP/1.1 099 Low"])
def test_an_upstream_status_outside_100_to_599_is_answered_502(status_line: bytes) -> None:
    upstream = RawAnswer(status_line + b"\r\ncontent-length: 2\r\n\r\n{}")
    with (
        upstream.running(),
        suture(openai={"upstream": upstream.url + "/v1"}) as base,
        httpx.Client(base_url=base, timeout=5) as client,
    ):
        response = client.post("/v1/chat/completions", json=CHAT)
    assert response.status_code == 502
    assert "RemoteProtocolError" in response.json()["error"]["message"]


# 17. Suture's own pool is full.


def test_a_full_pool_says_the_connection_limit_was_reached(faulty: FaultyUpstream) -> None:
    with (
        suture(openai={"upstream": faulty.url + "/v1"}, max_connections=1, timeouts={"pool": 0.3}) as base,
        httpx.Client(base_url=base, timeout=10) as client,
    ):
        slow = threading.Thread(
            target=client.post,
            args=("/v1/chat/completions",),
            kwargs={"json": CHAT, "headers": {"x-fault": "slow-headers:2"}},
        )
        slow.start()
        time.sleep(0.5)
        response = client.post("/v1/chat/completions", json=CHAT)
        slow.join()
    assert response.status_code == 503
    message = response.json()["error"]["message"]
    assert "connection limit" in message and "max_connections" in message and "1 connections" in message
    assert "did not answer in time" not in message


# 5. Large bodies are repaired off the event loop.


def _long(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` after a history of more than OFF_LOOP_MESSAGES messages, each in order."""
    from proxy.routes.off_loop import OFF_LOOP_MESSAGES

    turns = [m for i in range(OFF_LOOP_MESSAGES // 2 + 1) for m in _turn(i)]
    return {**body, "messages": [*turns, *body["messages"]]}


def _turn(i: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"step {i}"}, {"role": "assistant", "content": f"done {i}"}]


def test_a_long_transcript_is_repaired_off_the_event_loop_and_a_short_one_on_it(
    faulty: FaultyUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long transcript's repair, Python work past the interpreter's switch interval, runs in a
    worker thread; a short one's runs on the loop whatever its size (a thread would free nothing),
    as do the parse and the quick check (orjson holds the interpreter); a long valid transcript,
    vouched for by the quick check, makes no trip at all."""
    import proxy.routes.transcripts as transcripts

    threads: list[tuple[str, str]] = []

    def recording(name: str) -> None:
        real = getattr(transcripts, name)

        def record(*args: Any, **kwargs: Any) -> Any:
            threads.append((name, threading.current_thread().name))
            return real(*args, **kwargs)

        monkeypatch.setattr(transcripts, name, record)

    recording("sanitize")
    recording("looks_clean")
    padding = {"role": "system", "content": "x" * 300_000}
    bodies = {
        "short": BROKEN_CHAT,
        "large and short": {**BROKEN_CHAT, "messages": [padding, *BROKEN_CHAT["messages"]]},
        "long": _long(BROKEN_CHAT),
        "long and valid": _long({**CHAT, "messages": [{"role": "user", "content": "hi"}]}),
    }
    calls = {}
    with suture(openai={"upstream": faulty.url + "/v1"}) as base, httpx.Client(base_url=base, timeout=10) as client:
        for name, body in bodies.items():
            threads.clear()
            assert client.post("/v1/chat/completions", json=body).status_code == 200
            calls[name] = list(threads)
    loop_thread = calls["short"][0][1]
    assert loop_thread.startswith("uvicorn-")  # tests._support.servers runs each server on such a thread
    assert calls["short"] == calls["large and short"] == [("sanitize", loop_thread)]
    assert calls["long"] == [("looks_clean", loop_thread), ("sanitize", calls["long"][1][1])]
    assert calls["long"][1][1] != loop_thread
    assert calls["long and valid"] == [("looks_clean", loop_thread)]
    # Each reached the upstream: the broken ones repaired, the valid one as sent.
    sent = [json.loads(seen.body) for seen in faulty.seen]
    for body in sent[:3]:
        roles = [m["role"] for m in body["messages"][-4:]]
        assert roles == ["user", "assistant", "tool", "user"]
        assert body["messages"][-2]["tool_call_id"] == ORPHAN
    assert sent[3] == bodies["long and valid"]


def test_a_client_leaving_while_its_long_transcript_is_repaired_is_let_go_at_once(
    faulty: FaultyUpstream, monkeypatch: pytest.MonkeyPatch, logs: LogLines
) -> None:
    """The wait on the worker thread ends when the client leaves; the thread's result is dropped
    and nothing reaches the upstream."""
    import proxy.routes.transcripts as transcripts

    real = transcripts.sanitize
    finished = threading.Event()

    def slow(*args: Any, **kwargs: Any) -> Any:
        time.sleep(2)
        try:
            return real(*args, **kwargs)
        finally:
            finished.set()

    monkeypatch.setattr(transcripts, "sanitize", slow)
    with suture(openai={"upstream": faulty.url + "/v1"}) as base:
        with httpx.Client(base_url=base, timeout=0.5) as client, pytest.raises(httpx.ReadTimeout):
            client.post("/v1/chat/completions", json=_long(BROKEN_CHAT))
        left = time.monotonic()
        [line] = wait_for(lambda: [r for r in logs.records("suture.access") if r.get("path") == "/v1/chat/completions"])
        # Written when the client left, not once the repair was done 2 s after the request came.
        assert time.monotonic() - left < 1.2
        assert not finished.is_set()
        assert line["outcome"] == "client_disconnected"
        assert finished.wait(5)
        time.sleep(0.2)
    assert faulty.seen == []


# Clients that send nothing, or trickle: uvicorn times out only idle keep-alive connections.


def _connect(base: str) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=5)
    return sock


def _read_all(sock: socket.socket) -> bytes:
    data = b""
    with contextlib.suppress(OSError):
        while chunk := sock.recv(65536):
            data += chunk
    return data


def test_a_connection_that_sends_nothing_is_answered_408_and_closed(logs: LogLines) -> None:
    with suture(openai={"upstream": "http://127.0.0.1:9/v1"}, timeouts={"client_read": 0.5}) as base:
        # The stopwatch starts before the connection, so before the server's timer can: started
        # after it, it read 0.49993 s once for a 0.5 s timeout.
        opened = time.monotonic()
        sock = _connect(base)
        answer = _read_all(sock)
        waited = time.monotonic() - opened
        sock.close()
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer[:200]
    assert b"timeouts.client_read" in answer
    assert 0.5 <= waited < 2.5
    assert logs.records("suture.access", "request refused", status=408)


def test_a_trickled_head_is_served_while_bytes_come_and_refused_once_they_stop(faulty: FaultyUpstream) -> None:
    head = b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nx-slow: " + b"a" * 12
    with suture(openai={"upstream": faulty.url + "/v1"}, timeouts={"client_read": 0.5}) as base:
        sock = _connect(base)
        for byte in head:  # a byte every 0.1 s for 1.2 s: each one is progress
            sock.sendall(bytes([byte]))
            time.sleep(0.05)
        sock.sendall(b"\r\n\r\n")
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200 "), first[:200]
        # Then half a head, and nothing more: refused.
        sock.sendall(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        answer = _read_all(sock)
        sock.close()
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]


def test_a_body_that_stops_coming_closes_the_connection_and_nothing_goes_upstream(
    faulty: FaultyUpstream, logs: LogLines
) -> None:
    body = json.dumps(CHAT).encode()
    with suture(openai={"upstream": faulty.url + "/v1"}, timeouts={"client_read": 0.5}) as base:
        sock = _connect(base)
        opened = time.monotonic()  # before the last bytes go, so before the server's timer restarts
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body[:10]
        )
        answer = _read_all(sock)
        waited = time.monotonic() - opened
        sock.close()
        [line] = wait_for(lambda: logs.records("suture.access", "request", path="/v1/chat/completions"))
    assert answer == b""  # the app was reading the body: the client is let go as if it had left
    assert 0.5 <= waited < 2.5
    assert line["outcome"] == "client_disconnected"
    assert logs.records("suture.access", "request refused", status=408)
    assert faulty.seen == []


def test_a_slow_upstream_is_not_the_client_s_slowness(logs: LogLines) -> None:
    hanging_for = 1.2  # longer than client_read: the client waits on Suture, not the reverse
    body = b'{"choices": []}'

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            await reader.readexactly(length)
            await asyncio.sleep(hanging_for)
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 15\r\n\r\n" + body)
            await writer.drain()

    with (
        running_asyncio_server(handle) as up,
        suture(openai={"upstream": up + "/v1"}, timeouts={"client_read": 0.5}) as base,
        httpx.Client(base_url=base, timeout=10) as client,
    ):
        for _ in range(2):  # and the kept-alive connection serves the next request too
            response = client.post("/v1/chat/completions", json=CHAT)
            assert response.status_code == 200, response.text
    assert not logs.records("suture.access", "request refused")
