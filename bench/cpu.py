"""CPU time per request of each proxy, beside nginx and the uvicorn floor, in one run.

Run by hand:  .venv/bin/python bench/cpu.py [--rounds 7] [--slice 3] [--base GIT_REF] [--no-nginx]

The measure of issue 43: the proxy process's user + system CPU time (children included, from
/proc) per completed request, with the mock provider and the load generator pinned to one core
and the proxies to the other, each proxy driven in turn for one time slice per round (A B C A B
C...), so a noisy machine's drift falls on all of them alike. Medians over the rounds; the ratios
are the result (absolute values move from machine to machine).

Candidates: nginx (one worker, keep-alive upstream), the floor (bench/floor_app.py: a bare ASGI app
on uvicorn that reads, parses and forwards with Suture's own client), Suture as checked out, and
with ``--base REF`` Suture at another commit (a git worktree under bench/.worktrees), to see what a
change costs. Loads: a 10 KB valid agent transcript (OpenAI Chat) at concurrency 16 and 64, and
a 500 KB one at 16.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# bench/run.py, beside this file.
from run import (
    BENCH,
    LOAD_REQS,
    OPENAI_PATH,
    ROOT,
    Placement,
    Procs,
    Runner,
    Target,
    cpu_seconds,
    ensure_nginx,
    ensure_venv,
    free_port,
    nginx_config,
    place,
    raise_fd_limit,
    say,
    wait_ready,
)

LOADS = ((10_000, 16), (10_000, 64), (500_000, 16))


def _worktree(ref: str) -> Path:
    """A checkout of ``ref`` to run Suture from, made once and moved to ``ref`` on later runs."""
    path = BENCH / ".worktrees" / "base"
    if not path.exists():
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(path), ref], cwd=ROOT, check=True, capture_output=True
        )
    else:
        subprocess.run(["git", "checkout", "-q", "--detach", ref], cwd=path, check=True, capture_output=True)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="time slices per candidate and load (default 7)")
    parser.add_argument("--slice", type=float, default=3.0, help="seconds per slice (default 3)")
    parser.add_argument("--base", help="also run Suture at this git ref (a worktree), to compare a change")
    parser.add_argument("--no-nginx", action="store_true", help="no nginx")
    args = parser.parse_args()

    load_python = ensure_venv("load", LOAD_REQS)
    if load_python is None:
        return 1
    nginx_exe = None if args.no_nginx else ensure_nginx()
    raise_fd_limit()
    placement = place()
    say(placement.note)
    procs = Procs()
    try:
        with tempfile.TemporaryDirectory() as tmp_name:
            return _run(args, procs, Path(tmp_name), placement, load_python, nginx_exe)
    finally:
        procs.stop_all()


def _run(
    args: argparse.Namespace, procs: Procs, tmp: Path, placement: Placement, load_python: Path, nginx_exe: str | None
) -> int:
    runner = Runner(load_python, placement, tmp)
    mock_port = free_port()
    mock_url = f"http://127.0.0.1:{mock_port}"
    mock = procs.start(
        [*placement.prefix("mock"), str(load_python), str(BENCH / "mock_provider.py"), "--port", str(mock_port)],
        log=tmp / "mock.log",
    )
    if not wait_ready(mock_url + "/v1/models", mock, tmp / "mock.log", 20):
        say("the mock provider did not start")
        return 1
    pin = placement.prefix("suture")
    candidates: dict[str, tuple[Target, int]] = {}

    def suture_at(name: str, checkout: Path) -> None:
        port = free_port()
        proc = procs.start(
            [*pin, sys.executable, "-m", "proxy.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
            env={
                "PYTHONPATH": str(checkout),
                "SUTURE_OPENAI_UPSTREAM": mock_url + "/v1",
                "SUTURE_LOG_LEVEL": "warning",
                "SUTURE_MAX_CONNECTIONS": "4096",
            },
            log=tmp / f"{name}.log",
        )
        # Started from the checkout so that `proxy` is that tree's, not the installed one.
        if wait_ready(f"http://127.0.0.1:{port}/healthz", proc, tmp / f"{name}.log", 60):
            candidates[name] = (Target(name, f"http://127.0.0.1:{port}"), proc.pid)
        else:
            say(f"{name} did not start:\n" + (tmp / f"{name}.log").read_text()[-1500:])

    if nginx_exe is not None:
        port, prefix = free_port(), tmp / "nginx"
        prefix.mkdir()
        (prefix / "nginx.conf").write_text(nginx_config(prefix, port, mock_port))
        proc = procs.start(
            [*pin, nginx_exe, "-p", str(prefix), "-c", str(prefix / "nginx.conf")], log=tmp / "nginx.log"
        )
        if wait_ready(f"http://127.0.0.1:{port}/v1/models", proc, tmp / "nginx.log", 20):
            candidates["nginx"] = (Target("nginx", f"http://127.0.0.1:{port}"), proc.pid)
    port = free_port()
    floor = procs.start(
        [
            *pin,
            sys.executable,
            "-m",
            "uvicorn",
            "floor_app:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--http",
            "httptools",
            "--loop",
            "uvloop",
            "--no-access-log",
            "--log-level",
            "warning",
        ],
        env={"PYTHONPATH": f"{BENCH}:{ROOT}", "FLOOR_UPSTREAM": mock_url},
        log=tmp / "floor.log",
    )
    if wait_ready(f"http://127.0.0.1:{port}/v1/models", floor, tmp / "floor.log", 30):
        candidates["floor"] = (Target("floor", f"http://127.0.0.1:{port}"), floor.pid)
    suture_at("suture", ROOT)
    if args.base:
        suture_at(f"suture@{args.base}", _worktree(args.base))
    if "suture" not in candidates or "floor" not in candidates:
        return 1

    cpu_us: dict[tuple[int, int], dict[str, list[float]]] = {}
    for size, concurrency in LOADS:
        body = runner.agent_body("openai", size, False)
        targets = [target for target, _ in candidates.values()]
        # Warm every candidate (imports, connections, the pool's first sockets) before timing.
        runner.throughput(targets, OPENAI_PATH, body, concurrency=concurrency, rounds=1, slice_s=1.0)
        samples: dict[str, list[float]] = {name: [] for name in candidates}
        for _ in range(args.rounds):
            for name, (target, pid) in candidates.items():
                before = cpu_seconds(pid)
                result = runner.throughput(
                    [target], OPENAI_PATH, body, concurrency=concurrency, rounds=1, slice_s=args.slice
                )
                done = result[name]["done"]
                if done:
                    samples[name].append((cpu_seconds(pid) - before) / done * 1e6)
        cpu_us[(size, concurrency)] = samples

    say()
    say(f"== CPU per request (µs, median of {args.rounds} slices of {args.slice:.0f} s; min-max)")
    names = list(candidates)
    header = f"{'load':<16}" + "".join(f"{n:>22}" for n in names)
    say(header)
    medians: dict[tuple[int, int], dict[str, float]] = {}
    for (size, concurrency), samples in cpu_us.items():
        medians[(size, concurrency)] = {n: statistics.median(s) for n, s in samples.items() if s}
        cells = []
        for n in names:
            s = samples[n]
            cells.append(f"{statistics.median(s):8.0f} ({min(s):.0f}-{max(s):.0f})" if s else "-")
        say(f"{f'{size // 1000} KB, c={concurrency}':<16}" + "".join(f"{c:>22}" for c in cells))
    say()
    say("== ratios of the medians")
    for load, m in medians.items():
        label = f"{load[0] // 1000} KB, c={load[1]}"
        parts = [f"suture / floor {m['suture'] / m['floor']:.2f}"]
        if "nginx" in m:
            parts += [f"suture / nginx {m['suture'] / m['nginx']:.2f}", f"floor / nginx {m['floor'] / m['nginx']:.2f}"]
        for n in m:
            if n.startswith("suture@"):
                parts.append(f"suture / {n} {m['suture'] / m[n]:.3f}")
        say(f"  {label:<14} " + ", ".join(parts))
    say("  target (issue 43): suture / floor <= 1.3 at 10 KB, c=16 and c=64")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
