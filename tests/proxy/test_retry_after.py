"""How long Suture waits before retrying a 429 or 5xx: what the upstream asks (``retry-after-ms``
first, then ``Retry-After`` in seconds or as an HTTP-date), at most 30 s (a longer wait is the
client's to make), and at least the route's backoff, jittered. Timed by the upstream's own
clock: when each try arrived."""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson
import pytest

from proxy.app import build_app
from proxy.settings import Settings
from proxy.upstreams.native import requested_wait
from tests._support.servers import running_asyncio_server, running_server

CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}
COMPLETION = orjson.dumps({"id": "chatcmpl-retried", "object": "chat.completion", "choices": []})
# What a measured wait may exceed the wait asked for by: Suture's own work and the loopback.
SLACK = 1.0


@dataclass
class Arrival:
    monotonic: float
    wall: float


@dataclass
class PlannedUpstream:
    """Answers each request with the next of ``plan`` (a status and headers, made when the request
    arrives), then 200; notes when each request arrived."""

    plan: list[Callable[[], tuple[int, dict[str, str]]]]
    arrivals: list[Arrival] = field(default_factory=list)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                self.arrivals.append(Arrival(time.monotonic(), time.time()))
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                await reader.readexactly(length)
                status, headers = self.plan.pop(0)() if self.plan else (200, {})
                body = COMPLETION if status == 200 else b'{"error": {"message": "busy"}}'
                lines = [f"HTTP/1.1 {status} X", "content-type: application/json", f"content-length: {len(body)}"]
                lines += [f"{name}: {value}" for name, value in headers.items()]
                writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    def gaps(self) -> list[float]:
        return [b.monotonic - a.monotonic for a, b in zip(self.arrivals, self.arrivals[1:], strict=False)]


def answer(status: int, **headers: str) -> Callable[[], tuple[int, dict[str, str]]]:
    return lambda: (status, {name.replace("_", "-"): value for name, value in headers.items()})


@contextlib.contextmanager
def retrying(upstream: PlannedUpstream, **retries: Any) -> Iterator[tuple[str, Any]]:
    """Suture retrying its openai route as ``retries`` says, in front of ``upstream``: its URL and its state."""
    with running_asyncio_server(upstream.serve) as url:
        sections: dict[str, Any] = {"openai": {"upstream": url + "/v1", "retries": {"backoff": 0, **retries}}}
        app = build_app(Settings(**sections))
        with running_server(app, timeout_graceful_shutdown=2) as base:
            yield base, app.state.suture


def post(base: str) -> httpx.Response:
    with httpx.Client(timeout=60) as client:
        return client.post(base + "/v1/chat/completions", json=CHAT)


def test_retry_after_ms_is_read_before_retry_after() -> None:
    # Retry-After alone would be too long to wait out; retry-after-ms, read first, is not.
    upstream = PlannedUpstream([answer(429, retry_after_ms="400", retry_after="120")])
    with retrying(upstream, attempts=2) as (base, _):
        response = post(base)
    assert response.status_code == 200
    [gap] = upstream.gaps()
    assert 0.4 <= gap < 0.4 + SLACK


def test_retry_after_ms_past_the_cap_is_left_to_the_client() -> None:
    upstream = PlannedUpstream([answer(429, retry_after_ms="45000")])
    with retrying(upstream, attempts=3) as (base, _):
        response = post(base)
    assert (response.status_code, response.headers["retry-after-ms"]) == (429, "45000")
    assert len(upstream.arrivals) == 1


def test_retry_after_as_an_http_date_is_waited_out() -> None:
    due: list[float] = []

    def busy_for_two_seconds() -> tuple[int, dict[str, str]]:
        # An HTTP-date has whole seconds: the wait asked for is between one and two seconds.
        due.append(math.floor(time.time()) + 2)
        return 503, {"retry-after": email.utils.formatdate(due[0], usegmt=True)}

    upstream = PlannedUpstream([busy_for_two_seconds])
    with retrying(upstream, attempts=2) as (base, _):
        response = post(base)
    assert response.status_code == 200
    first, second = upstream.arrivals
    assert due[0] - 0.01 <= second.wall < due[0] + SLACK
    assert second.monotonic - first.monotonic > 0.9


def test_an_http_date_past_the_cap_is_left_to_the_client() -> None:
    later = email.utils.formatdate(time.time() + 120, usegmt=True)
    upstream = PlannedUpstream([answer(429, retry_after=later)])
    with retrying(upstream, attempts=3) as (base, _):
        response = post(base)
    assert (response.status_code, response.headers["retry-after"]) == (429, later)
    assert len(upstream.arrivals) == 1


@pytest.mark.parametrize("jitter", [0.0, 0.5, 0.999])
def test_the_backoff_is_jittered_between_half_and_all_of_it(jitter: float) -> None:
    upstream = PlannedUpstream([answer(503), answer(502)])
    with retrying(upstream, attempts=3, backoff=0.8) as (base, state):
        state.upstreams["openai"].jitter = lambda: jitter
        response = post(base)
    assert response.status_code == 200
    # Doubled for each next try, 0.8 s then 1.6 s: half of it, and the draw's share of the other half.
    for gap, backoff in zip(upstream.gaps(), (0.8, 1.6), strict=True):
        waited = backoff / 2 + backoff / 2 * jitter
        assert waited - 0.001 <= gap < waited + 0.35


def test_random_jitter_stays_within_bounds() -> None:
    upstream = PlannedUpstream([answer(503), answer(500)])
    with retrying(upstream, attempts=3, backoff=0.4) as (base, _):
        assert post(base).status_code == 200
    first, second = upstream.gaps()
    assert 0.2 <= first < 0.4 + SLACK
    assert 0.4 <= second < 0.8 + SLACK


NOW = datetime(2025, 10, 21, 7, 28, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("retry_after_ms", "retry_after", "seconds"),
    [
        ("1500", None, 1.5),
        ("250.5", "9", 0.2505),
        ("soon", "9", 9.0),  # unreadable milliseconds: Retry-After
        (None, "7", 7.0),
        (None, "0.5", 0.5),
        (None, "Tue, 21 Oct 2025 07:28:12 GMT", 12.0),
        (None, "Tue, 21 Oct 2025 07:28:12 -0000", 12.0),
        (None, "Tue, 21 Oct 2025 09:28:12 +0200", 12.0),
        (None, "Tue, 21 Oct 2025 07:27:00 GMT", 0.0),  # already past
        (None, "tomorrow", None),
        (None, "-3", None),
        (None, "nan", None),
        ("-1", None, None),
        (None, None, None),
    ],
)
def test_requested_wait_reads_every_form(
    retry_after_ms: str | None, retry_after: str | None, seconds: float | None
) -> None:
    assert requested_wait(retry_after_ms, retry_after, now=NOW) == seconds
