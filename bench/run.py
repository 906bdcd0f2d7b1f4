"""Suture's overhead against going direct and against LiteLLM's proxy, side by side, in one run.

Run by hand:  .venv/bin/python bench/run.py [--quick] [--no-litellm] [--no-nginx]
              [--only base,sizes,streams,churn,workers]

Starts a zero-delay mock provider (bench/mock_provider.py), Suture (`suture serve`, one worker)
and LiteLLM's proxy (installed by this script into bench/.venvs/litellm, pinned, one worker) in
front of it, and drives the same requests through all three from a separate load-generating
process (bench/load.py, an aiohttp client, installed into bench/.venvs/load). Targets are
interleaved (direct and one proxy in turn, A B A B..., at concurrency 1; one time slice each in turn
under load) so machine noise falls on all of them alike. Prints percentiles, ratios and the issue's targets.

nginx (Debian's package, installed when missing; one worker, keep-alive upstream, unbuffered) is
the floor of one more hop. Besides the base part, ``sizes`` times agent-sized transcripts (10 KB
to 2 MB, bench/agent_bodies.py), ``streams`` holds 100 to 1,000 paced streams open at once,
``churn`` keeps 1,000 open while they end and are replaced (100 opening a second), and
``workers`` sets ``--workers 2`` against one worker.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
VENVS = BENCH / ".venvs"
sys.path.insert(0, str(ROOT))

LITELLM_VERSION = "1.106.12"  # the newest whose [proxy] extra installs here without litellm-proxy
LITELLM_REQS = [f"litellm[proxy]=={LITELLM_VERSION}"]
LOAD_REQS = ["aiohttp==3.14.5", "uvloop==0.23.0"]


def say(line: str = "") -> None:
    print(line, flush=True)


# ---------------------------------------------------------------- environments and processes


def ensure_venv(name: str, requirements: list[str]) -> Path | None:
    """A venv under bench/.venvs holding exactly ``requirements``; its python, or None if pip failed."""
    venv = VENVS / name
    python = venv / "bin" / "python"
    marker = venv / "bench-requirements.txt"
    wanted = "\n".join(requirements)
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return python
    say(f"  installing {' '.join(requirements)} into {venv.relative_to(ROOT)} ...")
    shutil.rmtree(venv, ignore_errors=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *requirements],
            check=True,
            capture_output=True,
            text=True,
        )
    except subprocess.CalledProcessError as exc:
        last = (exc.stderr or "").strip().splitlines()[-1:] or ["(no output)"]
        say(f"  could not install {' '.join(requirements)}: {last[0]}")
        return None
    marker.write_text(wanted)
    return python


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Placement:
    """Which cores each process is pinned to (empty: not pinned)."""

    mock: list[int] = field(default_factory=list)
    load: list[int] = field(default_factory=list)
    suture: list[int] = field(default_factory=list)
    litellm: list[int] = field(default_factory=list)
    note: str = ""

    @property
    def nginx(self) -> list[int]:
        # nginx is a proxy like the others: on their core, busy only when they are not.
        return self.suture

    def prefix(self, role: str) -> list[str]:
        cores: list[int] = getattr(self, role)
        return ["taskset", "-c", ",".join(map(str, cores))] if cores else []


def place() -> Placement:
    cores = sorted(os.sched_getaffinity(0))
    if shutil.which("taskset") is None:
        return Placement(note="taskset not found: processes not pinned")
    if len(cores) >= 4:
        return Placement(
            [cores[0]],
            [cores[1]],
            [cores[2]],
            [cores[3]],
            note=f"mock on core {cores[0]}, load generator on {cores[1]}, Suture on {cores[2]}, "
            f"LiteLLM on {cores[3]}: each proxy has a core of its own",
        )
    if len(cores) >= 2:
        a, b = cores[0], cores[-1]
        return Placement(
            [a],
            [a],
            [b],
            [b],
            note=f"mock and load generator share core {a}; Suture and LiteLLM on core {b} (only one of them "
            f"is busy at a time), away from the mock and the load generator",
        )
    return Placement(note="one core: processes not pinned, all share it")


class Procs:
    """Processes started by the benchmark; each is stopped (its own process group) on exit."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, argv: list[str], *, env: dict[str, str] | None = None, log: Path) -> subprocess.Popen[bytes]:
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                argv,
                env={**os.environ, **(env or {})},
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                cwd=ROOT,
            )
        self.procs.append(proc)
        return proc

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _which_nginx() -> str | None:
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if Path(p).exists()), None)


def ensure_nginx() -> str | None:
    """nginx's executable, installed from Debian's package when missing (as root); None if it cannot be."""
    if _which_nginx() or shutil.which("apt-get") is None or os.geteuid() != 0:
        return _which_nginx()
    say("  installing nginx (apt-get install -y nginx) ...")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "nginx"]
    subprocess.run(install, env=env, capture_output=True, check=False)
    if _which_nginx() is None:  # a stale package list: update it once and try again
        subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True, check=False)
        subprocess.run(install, env=env, capture_output=True, check=False)
    return _which_nginx()


def nginx_config(prefix: Path, port: int, upstream_port: int, *, connections: int = 8192) -> str:
    """nginx as the floor of one more hop: one worker, keep-alive both ways, nothing buffered, no logs.

    Everything it writes (pid, error log, temp dirs) is under ``prefix``.
    """
    return f"""daemon off;
master_process on;
worker_processes 1;
worker_rlimit_nofile {connections * 2};
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
user root;
events {{
    worker_connections {connections};
    multi_accept on;
}}
http {{
    access_log off;
    client_body_temp_path {prefix}/client_body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    keepalive_timeout 120s;
    keepalive_requests 1000000;
    client_max_body_size 0;
    upstream mock {{
        server 127.0.0.1:{upstream_port};
        keepalive {connections};
        keepalive_requests 1000000;
        keepalive_timeout 120s;
    }}
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        location / {{
            proxy_pass http://mock;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_read_timeout 300s;
        }}
    }}
}}
"""


def raise_fd_limit() -> int:
    """Raise this process's open-file limit to its hard limit (children inherit it); the new soft limit."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = 1 << 20 if hard == resource.RLIM_INFINITY else hard
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft


def wait_ready(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 120) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return True
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    return False


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process and its children so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    total = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        for child in children.read_text().split():
            total += cpu_seconds(int(child))
    return total


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def tree_rss_mb(pid: int) -> float:
    """RSS of a process and its children (LiteLLM's CLI runs the server in a child)."""
    total = rss_mb(pid)
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        for child in children.read_text().split():
            total += tree_rss_mb(int(child))
    return total


# ---------------------------------------------------------------- requests and statistics


@dataclass
class Target:
    name: str
    base: str
    headers: dict[str, str] = field(default_factory=dict)

    def spec(self, path: str) -> dict[str, Any]:
        return {"name": self.name, "url": self.base + path, "headers": self.headers}


SECTIONS = ("base", "sizes", "streams", "churn", "workers")
STREAM_COUNTS = (100, 500, 1000)
STREAM_PACE_MS = {False: 200, True: 100}  # full run: 50 chunks over 10 s; quick: 20 over 2 s
STREAM_CHUNKS = {False: 50, True: 20}
CHURN_STREAMS = 1000
CHURN_HOLD_S = {False: 60.0, True: 30.0}  # the first stream's length (10 s) is the warm-up
OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"


class Runner:
    def __init__(self, load_python: Path, placement: Placement, tmp: Path) -> None:
        self.load_python = load_python
        self.placement = placement
        self.tmp = tmp
        self.bodies: dict[str, Path] = {}

    def body(self, api: str, n: int, broken: bool, stream: bool = False) -> Path:
        from bench.bench_sanitize import anthropic_transcript, openai_transcript

        key = f"{api}-{n}-{'broken' if broken else 'valid'}{'-stream' if stream else ''}"
        if key not in self.bodies:
            body = (openai_transcript if api == "openai" else anthropic_transcript)(n, broken)
            if stream:
                body["stream"] = True
            path = self.tmp / f"{key}.json"
            path.write_text(json.dumps(body, separators=(",", ":")))
            self.bodies[key] = path
        return self.bodies[key]

    def agent_body(self, api: str, size: int, broken: bool) -> Path:
        from bench.agent_bodies import agent_transcript, encode

        key = f"agent-{api}-{size}-{'broken' if broken else 'valid'}"
        if key not in self.bodies:
            path = self.tmp / f"{key}.json"
            path.write_bytes(encode(agent_transcript(api, size, broken)))
            self.bodies[key] = path
        return self.bodies[key]

    def load(self, job: dict[str, Any]) -> dict[str, dict[str, Any]]:
        argv = [*self.placement.prefix("load"), str(self.load_python), str(BENCH / "load.py")]
        done = subprocess.run(argv, input=json.dumps(job), capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"load generator failed: {done.stderr.strip()[-2000:]}")
        result: dict[str, dict[str, Any]] = json.loads(done.stdout)
        for name, r in result.items():
            if r["errors"]:
                say(f"  ! {name}: {r['errors']} failed requests (first: {r['first_error']})")
        return result

    def latency(self, targets: list[Target], path: str, body: Path, rounds: int) -> dict[str, dict[str, Any]]:
        """Sequential requests, each proxy interleaved with direct (direct, proxy, direct, proxy...),
        one pair at a time: work a proxy does after answering (LiteLLM's logging and accounting
        tasks) must not land on another proxy's requests. A proxy's added figures are taken
        against the direct samples of its own pair (``base``)."""
        direct, proxies = targets[0], targets[1:]
        job = {"mode": "latency", "body_file": str(body), "rounds": rounds}
        if not proxies:
            return self.load({**job, "targets": [direct.spec(path)]})
        out: dict[str, dict[str, Any]] = {}
        for proxy in proxies:
            pair = self.load({**job, "targets": [direct.spec(path), proxy.spec(path)]})
            out.setdefault("direct", pair["direct"])
            out[proxy.name] = {**pair[proxy.name], "base": pair["direct"]}
        return out

    def throughput(
        self, targets: list[Target], path: str, body: Path, *, concurrency: int, rounds: int, slice_s: float
    ) -> dict[str, dict[str, Any]]:
        specs = [t.spec(path) for t in targets]
        return self.load(
            {
                "mode": "throughput",
                "settle_s": 0.5,
                "targets": specs,
                "body_file": str(body),
                "concurrency": concurrency,
                "rounds": rounds,
                "slice_s": slice_s,
            }
        )

    def count(self, target: Target, path: str, body: Path, *, n: int, concurrency: int) -> dict[str, Any]:
        job = {
            "mode": "count",
            "targets": [target.spec(path)],
            "body_file": str(body),
            "n": n,
            "concurrency": concurrency,
        }
        return self.load(job)[target.name]


def pct(samples: list[float], q: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


QS = (0.5, 0.9, 0.99)


def row(cells: list[str], widths: list[int]) -> str:
    return "".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True)))


def latency_table(result: dict[str, dict[str, Any]], key: str = "latencies_ms") -> dict[str, list[float]]:
    """Print p50/p90/p99 per target and the same minus direct; return the added figures."""
    widths = [12, 9, 9, 9, 12, 12, 12]
    say("  " + row(["", "p50 ms", "p90 ms", "p99 ms", "+p50 ms", "+p90 ms", "+p99 ms"], widths))
    added: dict[str, list[float]] = {}
    for name, r in result.items():
        base = [pct(r.get("base", result["direct"])[key], q) for q in QS]
        ps = [pct(r[key], q) for q in QS]
        extra = ["", "", ""] if name == "direct" else [f"{p - b:+.3f}" for p, b in zip(ps, base, strict=True)]
        if name != "direct":
            added[name] = [p - b for p, b in zip(ps, base, strict=True)]
        say("  " + row([name, *(f"{p:.3f}" for p in ps), *extra], widths))
    return added


def ratio_line(what: str, num: float, den: float, target: str) -> None:
    value = num / den if den > 0 else float("inf")
    say(f"  RATIO {what}: {value:.1f}x  ({target})")


# ---------------------------------------------------------------- the benchmark


def litellm_config(path: Path, mock: str) -> None:
    path.write_text(
        f"""model_list:
  - model_name: gpt-4o
    litellm_params:
      model: openai/gpt-4o
      api_base: {mock}/v1
      api_key: sk-bench
litellm_settings:
  telemetry: false
  set_verbose: false
  json_logs: false
  callbacks: []
  success_callback: []
  failure_callback: []
  service_callback: []
  turn_off_message_logging: true
  drop_params: true
general_settings:
  disable_spend_logs: true
  disable_error_logs: true
  disable_adding_master_key_hash_to_db: true
"""
    )


def sizes_section(
    runner: Runner, targets: list[Target], pids: dict[str, int], *, quick: bool
) -> dict[str, dict[str, Any]]:
    """Agent-sized transcripts: added latency at concurrency 1 and throughput at 16, per size and kind."""
    from bench.agent_bodies import SIZES, label

    # LiteLLM takes tens to hundreds of milliseconds per request at these sizes: its own, fewer
    # rounds, paired with direct as the others are, and its own throughput slices.
    litellm = [t for t in targets if t.name == "litellm"]
    targets = [t for t in targets if t.name != "litellm"]
    rounds = {10_000: 100, 100_000: 60, 500_000: 30, 2_000_000: 15} if quick else dict.fromkeys(SIZES, 400)
    litellm_rounds = {10_000: 20, 100_000: 10, 500_000: 5, 2_000_000: 3} if quick else dict.fromkeys(SIZES, 30)
    tp_rounds, tp_slice = (1, 1.0) if quick else (3, 2.0)
    say()
    say(
        "== transcripts of the size agents send (OpenAI Chat: tool outputs, code, some base64 screenshots), "
        "valid and broken (an orphan tool call and the recovery message after it)"
    )
    out: dict[str, dict[str, Any]] = {}
    for size in SIZES:
        for broken in (False, True):
            kind = "broken" if broken else "valid"
            body = runner.agent_body("openai", size, broken)
            say(f"  {label(size)} {kind} ({body.stat().st_size:,} bytes): concurrency 1, {rounds[size]} each")
            added = latency_table(runner.latency(targets, OPENAI_PATH, body, rounds[size]))
            if litellm:
                say(f"  LiteLLM, {litellm_rounds[size]} each:")
                paired = runner.latency([targets[0], *litellm], OPENAI_PATH, body, litellm_rounds[size])
                added |= latency_table(paired)
            measured = [*targets, *litellm]
            cpu_before = {name: cpu_seconds(pids[name]) for name in pids if any(t.name == name for t in measured)}
            r = runner.throughput(measured, OPENAI_PATH, body, concurrency=16, rounds=tp_rounds, slice_s=tp_slice)
            cpu_after = {name: cpu_seconds(pid) for name, pid in pids.items() if name in cpu_before}
            rps = {name: res["done"] / res["busy_s"] if res["busy_s"] else 0.0 for name, res in r.items()}
            cpu_us = {
                name: (cpu_after[name] - cpu_before[name]) / max(1, r[name]["done"] + r[name]["warm_done"]) * 1e6
                for name in cpu_before
            }
            say(
                "  concurrency 16: "
                + ", ".join(
                    f"{name} {rps[name]:.0f} req/s" + (f" ({cpu_us[name]:.0f} us CPU each)" if name in cpu_us else "")
                    for name in rps
                )
            )
            out[f"{size}-{kind}"] = {"added": added, "rps": rps, "cpu_us": cpu_us}
    say()
    say("  summary: added p50 / p99 ms at concurrency 1; req/s at concurrency 16 (CPU us per request)")
    names = ("suture", "nginx", "litellm")
    widths = [14, 20, 20, 20, 10, 18, 18, 18]
    say("  " + row(["", *(f"{n} +p50/+p99" for n in names), "direct", *names], widths))
    for size in SIZES:
        for kind in ("valid", "broken"):
            f = out[f"{size}-{kind}"]
            cells = [f"{label(size)} {kind}"]
            for name in names:
                a = f["added"].get(name)
                cells.append(f"{a[0]:+.2f} / {a[2]:+.2f}" if a else "-")
            cells.append(f"{f['rps'].get('direct', 0):.0f}")
            for name in names:
                cells.append(f"{f['rps'][name]:.0f} ({f['cpu_us'][name]:.0f})" if name in f["cpu_us"] else "-")
            say("  " + row(cells, widths))
    checks = [(500_000, 1.0), (2_000_000, 4.0)]
    for size, limit in checks:
        valid, broken = out[f"{size}-valid"]["added"]["suture"][0], out[f"{size}-broken"]["added"]["suture"][0]
        say(f"  {'PASS' if valid <= limit else 'MISS'}  {label(size)} valid added p50 <= {limit:g} ms: {valid:.3f} ms")
        ratio = broken / valid if valid > 0 else float("inf")
        say(f"  {'PASS' if ratio <= 2 else 'MISS'}  {label(size)} broken <= 2x valid (added p50): {ratio:.1f}x")
    return out


def paced_body(runner: Runner, chunks: int, pace_ms: int | None = None) -> Path:
    """A streamed 10-message Chat request asking the mock for ``chunks`` paced chunks (``pace_ms``
    apart, else at the mock's own pace)."""
    body = json.loads(runner.body("openai", 10, False, True).read_text())
    body["max_tokens"] = chunks
    if pace_ms is not None:
        body["pace_ms"] = pace_ms
    path = runner.tmp / f"paced-{chunks}-{pace_ms}.json"
    path.write_text(json.dumps(body, separators=(",", ":")))
    return path


def run_polled(runner: Runner, job: dict[str, Any], pid: int | None, idle: float) -> tuple[dict[str, Any], float]:
    """A load job's result, and the peak resident set (MB) of the process tree ``pid`` while it ran."""
    argv = [*runner.placement.prefix("load"), str(runner.load_python), str(BENCH / "load.py")]
    # Output to files: a pipe would fill with the delays and stall the client while this polls.
    (runner.tmp / "streams-job.json").write_text(json.dumps(job))
    with (
        open(runner.tmp / "streams-job.json") as stdin,
        open(runner.tmp / "streams-out.json", "w") as stdout,
        open(runner.tmp / "streams-err.txt", "w") as stderr,
    ):
        proc = subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=stderr)
        peak = idle
        while proc.poll() is None:
            if pid:
                peak = max(peak, tree_rss_mb(pid))
            time.sleep(0.1)
    if proc.returncode != 0:
        raise RuntimeError(f"load generator failed: {(runner.tmp / 'streams-err.txt').read_text()[-2000:]}")
    result: dict[str, Any] = json.loads((runner.tmp / "streams-out.json").read_text())
    return result, peak


def streams_section(
    runner: Runner, targets: list[Target], pids: dict[str, int], *, quick: bool
) -> dict[str, dict[str, Any]]:
    """Many streams open at once: memory per open stream, CPU per relayed chunk, delay added per chunk."""
    chunks, pace = STREAM_CHUNKS[quick], STREAM_PACE_MS[quick]
    body = paced_body(runner, chunks)
    say()
    say(
        f"== open streams: N streamed Chat requests at once, each {chunks} chunks {pace} ms apart from the mock "
        f"({chunks * pace / 1000:.0f} s), started spread over {pace} ms; targets one after another"
    )
    say(
        "  delay = a chunk's arrival at the client minus its write by the mock (both on the monotonic clock); "
        "memory = the proxy's peak resident set over its idle one before any stream, per open stream; "
        "CPU over every chunk relayed; steady = the chunks written once every stream has its first"
    )
    out: dict[str, dict[str, Any]] = {}
    idle_rss: dict[str, float] = {}
    widths = [8, 10, 8, 10, 10, 12, 10, 10, 13, 11, 10]
    for n in STREAM_COUNTS:
        say(f"  {n} streams")
        say(
            "  "
            + row(
                [
                    "",
                    "",
                    "errors",
                    "p50 ms",
                    "p99 ms",
                    "steady p99",
                    "+p50 ms",
                    "+p99 ms",
                    "+steady p99",
                    "KB/stream",
                    "us/chunk",
                ],
                widths,
            )
        )
        base: dict[str, Any] | None = None
        for target in targets:
            if target.name == "litellm" and n > 100:
                continue  # one Python worker with per-chunk callbacks: a hundred is already its measure
            pid = pids.get(target.name)
            # Against the resident set before any stream: freed memory is kept by the allocator, so the
            # idle set after 500 streams would hide what 1,000 need.
            idle = idle_rss.setdefault(target.name, tree_rss_mb(pid) if pid else 0.0)
            cpu0 = cpu_seconds(pid) if pid else 0.0
            job = {
                "mode": "streams",
                "targets": [target.spec(OPENAI_PATH)],
                "body_file": str(body),
                "streams": n,
                "spread_s": pace / 1000,
            }
            r, peak = run_polled(runner, job, pid, idle)
            r = r[target.name]
            cpu = cpu_seconds(pid) - cpu0 if pid else 0.0
            # Steady: the chunks written once every stream has its first. Before that the target is
            # also taking a thousand requests and opening their connections at once.
            delays, steady = r["latencies_ms"], r["steady_ms"]
            ps = [pct(delays, 0.5), pct(delays, 0.99)]
            f: dict[str, Any] = {"errors": r["errors"], "p50": ps[0], "p99": ps[1], "chunks": r["done"]}
            f["p99_steady"] = pct(steady, 0.99)
            cells = [target.name, "", str(r["errors"]), f"{ps[0]:.3f}", f"{ps[1]:.3f}", f"{f['p99_steady']:.3f}"]
            if base is None:
                base = f
                cells += ["", "", "", "", ""]
            else:
                f["added"] = [ps[0] - base["p50"], ps[1] - base["p99"]]
                f["added_p99_steady"] = f["p99_steady"] - base["p99_steady"]
                f["kb_per_stream"] = (peak - idle) * 1024 / n
                f["us_per_chunk"] = cpu / max(1, r["done"]) * 1e6
                cells += [
                    f"{f['added'][0]:+.3f}",
                    f"{f['added'][1]:+.3f}",
                    f"{f['added_p99_steady']:+.3f}",
                    f"{f['kb_per_stream']:.1f}",
                    f"{f['us_per_chunk']:.1f}",
                ]
            if r["errors"]:
                say(f"  ! {target.name}: {r['errors']} failed streams (first: {r['first_error']})")
            if r["done"] != (n - r["errors"]) * chunks:
                say(f"  ! {target.name}: {r['done']} chunks arrived, {(n - r['errors']) * chunks} expected")
            say("  " + row(cells, widths))
            out[f"{n}-{target.name}"] = f
    last = out.get(f"{STREAM_COUNTS[-1]}-suture")
    if last and "added" in last:
        n = STREAM_COUNTS[-1]
        checks = [
            (f"{n} streams: <= 100 KB resident per open stream", last["kb_per_stream"] <= 100, "KB", "kb_per_stream"),
            # While streams are still opening, the target is also taking their requests (a thousand in
            # one pacing interval, past one worker's capacity) and opening their connections: the
            # relay's own delay is read once every stream is open.
            (
                f"{n} streams: added per-chunk p99 <= 1 ms (steady: every stream open)",
                last["added_p99_steady"] <= 1.0,
                "ms",
                "added_p99_steady",
            ),
            (f"{n} streams: no errors", last["errors"] == 0, "errors", "errors"),
        ]
        for what, ok, unit, key in checks:
            value = last[key]
            say(
                f"  {'PASS' if ok else 'MISS'}  {what}: {value:.2f} {unit}"
                if key != "errors"
                else f"  {'PASS' if ok else 'MISS'}  {what}: {value}"
            )
        say(f"  (over every chunk, the streams' opening included: {last['added'][1]:+.2f} ms)")
    return out


def churn_section(
    runner: Runner, targets: list[Target], pids: dict[str, int], *, quick: bool
) -> dict[str, dict[str, Any]]:
    """A thousand streams open all the time, as a gateway's come and go: each that ends is replaced."""
    n, chunks, pace = CHURN_STREAMS, STREAM_CHUNKS[False], STREAM_PACE_MS[False]
    length = chunks * pace / 1000
    hold = CHURN_HOLD_S[quick]
    body = paced_body(runner, chunks, pace)
    say()
    say(
        f"== streams that come and go: {n} slots, each one paced stream after another ({chunks} chunks "
        f"{pace} ms apart, {length:.0f} s) for {hold:.0f} s, first starts spread over {length:.0f} s: about {n} "
        f"open and {n / length:.0f} opening a second; steady = chunks written after the first {length:.0f} s"
    )
    widths = [8, 7, 8, 9, 9, 12, 12, 13, 13, 9]
    say(
        "  "
        + row(
            [
                "",
                "errors",
                "streams",
                "p50 ms",
                "p99 ms",
                "steady p50",
                "steady p99",
                "+steady p50",
                "+steady p99",
                "us/chunk",
            ],
            widths,
        )
    )
    out: dict[str, dict[str, Any]] = {}
    base: dict[str, Any] | None = None
    for target in targets:
        if target.name == "litellm":
            continue  # a hundred streams at once are already its measure (the streams section)
        pid = pids.get(target.name)
        cpu0 = cpu_seconds(pid) if pid else 0.0
        job = {
            "mode": "churn",
            "targets": [target.spec(OPENAI_PATH)],
            "body_file": str(body),
            "streams": n,
            "spread_s": length,
            "hold_s": hold,
            "warm_s": length,
        }
        # Memory per open stream is the streams section's: after it, the allocator keeps what it freed.
        r, _ = run_polled(runner, job, None, 0.0)
        r = r[target.name]
        cpu = cpu_seconds(pid) - cpu0 if pid else 0.0
        delays, steady = r["latencies_ms"], r["steady_ms"]
        f: dict[str, Any] = {
            "errors": r["errors"],
            "streams": r["streams"],
            "p50": pct(delays, 0.5),
            "p99": pct(delays, 0.99),
            "steady": [pct(steady, 0.5), pct(steady, 0.99), pct(steady, 0.999)],
        }
        cells = [target.name, str(r["errors"]), str(r["streams"])]
        cells += [f"{f['p50']:.3f}", f"{f['p99']:.3f}", f"{f['steady'][0]:.3f}", f"{f['steady'][1]:.3f}"]
        if base is None:
            base = f
            cells += ["", "", ""]
        else:
            f["added_steady"] = [a - b for a, b in zip(f["steady"], base["steady"], strict=True)]
            f["us_per_chunk"] = cpu / max(1, r["done"]) * 1e6
            cells += [
                f"{f['added_steady'][0]:+.3f}",
                f"{f['added_steady'][1]:+.3f}",
                f"{f['us_per_chunk']:.1f}",
            ]
        if r["errors"]:
            say(f"  ! {target.name}: {r['errors']} failed streams (first: {r['first_error']})")
        say("  " + row(cells, widths))
        out[target.name] = f
    for name, f in out.items():
        if "added_steady" in f:
            say(f"  {name}: steady p99.9 {f['steady'][2]:.3f} ms ({f['added_steady'][2]:+.3f} over direct's)")
    suture = out.get("suture")
    if suture and "added_steady" in suture:
        ok = suture["added_steady"][1] <= 1.0 and suture["errors"] == 0
        say(
            f"  {'PASS' if ok else 'MISS'}  {n} streams coming and going: added per-chunk p99 <= 1 ms, no errors: "
            f"{suture['added_steady'][1]:+.2f} ms, {suture['errors']} errors"
        )
    return out


def workers_section(
    runner: Runner, one: Target, two: Target, one_pid: int, two_pid: int, *, quick: bool
) -> dict[str, float]:
    """``suture serve --workers 2`` against one worker, at concurrency 64, on a small and a 100 KB body."""
    tp_rounds, tp_slice = (2, 1.0) if quick else (5, 2.0)
    say()
    say(
        "== Suture with two workers against one, concurrency 64, interleaved (the one worker is pinned to its core; "
        "the two are not, and share the machine with the mock and the load generator)"
    )
    out: dict[str, float] = {}
    for what, body in (
        ("10-message transcript", runner.body("openai", 10, False)),
        ("100 KB valid agent transcript", runner.agent_body("openai", 100_000, False)),
    ):
        cpu0 = {one.name: cpu_seconds(one_pid), two.name: cpu_seconds(two_pid)}
        r = runner.throughput([one, two], OPENAI_PATH, body, concurrency=64, rounds=tp_rounds, slice_s=tp_slice)
        cpu1 = {one.name: cpu_seconds(one_pid), two.name: cpu_seconds(two_pid)}
        rps = {name: res["done"] / res["busy_s"] for name, res in r.items()}
        say(f"  {what}")
        for name, res in r.items():
            us = (cpu1[name] - cpu0[name]) / max(1, res["done"] + res["warm_done"]) * 1e6
            say(
                f"    {name:<10}{rps[name]:>8.0f} req/s   p50 {pct(res['latencies_ms'], 0.5):7.2f} ms   CPU {us:.0f} us"
            )
        ratio = rps[two.name] / rps[one.name] if rps[one.name] else float("nan")
        out[what] = ratio
        say(f"  {'PASS' if ratio >= 1.7 else 'MISS'}  two workers >= 1.7x one ({what}): {ratio:.2f}x")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer requests: a smoke run of a minute or two")
    parser.add_argument("--no-litellm", action="store_true", help="no LiteLLM")
    parser.add_argument("--no-nginx", action="store_true", help="no nginx")
    parser.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"comma-separated parts to run, of {','.join(SECTIONS)} (default: all)",
    )
    args = parser.parse_args()
    quick = args.quick
    rounds = 200 if quick else 2000
    t_rounds = {10: 100, 100: 100, 1000: 40} if quick else {10: 1000, 100: 500, 1000: 200}
    tp_rounds, tp_slice = (2, 1.0) if quick else (5, 2.0)
    soak = 5_000 if quick else 50_000

    placement = place()
    say(f"Suture benchmark ({'quick' if quick else 'full'} run), {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    say(
        f"machine: {os.cpu_count()} cores ({len(os.sched_getaffinity(0))} usable), "
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()}"
    )
    say(f"pinning: {placement.note}")
    say(
        f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
        "(other work on the machine skews every figure)"
    )
    say(
        "load generator: bench/load.py, a Python asyncio client (aiohttp on uvloop) in its own process, "
        "one keep-alive connection per concurrent worker"
    )

    load_python = ensure_venv("load", LOAD_REQS)
    if load_python is None:
        say("cannot run without the load generator's venv")
        return 1
    litellm_python = None
    if not args.no_litellm:
        litellm_python = ensure_venv("litellm", LITELLM_REQS)

    nginx_exe = None if args.no_nginx else ensure_nginx()
    say(f"open-file limit raised to {raise_fd_limit()} (inherited by every process started here)")

    procs = Procs()
    tmp = Path(tempfile.mkdtemp(prefix="suture-bench-"))
    try:
        return run(
            args,
            procs,
            tmp,
            placement,
            load_python,
            litellm_python,
            nginx_exe,
            quick=quick,
            rounds=rounds,
            t_rounds=t_rounds,
            tp_rounds=tp_rounds,
            tp_slice=tp_slice,
            soak=soak,
        )
    finally:
        procs.stop_all()
        shutil.rmtree(tmp, ignore_errors=True)


def run(
    args: argparse.Namespace,
    procs: Procs,
    tmp: Path,
    placement: Placement,
    load_python: Path,
    litellm_python: Path | None,
    nginx_exe: str | None,
    *,
    quick: bool,
    rounds: int,
    t_rounds: dict[int, int],
    tp_rounds: int,
    tp_slice: float,
    soak: int,
) -> int:
    runner = Runner(load_python, placement, tmp)
    mock_port, suture_port, litellm_port = free_port(), free_port(), free_port()
    mock_url = f"http://127.0.0.1:{mock_port}"
    mock = procs.start(
        [
            *placement.prefix("mock"),
            str(load_python),
            str(BENCH / "mock_provider.py"),
            "--port",
            str(mock_port),
            "--pace-ms",
            str(STREAM_PACE_MS[quick]),
        ],
        log=tmp / "mock.log",
    )
    if not wait_ready(mock_url + "/v1/models", mock, tmp / "mock.log", 20):
        say("the mock provider did not start:\n" + (tmp / "mock.log").read_text())
        return 1
    direct = Target("direct", mock_url)
    b10 = runner.body("openai", 10, False)

    say()
    say("== the mock provider alone (direct), its own cost")
    r = runner.latency([direct], OPENAI_PATH, b10, rounds)
    latency_table(r)
    r = runner.throughput([direct], OPENAI_PATH, b10, concurrency=64, rounds=tp_rounds, slice_s=tp_slice)
    d = r["direct"]
    say(
        f"  c=64: {d['done'] / d['busy_s']:.0f} req/s, p99 {pct(d['latencies_ms'], 0.99):.2f} ms "
        f"(the load generator shares a core with the mock: this is the client's limit as much as the mock's)"
    )

    suture_exe = Path(sys.executable).parent / "suture"
    suture_argv = [str(suture_exe)] if suture_exe.exists() else [sys.executable, "-m", "proxy.cli"]
    suture_env = {
        "SUTURE_OPENAI_UPSTREAM": mock_url + "/v1",
        "SUTURE_ANTHROPIC_UPSTREAM": mock_url,
        "SUTURE_LOG_LEVEL": "warning",
        # A gateway holding a thousand streams needs as many upstream connections (default 100).
        "SUTURE_MAX_CONNECTIONS": "4096",
    }
    suture = procs.start(
        [*placement.prefix("suture"), *suture_argv, "serve", "--host", "127.0.0.1", "--port", str(suture_port)],
        env=suture_env,
        log=tmp / "suture.log",
    )
    if not wait_ready(f"http://127.0.0.1:{suture_port}/healthz", suture, tmp / "suture.log", 30):
        say("Suture did not start:\n" + (tmp / "suture.log").read_text())
        return 1
    sut = Target("suture", f"http://127.0.0.1:{suture_port}")
    lit: Target | None = None
    litellm_proc = None
    if args.no_litellm:
        say("LiteLLM: skipped (--no-litellm)")
    elif litellm_python is None:
        say(f"LiteLLM: litellm[proxy]=={LITELLM_VERSION} could not be installed here; going on with direct vs Suture")
    else:
        litellm_config(tmp / "litellm.yaml", mock_url)
        # LiteLLM refuses to start without a strong master key; clients then present it.
        master_key = "sk-" + secrets.token_hex(24)
        litellm_exe = litellm_python.parent / "litellm"
        litellm_proc = procs.start(
            [
                *placement.prefix("litellm"),
                str(litellm_exe),
                "--config",
                str(tmp / "litellm.yaml"),
                "--host",
                "127.0.0.1",
                "--port",
                str(litellm_port),
                "--num_workers",
                "1",
            ],
            env={
                "LITELLM_MASTER_KEY": master_key,
                "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                "LITELLM_LOG": "ERROR",
                "LITELLM_TELEMETRY": "False",
                "DISABLE_SCHEMA_UPDATE": "true",
                "NO_DOCS": "True",
                "NO_REDOC": "True",
            },
            log=tmp / "litellm.log",
        )
        if wait_ready(f"http://127.0.0.1:{litellm_port}/health/liveliness", litellm_proc, tmp / "litellm.log", 180):
            lit = Target("litellm", f"http://127.0.0.1:{litellm_port}", {"authorization": f"Bearer {master_key}"})
            say(
                f"LiteLLM: litellm[proxy]=={LITELLM_VERSION}, one worker, callbacks and logging off, "
                f"model gpt-4o -> openai-compatible mock"
            )
        else:
            tail = (tmp / "litellm.log").read_text()[-1500:]
            say(
                f"LiteLLM: litellm[proxy]=={LITELLM_VERSION} installed but did not start; going on with direct "
                f"vs Suture. Its log ends:\n{tail}"
            )

    ngx: Target | None = None
    nginx_proc = None
    if args.no_nginx:
        say("nginx: skipped (--no-nginx)")
    elif nginx_exe is None:
        say("nginx: not installed and could not be (apt-get install nginx); going on without it")
    else:
        nginx_port, prefix = free_port(), tmp / "nginx"
        prefix.mkdir()
        (prefix / "nginx.conf").write_text(nginx_config(prefix, nginx_port, mock_port))
        nginx_proc = procs.start(
            [*placement.prefix("nginx"), nginx_exe, "-p", str(prefix), "-c", str(prefix / "nginx.conf")],
            log=tmp / "nginx.log",
        )
        if wait_ready(f"http://127.0.0.1:{nginx_port}/v1/models", nginx_proc, tmp / "nginx.log", 20):
            ngx = Target("nginx", f"http://127.0.0.1:{nginx_port}")
            version = subprocess.run([nginx_exe, "-v"], capture_output=True, text=True).stderr.strip()
            say(f"nginx: {version.partition('/')[2]}, one worker, keep-alive upstream, proxy buffering off both ways")
        else:
            say("nginx did not start:\n" + (tmp / "nginx.log").read_text()[-1500:])

    # The floor under Suture on its own stack (bench/floor_app.py): uvicorn, a parse, Suture's client.
    floor_port = free_port()
    floor_proc = procs.start(
        [
            *placement.prefix("suture"),
            sys.executable,
            "-m",
            "uvicorn",
            "floor_app:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(floor_port),
            "--http",
            "httptools",
            "--loop",
            "uvloop",
            "--no-access-log",
            "--log-level",
            "warning",
        ],
        env={"PYTHONPATH": os.pathsep.join((str(BENCH), str(BENCH.parent))), "FLOOR_UPSTREAM": mock_url},
        log=tmp / "floor.log",
    )
    flr: Target | None = None
    if wait_ready(f"http://127.0.0.1:{floor_port}/v1/models", floor_proc, tmp / "floor.log", 30):
        flr = Target("floor", f"http://127.0.0.1:{floor_port}")
        say("floor: bench/floor_app.py on uvicorn (httptools, uvloop): read, parse, Suture's client, relay")
    else:
        say("the floor app did not start:\n" + (tmp / "floor.log").read_text()[-1500:])

    openai_targets = [direct, sut] + ([flr] if flr else []) + ([ngx] if ngx else []) + ([lit] if lit else [])
    anthropic_targets = [
        direct,
        Target("suture", sut.base, {"x-api-key": "sk-bench", "anthropic-version": "2023-06-01"}),
    ] + ([Target("nginx", ngx.base)] if ngx else [])
    summary: dict[str, Any] = {}
    sections = set(args.only.split(","))

    pids = {
        "suture": suture.pid,
        **({"floor": floor_proc.pid} if flr else {}),
        **({"nginx": nginx_proc.pid} if ngx and nginx_proc else {}),
        **({"litellm": litellm_proc.pid} if lit and litellm_proc else {}),
    }
    if "base" in sections:
        # Warm every path (imports, first connections) before anything is timed.
        runner.latency(openai_targets, OPENAI_PATH, runner.body("openai", 10, True), 20)
        runner.latency(anthropic_targets, ANTHROPIC_PATH, runner.body("anthropic", 10, True), 20)
        rss_start = rss_mb(suture.pid)

        say()
        say(f"== added latency at concurrency 1, 10-message transcript, valid ({rounds} requests each, interleaved)")
        say("  OpenAI Chat")
        added = latency_table(runner.latency(openai_targets, OPENAI_PATH, b10, rounds))
        summary["added"] = added
        say("  Anthropic Messages (LiteLLM not configured for it)")
        latency_table(runner.latency(anthropic_targets, ANTHROPIC_PATH, runner.body("anthropic", 10, False), rounds))

        say()
        say(
            f"== throughput at concurrency 64, 10-message transcript ({tp_rounds} rounds of {tp_slice:.0f} s "
            f"per target, interleaved)"
        )
        cpu_before = {name: cpu_seconds(pid) for name, pid in pids.items()}
        r = runner.throughput(openai_targets, OPENAI_PATH, b10, concurrency=64, rounds=tp_rounds, slice_s=tp_slice)
        cpu_after = {name: cpu_seconds(pid) for name, pid in pids.items()}
        rps: dict[str, float] = {}
        cpu_us: dict[str, float] = {}
        for name, res in r.items():
            rps[name] = res["done"] / res["busy_s"] if res["busy_s"] else 0.0
            cpu = ""
            if name in pids:
                # CPU time per request served: what a core could do alone, whatever else ran meanwhile.
                us = (cpu_after[name] - cpu_before[name]) / (res["done"] + res["warm_done"]) * 1e6
                cpu_us[name] = us
                cpu = f"   CPU {us:6.0f} us/request (= {1e6 / us:.0f} req/s per core)"
            say(
                f"  {name:<10}{rps[name]:>9.0f} req/s   p50 {pct(res['latencies_ms'], 0.5):7.2f} ms   "
                f"p99 {pct(res['latencies_ms'], 0.99):7.2f} ms{cpu}"
            )
        summary["rps"] = rps
        summary["cpu_us"] = cpu_us

        say()
        say(f"== time to first byte of a streamed answer, 10-message transcript ({rounds} each, interleaved)")
        say("  OpenAI Chat, stream: true")
        ttfb = latency_table(
            runner.latency(openai_targets, OPENAI_PATH, runner.body("openai", 10, False, True), rounds), "ttfb_ms"
        )
        summary["ttfb"] = ttfb
        say("  Anthropic Messages, stream: true")
        latency_table(
            runner.latency(anthropic_targets, ANTHROPIC_PATH, runner.body("anthropic", 10, False, True), rounds),
            "ttfb_ms",
        )

        say()
        say(
            "== transcripts of 10, 100 and 1,000 messages at concurrency 1, valid and broken (the seed's interrupted "
            "tool call: the repair path)"
        )
        transcripts: dict[str, dict[str, list[float]]] = {}
        for api, path, targets in (
            ("openai", OPENAI_PATH, openai_targets),
            ("anthropic", ANTHROPIC_PATH, anthropic_targets),
        ):
            for n in (10, 100, 1000):
                for broken in (False, True):
                    kind = "broken" if broken else "valid"
                    body = runner.body(api, n, broken)
                    size = body.stat().st_size
                    say(f"  {api} {n} messages, {kind} ({size / 1024:.0f} KiB, {t_rounds[n]} each)")
                    transcripts[f"{api}-{n}-{kind}"] = latency_table(runner.latency(targets, path, body, t_rounds[n]))
        summary["transcripts"] = transcripts

        say()
        say(f"== resident memory of the Suture process, before and after {soak:,} more requests at concurrency 64")
        rss_before = rss_mb(suture.pid)
        half = soak // 2
        c1 = runner.count(sut, OPENAI_PATH, b10, n=half, concurrency=64)
        c2 = runner.count(sut, OPENAI_PATH, runner.body("openai", 10, True), n=soak - half, concurrency=64)
        rss_after = rss_mb(suture.pid)
        soak_rps = (c1["done"] + c2["done"]) / (c1["busy_s"] + c2["busy_s"])
        growth = (rss_after - rss_before) / rss_before * 100
        say(
            f"  at start-up, after warm-up: {rss_start:.1f} MB; before the soak: {rss_before:.1f} MB; after: "
            f"{rss_after:.1f} MB ({growth:+.1f}%); half valid, half broken 10-message transcripts, {soak_rps:.0f} req/s"
        )
        if litellm_proc is not None and lit is not None:
            say(f"  LiteLLM (process tree) after this run's requests: {tree_rss_mb(litellm_proc.pid):.1f} MB")
        summary["rss"] = (rss_before, rss_after, growth)

        say()
        say("== the repair check in-process (orjson.loads + sanitize), clean 1,000-message transcript")
        import orjson

        from sanitizer import sanitize

        check: dict[str, float] = {}
        for api, api_name in (("openai", "openai-chat"), ("anthropic", "anthropic-messages")):
            raw = runner.body(api, 1000, False).read_bytes()
            samples = []
            for _ in range(50 if quick else 300):
                start = time.perf_counter()
                sanitize(orjson.loads(raw), api=api_name)
                samples.append((time.perf_counter() - start) * 1000)
            check[api] = pct(samples, 0.5)
            say(f"  {api}: p50 {pct(samples, 0.5):.3f} ms, p99 {pct(samples, 0.99):.3f} ms")
        summary["check"] = check

        say()
        say("== Suture / nginx (the floor of one more hop)")
        if ngx is not None:
            ratio_line("Suture / nginx CPU per request at c=64", cpu_us["suture"], cpu_us["nginx"], "target <= 3x")
            ratio_line("Suture / nginx added p50, 10 messages", added["suture"][0], added["nginx"][0], "")
            ratio_line("nginx req/s / Suture req/s at c=64", rps["nginx"], rps["suture"], "")
            say(
                f"  nginx: {cpu_us['nginx']:.0f} us CPU per request, added p50 {added['nginx'][0]:+.3f} ms; "
                f"Suture: {cpu_us['suture']:.0f} us, {added['suture'][0]:+.3f} ms"
            )
        else:
            say("  (no nginx in this run)")
        if flr is not None:
            say()
            say("== Suture / floor (the same server stack, parse and client, without Suture's logic)")
            ratio_line("Suture / floor CPU per request at c=64", cpu_us["suture"], cpu_us["floor"], "")
            if ngx is not None:
                ratio_line("floor / nginx CPU per request at c=64", cpu_us["floor"], cpu_us["nginx"], "")
            ratio_line("Suture / floor added p50, 10 messages", added["suture"][0], added["floor"][0], "")

        say()
        say("== Suture / LiteLLM")
        if lit is not None:
            a_s, a_l = added["suture"][0], added["litellm"][0]
            ratio_line("LiteLLM added p50 / Suture added p50", a_l, a_s, "target >= 25x")
            ratio_line("Suture req/s / LiteLLM req/s at c=64", rps["suture"], rps["litellm"], "target >= 25x")
            ratio_line(
                "Suture / LiteLLM requests per CPU-second at c=64 (capacity of one core each)",
                cpu_us["litellm"],
                cpu_us["suture"],
                "the same comparison, free of whatever else shares the core",
            )
            ratio_line("LiteLLM added TTFB p50 / Suture added TTFB p50", ttfb["litellm"][0], ttfb["suture"][0], "")
            for n in (10, 100, 1000):
                for kind in ("valid", "broken"):
                    t = transcripts[f"openai-{n}-{kind}"]
                    ratio_line(f"LiteLLM / Suture added p50, {n} messages {kind}", t["litellm"][0], t["suture"][0], "")
        else:
            say("  (no LiteLLM in this run)")

        say()
        say(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        say("== targets (issue 8)")
        p50, _, p99 = added["suture"]
        verdict = [
            ("Suture added p50 < 0.6 ms (10 messages)", p50 < 0.6, f"{p50:.3f} ms"),
            ("Suture added p99 < 2 ms (10 messages)", p99 < 2.0, f"{p99:.3f} ms"),
            ("streaming TTFB adds < 1 ms (p50)", ttfb["suture"][0] < 1.0, f"{ttfb['suture'][0]:.3f} ms"),
            ("RSS < 100 MB", rss_after < 100, f"{rss_after:.1f} MB"),
            ("RSS growth < 10% over the soak", growth < 10, f"{growth:+.1f}%"),
            (
                "clean 1,000-message repair check < 1 ms",
                max(check.values()) < 1.0,
                ", ".join(f"{k} {v:.3f} ms" for k, v in check.items()),
            ),
        ]
        if lit is not None:
            verdict += [
                (
                    "LiteLLM added p50 >= 25x Suture's",
                    added["litellm"][0] >= 25 * p50,
                    f"{added['litellm'][0] / p50:.1f}x",
                ),
                (
                    "Suture req/s at c=64 >= 25x LiteLLM's",
                    rps["suture"] >= 25 * rps["litellm"],
                    f"{rps['suture'] / rps['litellm']:.1f}x",
                ),
            ]
        for what, ok, value in verdict:
            say(f"  {'PASS' if ok else 'MISS'}  {what}: {value}")

    if "sizes" in sections:
        summary["sizes"] = sizes_section(runner, openai_targets, pids, quick=quick)
    if "streams" in sections:
        summary["streams"] = streams_section(runner, openai_targets, pids, quick=quick)
    if "churn" in sections:
        summary["churn"] = churn_section(runner, openai_targets, pids, quick=quick)
    if "workers" in sections:
        two_port = free_port()
        two = procs.start(
            [*suture_argv, "serve", "--host", "127.0.0.1", "--port", str(two_port), "--workers", "2"],
            env=suture_env,
            log=tmp / "suture-2w.log",
        )
        if wait_ready(f"http://127.0.0.1:{two_port}/healthz", two, tmp / "suture-2w.log", 30):
            summary["workers"] = workers_section(
                runner, sut, Target("suture-2w", f"http://127.0.0.1:{two_port}"), suture.pid, two.pid, quick=quick
            )
        else:
            say("Suture --workers 2 did not start:\n" + (tmp / "suture-2w.log").read_text()[-1500:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
