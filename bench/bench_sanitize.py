"""Sanitizer cost per message, for valid and broken transcripts of 10 to 10,000 messages.

Run by hand:  python bench/bench_sanitize.py
Prints p50/p90/p99 per call and the cost per message; the cost per message should stay flat
as transcripts grow (linear time). Then valid 1,000-message transcripts bound for each provider
with rules of its own (DeepSeek, Groq, Moonshot, Mistral...), against the format's own: a valid
body should cost about the same wherever it goes (each such rule takes a quick look, Rule.clean).

    python bench/bench_sanitize.py --scaling [SUBSTRING]

times every adversarial shape of bench/adversarial.py (orphans, misplaced and
duplicate results, reused and invalid ids, long same-role runs...) at n and 4n, for ``sanitize``
and ``validate``, and prints the ratio: about 4 is linear, 16 quadratic. SUBSTRING picks shapes
by name, e.g. ``gemini`` or ``orphan-per-message``.
"""

from __future__ import annotations

import copy
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sanitizer import sanitize

SIZES = (10, 100, 1_000, 10_000)


def openai_transcript(n: int, broken: bool) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are an agent."}]
    turn = 0
    while len(messages) < n:
        call = f"call_{turn}"
        messages += [
            {"role": "user", "content": f"step {turn}: do the thing"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": call, "type": "function", "function": {"name": "run", "arguments": '{"x":1}'}}],
            },
            {"role": "tool", "tool_call_id": call, "content": f"output {turn}"},
            {"role": "assistant", "content": f"done {turn}"},
        ]
        turn += 1
    messages = messages[:n]
    if messages[-1]["role"] == "assistant" and "tool_calls" in messages[-1]:
        messages.pop()
    if broken:
        # The seed: an orphan call in the middle, followed by the recovery message.
        middle = next(i for i in range(len(messages) // 2, len(messages)) if messages[i]["role"] == "tool")
        messages[middle] = {"role": "assistant", "content": "I noticed that you have interrupted me."}
    return {"model": "gpt-4o", "messages": messages}


def anthropic_transcript(n: int, broken: bool) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    turn = 0
    while len(messages) < n:
        call = f"toolu_{turn}"
        messages += [
            {"role": "user", "content": f"step {turn}: do the thing"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "On it."},
                    {"type": "tool_use", "id": call, "name": "run", "input": {"x": 1}},
                ],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": f"output {turn}"}]},
            {"role": "assistant", "content": [{"type": "text", "text": f"done {turn}"}]},
        ]
        turn += 1
    messages = messages[:n]
    if messages[-1]["role"] == "assistant" and messages[-1]["content"][-1]["type"] == "tool_use":
        messages.pop()
    if broken:
        middle = next(
            i
            for i in range(len(messages) // 2, len(messages))
            if messages[i]["role"] == "user" and isinstance(messages[i]["content"], list)
        )
        messages[middle] = {"role": "assistant", "content": [{"type": "text", "text": "I noticed..."}]}
    return {
        "model": "claude",
        "max_tokens": 10,
        "tools": [{"name": "run", "input_schema": {"type": "object"}}],
        "messages": messages,
    }


def measure(body: dict[str, Any], api: str, provider: str | None = None) -> list[float]:
    runs = max(20, min(2000, 200_000 // len(body["messages"])))
    samples = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        sanitize(body, api=api, provider=provider)
        samples.append((time.perf_counter_ns() - start) / 1000)
    return sorted(samples)


def providers() -> None:
    """Valid transcripts bound for each provider, p50 against the format's own."""
    from sanitizer.providers import ACCEPTED

    print(f"\n{'api':<20}{'bound for':<26}{'messages':>9}{'p50 us':>11}{'x own':>8}")
    for api, build in (("openai-chat", openai_transcript), ("anthropic-messages", anthropic_transcript)):
        body = build(1_000, False)
        own = pct(measure(body, api), 0.5)
        for provider in ACCEPTED[api]:
            # The body as that provider takes it (Mistral's tool-call ids...), so only the look is timed.
            valid = sanitize(copy.deepcopy(body), api=api, provider=provider).body
            p50 = pct(measure(valid, api, provider), 0.5)
            print(f"{api:<20}{provider:<26}{len(valid['messages']):>9}{p50:>11.1f}{p50 / own:>8.1f}")


def pct(samples: list[float], q: float) -> float:
    return samples[min(len(samples) - 1, int(q * len(samples)))]


def scaling(only: str) -> None:
    from bench.adversarial import CHECKS, SHAPES, Shape

    def best(run: Any, body: dict[str, Any]) -> tuple[float, int]:
        times, found = [], 0
        for _ in range(5):
            gc.disable()
            start = time.perf_counter()
            found = run(body)
            times.append(time.perf_counter() - start)
            gc.enable()
        return min(times) * 1000, found

    print(f"{'shape':<62}{'n':>6}{'ms at n':>10}{'ms at 4n':>10}{'ratio':>7}{'found':>7}")
    for case in [*SHAPES, *CHECKS]:
        if only not in case.id:
            continue
        small, _ = best(case.run, case.build(case.n))
        large, found = best(case.run, case.build(4 * case.n))
        flag = "" if found == case.expected(4 * case.n) else f"  (expected {case.expected(4 * case.n)})"
        label = case.id if isinstance(case, Shape) else f"validate {case.id}"
        print(f"{label:<62}{case.n:>6}{small:>10.1f}{large:>10.1f}{large / small:>7.1f}{found:>7}{flag}")


def main() -> None:
    if sys.argv[1:2] == ["--scaling"]:
        scaling(sys.argv[2] if len(sys.argv) > 2 else "")
        return
    print(f"{'api':<20}{'kind':<8}{'messages':>9}{'p50 us':>11}{'p90 us':>11}{'p99 us':>11}{'us/msg':>9}{'repairs':>9}")
    for api, build in (("openai-chat", openai_transcript), ("anthropic-messages", anthropic_transcript)):
        for broken in (False, True):
            per_message = []
            for n in SIZES:
                body = build(n, broken)
                repairs = len(sanitize(copy.deepcopy(body), api=api).repairs)
                samples = measure(body, api)
                p50 = pct(samples, 0.5)
                per_message.append(p50 / len(body["messages"]))
                kind = "broken" if broken else "valid"
                print(
                    f"{api:<20}{kind:<8}{len(body['messages']):>9}{p50:>11.1f}{pct(samples, 0.9):>11.1f}"
                    f"{pct(samples, 0.99):>11.1f}{per_message[-1]:>9.3f}{repairs:>9}"
                )
            ratio = per_message[-1] / statistics.mean(per_message[1:3])
            print(f"{'':<28}cost per message at 10,000 / at 100-1,000: {ratio:.2f}x (1.0 = linear)")
    providers()


if __name__ == "__main__":
    main()
