"""The load generator of bench/run.py: an asyncio aiohttp client in its own process.

Reads one job as JSON on stdin, prints the result as JSON on stdout. Jobs:

- ``latency``: ``rounds`` sequential requests per target, interleaved A B C A B C..., each
  timed to its last byte (and to its first body byte, for time to first byte);
- ``throughput``: ``concurrency`` workers against one target for ``slice_s`` seconds, then
  the next target, for ``rounds`` rounds, so machine noise falls on every target alike;
- ``count``: ``n`` requests at ``concurrency`` against one target (the memory soak);
- ``streams``: ``streams`` streamed requests at once against each target in turn, answered by the
  mock's paced streams: per chunk, the delay from the mock's write (the stamp in the chunk) to
  its arrival here, both on the machine's monotonic clock;
- ``churn``: ``streams`` slots against each target in turn, each running one paced stream after
  another for ``hold_s`` seconds, their first starts spread over one stream's length: about
  ``streams`` open at any time and ``streams`` over a stream's length opening a second, as a
  gateway's streams come and go; ``steady`` holds the delays of chunks written after ``warm_s``.

Needs aiohttp (and uvloop when present); bench/run.py installs both into its own venv.
"""

from __future__ import annotations

import asyncio
import json
import re
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
        self.steady: list[float] = []
        self.errors = 0
        self.first_error: str | None = None
        self.busy = 0.0
        self.done = 0
        self.warm_done = 0
        self.streams = 0

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
            "steady_ms": self.steady,
            "errors": self.errors,
            "first_error": self.first_error,
            "busy_s": self.busy,
            "done": self.done,
            "warm_done": self.warm_done,
            "streams": self.streams,
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


_STAMP = re.compile(rb'"content":"t(\d+)"')


def stamps(data: bytes) -> list[int]:
    """The send times (microseconds) stamped in the chunks of ``data``."""
    return [int(m) for m in _STAMP.findall(data)]


async def _one_stream(target: Target, delays: list[tuple[int, float]], firsts: list[int], wait: float) -> int:
    """One paced stream, started after ``wait`` seconds and read to its end; the number of chunks
    it carried. Each chunk's (stamp, delay) goes to ``delays``, the stamp of its first to ``firsts``."""
    await asyncio.sleep(wait)
    pending = b""
    chunks = 0
    async with target.session.post(target.url, data=target.body, headers=target.headers) as resp:
        if resp.status != 200:
            raise aiohttp.ClientResponseError(resp.request_info, (), status=resp.status)
        async for data in resp.content.iter_any():
            now = time.monotonic_ns() // 1000
            pending += data
            cut = pending.rfind(b"\n\n")
            if cut < 0:
                continue
            for stamp in stamps(pending[:cut]):
                if not chunks:
                    firsts.append(stamp)
                delays.append((stamp, (now - stamp) / 1000))
                chunks += 1
            pending = pending[cut + 2 :]
    return chunks


async def streams(job: dict[str, Any], targets: list[Target]) -> None:
    """Every chunk's delay in ``latencies``; in ``steady``, those of the chunks written once every
    stream has its first: while streams are still opening, the target also handles their
    requests and opens their connections, which a thousand streams starting together share."""
    for t in targets:
        await asyncio.sleep(job.get("settle_s", 0.5))
        delays: list[tuple[int, float]] = []
        firsts: list[int] = []
        start = time.perf_counter()
        # Starts spread over one pacing interval, so the streams' chunks are too, as real ones are.
        n, spread = job["streams"], job.get("spread_s", 0.0)
        results = await asyncio.gather(
            *(_one_stream(t, delays, firsts, i * spread / n) for i in range(n)), return_exceptions=True
        )
        t.busy = time.perf_counter() - start
        for r in results:
            if isinstance(r, BaseException):
                t.errors += 1
                t.first_error = t.first_error or f"{type(r).__name__}: {r}"
            else:
                t.done += r
        opened = max(firsts, default=0)
        t.latencies = [delay for _, delay in delays]
        t.steady = [delay for stamp, delay in delays if stamp > opened]


async def _slot(t: Target, delays: list[tuple[int, float]], wait: float, end: float) -> None:
    """One paced stream after another from ``wait`` seconds on until ``end`` (perf_counter)."""
    await asyncio.sleep(wait)
    while time.perf_counter() < end:
        try:
            chunks = await _one_stream(t, delays, [], 0)
            t.done += chunks  # after the await: ``t.done += await ...`` would lose other slots' counts
            t.streams += 1
        except (TimeoutError, aiohttp.ClientError) as exc:
            t.errors += 1
            t.first_error = t.first_error or f"{type(exc).__name__}: {exc}"


async def churn(job: dict[str, Any], targets: list[Target]) -> None:
    """Every chunk's delay in ``latencies``; in ``steady``, those of the chunks written after
    ``warm_s``, once every slot runs and streams end and open all the time."""
    n, spread = job["streams"], job["spread_s"]
    for t in targets:
        await asyncio.sleep(job.get("settle_s", 0.5))
        delays: list[tuple[int, float]] = []
        start = time.perf_counter()
        warm_from = time.monotonic_ns() // 1000 + int(job["warm_s"] * 1e6)
        await asyncio.gather(*(_slot(t, delays, i * spread / n, start + job["hold_s"]) for i in range(n)))
        t.busy = time.perf_counter() - start
        t.latencies = [delay for _, delay in delays]
        t.steady = [delay for stamp, delay in delays if stamp > warm_from]


async def run(job: dict[str, Any]) -> dict[str, Any]:
    with open(job["body_file"], "rb") as f:
        body = f.read()
    concurrency = job.get("streams", job.get("concurrency", 1))
    targets = [Target(spec, body, concurrency) for spec in job["targets"]]
    try:
        await {"latency": latency, "throughput": throughput, "count": count, "streams": streams, "churn": churn}[
            job["mode"]
        ](job, targets)
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
