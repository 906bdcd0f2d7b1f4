"""The load generator of bench/run.py: an asyncio aiohttp client in its own process.

Reads one job as JSON on stdin, prints the result as JSON on stdout. Jobs:

- ``latency``: ``rounds`` sequential requests per target, interleaved A B C A B C..., each
  timed to its last byte (and to its first body byte, for time to first byte);
- ``throughput``: ``concurrency`` workers against one target for ``slice_s`` seconds, then
  the next target, for ``rounds`` rounds, so machine noise falls on every target alike;
- ``count``: ``n`` requests at ``concurrency`` against one target (the memory soak).

Needs aiohttp (and uvloop when present); bench/run.py installs both into its own venv.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import aiohttp


class Target:
    def __init__(self, spec: dict[str, Any], body: bytes, concurrency: int) -> None:
        self.name: str = spec["name"]
        self.url: str = spec["url"]
        self.headers: dict[str, str] = {"content-type": "application/json", **spec.get("headers", {})}
        self.body = body
        # One keep-alive connection per worker, as an agent's SDK would hold.
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=concurrency, force_close=False),
            timeout=aiohttp.ClientTimeout(total=120),
            skip_auto_headers=("Accept-Encoding", "User-Agent"),
        )
        self.latencies: list[float] = []
        self.ttfb: list[float] = []
        self.errors = 0
        self.first_error: str | None = None
        self.busy = 0.0
        self.done = 0
        self.warm_done = 0

    async def one(self, record: bool = True) -> None:
        start = time.perf_counter()
        first = None
        try:
            async with self.session.post(self.url, data=self.body, headers=self.headers) as resp:
                async for _chunk in resp.content.iter_any():
                    if first is None:
                        first = time.perf_counter()
                status = resp.status
        except (TimeoutError, aiohttp.ClientError) as exc:
            self.errors += 1
            self.first_error = self.first_error or f"{type(exc).__name__}: {exc}"
            return
        end = time.perf_counter()
        if status != 200:
            self.errors += 1
            self.first_error = self.first_error or f"HTTP {status}"
            return
        if record:
            self.latencies.append((end - start) * 1000)
            self.ttfb.append(((first or end) - start) * 1000)

    def result(self) -> dict[str, Any]:
        return {
            "latencies_ms": self.latencies,
            "ttfb_ms": self.ttfb,
            "errors": self.errors,
            "first_error": self.first_error,
            "busy_s": self.busy,
            "done": self.done,
            "warm_done": self.warm_done,
        }


async def latency(job: dict[str, Any], targets: list[Target]) -> None:
    for _ in range(job.get("warmup", 20)):
        for t in targets:
            await t.one(record=False)
    for _ in range(job["rounds"]):
        for t in targets:
            await t.one()


async def _burst(target: Target, concurrency: int, *, seconds: float | None = None, n: int | None = None) -> None:
    deadline = time.perf_counter() + seconds if seconds is not None else None
    remaining = [n if n is not None else 0]

    async def worker() -> None:
        while True:
            if deadline is not None and time.perf_counter() >= deadline:
                return
            if n is not None:
                if remaining[0] <= 0:
                    return
                remaining[0] -= 1
            await target.one()
            target.done += 1

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    target.busy += time.perf_counter() - start


async def throughput(job: dict[str, Any], targets: list[Target]) -> None:
    c = job["concurrency"]
    for t in targets:  # open the connections and warm every path first
        await _burst(t, c, seconds=job.get("warmup_s", 0.5))
        t.latencies.clear()
        t.ttfb.clear()
        t.warm_done, t.busy, t.done = t.done, 0.0, 0
    for _ in range(job["rounds"]):
        for t in targets:
            # A pause first, so work a server does after its slice does not fall into the next one.
            await asyncio.sleep(job.get("settle_s", 0))
            await _burst(t, c, seconds=job["slice_s"])


async def count(job: dict[str, Any], targets: list[Target]) -> None:
    for t in targets:
        await _burst(t, job["concurrency"], n=job["n"])
        t.latencies.clear()  # only the count and the time matter here; keep the output small
        t.ttfb.clear()


async def run(job: dict[str, Any]) -> dict[str, Any]:
    with open(job["body_file"], "rb") as f:
        body = f.read()
    targets = [Target(spec, body, job.get("concurrency", 1)) for spec in job["targets"]]
    try:
        await {"latency": latency, "throughput": throughput, "count": count}[job["mode"]](job, targets)
    finally:
        for t in targets:
            await t.session.close()
    return {t.name: t.result() for t in targets}


def main() -> None:
    job = json.load(sys.stdin)
    try:
        import uvloop
    except ImportError:
        result = asyncio.run(run(job))
    else:
        result = uvloop.run(run(job))
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
