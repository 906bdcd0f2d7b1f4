"""Request bodies of the size a coding agent sends mid-session, valid or broken, for bench/run.py.

``agent_transcript(api, size, broken)`` builds an OpenAI Chat or Anthropic Messages body of about
``size`` bytes (compact JSON): a system prompt, a tool list, and turns of a user instruction
followed by one to three tool calls with their results (file contents, command output, search
hits, code written through a tool's arguments) and the assistant's answer; a few user messages
carry a screenshot as base64. Content has what makes JSON dear to parse: escaped quotes,
backslashes, newlines, tabs and some non-ASCII text.

``broken`` gives the same transcript with the seed's defect in a middle turn (the
interrupted-tool-call pattern of tests/sanitizer/golden/seeds/000-*.json): the call's result is
missing and the agent framework's recovery message sits right after the call, so the call is an
orphan and a repair is needed.

Deterministic: the same arguments always give the same body. Standard library only.
"""

from __future__ import annotations

import base64
import json
import random
from typing import Any

SIZES = (10_000, 100_000, 500_000, 2_000_000)
RECOVERY = "I noticed that you have interrupted me. What can I do for you?"

_TOOLS = {
    "read_file": ("Read a file of the repository.", {"path": {"type": "string"}}),
    "run_command": ("Run a shell command in the sandbox and return its output.", {"command": {"type": "string"}}),
    "write_file": (
        "Write a file of the repository.",
        {"path": {"type": "string"}, "content": {"type": "string"}},
    ),
    "search": ("Search the repository for a regular expression.", {"pattern": {"type": "string"}}),
}
_WORDS = (
    "config",
    "request",
    "handler",
    "stream",
    "parser",
    "session",
    "token",
    "buffer",
    "retry",
    "upstream",
    "message",
    "result",
    "transcript",
    "payload",
    "schema",
    "client",
    "server",
    "worker",
    "cache",
    "index",
    "record",
    "value",
    "offset",
)
_SYSTEM = (
    "You are a coding agent working in a Git repository. Use the tools to read files, run commands "
    "and write changes. Keep edits small, run the tests after each change, and explain what you did. "
    "Never invent file contents: read them first. Paths are relative to the repository root.\n"
) * 12


def _ident(rng: random.Random) -> str:
    return "_".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3)))


def _code(rng: random.Random, size: int) -> str:
    lines: list[str] = []
    total = 0
    while total < size:
        kind = rng.random()
        name = _ident(rng)
        if kind < 0.15:
            line = f"def {name}(self, {_ident(rng)}: str, *, {_ident(rng)}: int = {rng.randint(0, 99)}) -> dict:"
        elif kind < 0.35:
            line = f'    {name} = {{"{_ident(rng)}": "{_ident(rng)}\\n", "path": "C:\\\\tmp\\\\{name}"}}'
        elif kind < 0.5:
            line = f"    # {' '.join(rng.choice(_WORDS) for _ in range(8))} (café, naïve — ✓)"
        elif kind < 0.65:
            line = f"\tif {name} is None or len({name}) > {rng.randint(1, 4096)}:\n"
            line += f"\t\traise ValueError(f'bad {{{name}!r}}')"
        else:
            line = f"    return self.{name}({_ident(rng)}, '{rng.choice(_WORDS)}') + \"{rng.choice(_WORDS)}\""
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)[:size]


def _log(rng: random.Random, size: int) -> str:
    lines: list[str] = []
    total = 0
    while total < size:
        status = rng.choice(("PASSED", "PASSED", "PASSED", "FAILED", "SKIPPED"))
        test = f"tests/test_{_ident(rng)}.py::test_{_ident(rng)}[{rng.choice(_WORDS)}-{rng.randint(0, 9)}]"
        line = f"{test} {status} [{rng.randint(0, 100):3d}%]"
        if status == "FAILED":
            line += f'\nE   AssertionError: assert "{_ident(rng)}" == "{_ident(rng)}"\n'
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)[:size]


def _hits(rng: random.Random, size: int) -> str:
    lines: list[str] = []
    total = 0
    while total < size:
        line = f'src/{_ident(rng)}.py:{rng.randint(1, 900)}:    {_ident(rng)} = {_ident(rng)}("{rng.choice(_WORDS)}")'
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)[:size]


def _image(rng: random.Random, size: int) -> str:
    """Base64 of ``size`` bytes (about 4/3 of them as text) behind a PNG signature."""
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + rng.randbytes(max(0, size - 8))).decode()


def _piece(rng: random.Random, lo: int, hi: int, budget: int) -> int:
    return max(80, min(rng.randint(lo, hi), budget // 3))


def _turns(size: int, seed: int) -> list[dict[str, Any]]:
    """The transcript in a neutral form: per turn, the instruction, an image or not, the calls, the answer.

    Each piece's size is bounded by what is left of ``size`` so small bodies come out near their target.
    """
    rng = random.Random(seed)
    budget = size - len(_SYSTEM) - 1500  # the system prompt, the tool list, the envelope
    turns: list[dict[str, Any]] = []
    n = 0
    while budget > 400:
        turn: dict[str, Any] = {"ask": f"Step {n}: " + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(8, 40)))}
        if size >= 100_000 and rng.random() < 0.06:
            turn["image"] = _image(rng, _piece(rng, 18_000, 36_000, budget))
        calls = []
        for k in range(rng.randint(1, 3)):
            tool = rng.choice(tuple(_TOOLS))
            path = f"src/{_ident(rng)}.py"
            if tool == "read_file":
                args: dict[str, str] = {"path": path}
                out = _code(rng, _piece(rng, 1_000, 12_000, budget))
            elif tool == "run_command":
                args, out = {"command": "python -m pytest -q -x tests/"}, _log(rng, _piece(rng, 500, 8_000, budget))
            elif tool == "write_file":
                args, out = {"path": path, "content": _code(rng, _piece(rng, 800, 6_000, budget))}, f"wrote {path}"
            else:
                args, out = {"pattern": _ident(rng)}, _hits(rng, _piece(rng, 300, 3_000, budget))
            call_id = f"{n:04d}{k}{rng.randrange(16**12):012x}"
            calls.append({"id": call_id, "tool": tool, "args": args, "out": out})
            budget -= len(json.dumps(args)) + len(json.dumps(out)) + 200
        turn["calls"] = calls
        turn["answer"] = "Done: " + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(10, 60)))
        budget -= len(turn["ask"]) + len(turn["answer"]) + len(turn.get("image", "")) + 200
        turns.append(turn)
        n += 1
    return turns


def _openai(turns: list[dict[str, Any]], broken_at: int | None) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": _SYSTEM}]
    for i, turn in enumerate(turns):
        if "image" in turn:
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": turn["ask"]},
                        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + turn["image"]}},
                    ],
                }
            )
        else:
            messages.append({"role": "user", "content": turn["ask"]})
        for call in turn["calls"]:
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_" + call["id"],
                            "type": "function",
                            "function": {"name": call["tool"], "arguments": json.dumps(call["args"])},
                        }
                    ],
                }
            )
            if i == broken_at:
                messages.append({"role": "assistant", "content": RECOVERY})
                break
            messages.append({"role": "tool", "tool_call_id": "call_" + call["id"], "content": call["out"]})
        else:
            messages.append({"role": "assistant", "content": turn["answer"]})
    messages.append({"role": "user", "content": "Go on with the next step."})
    tools = [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": about,
                "parameters": {"type": "object", "properties": props, "required": list(props)},
            },
        }
        for name, (about, props) in _TOOLS.items()
    ]
    return {"model": "gpt-4o", "messages": messages, "tools": tools}


def _anthropic(turns: list[dict[str, Any]], broken_at: int | None) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for i, turn in enumerate(turns):
        ask: list[dict[str, Any]] = [{"type": "text", "text": turn["ask"]}]
        if "image" in turn:
            ask.append(
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": turn["image"]}}
            )
        if messages and messages[-1]["role"] == "user":  # after a recovery's user turn: one user message
            messages[-1]["content"].extend(ask)
        else:
            messages.append({"role": "user", "content": ask})
        for call in turn["calls"]:
            use = {"type": "tool_use", "id": "toolu_" + call["id"], "name": call["tool"], "input": call["args"]}
            messages.append({"role": "assistant", "content": [use]})
            if i == broken_at:
                messages.append({"role": "assistant", "content": [{"type": "text", "text": RECOVERY}]})
                break
            result = {"type": "tool_result", "tool_use_id": "toolu_" + call["id"], "content": call["out"]}
            messages.append({"role": "user", "content": [result]})
        else:
            messages.append({"role": "assistant", "content": [{"type": "text", "text": turn["answer"]}]})
    if messages[-1]["role"] == "user":
        messages[-1]["content"].append({"type": "text", "text": "Go on with the next step."})
    else:
        messages.append({"role": "user", "content": [{"type": "text", "text": "Go on with the next step."}]})
    tools = [
        {
            "name": name,
            "description": about,
            "input_schema": {"type": "object", "properties": props, "required": list(props)},
        }
        for name, (about, props) in _TOOLS.items()
    ]
    return {"model": "claude-sonnet-4-5", "max_tokens": 4096, "system": _SYSTEM, "messages": messages, "tools": tools}


def agent_transcript(api: str, size: int, broken: bool, seed: int = 0) -> dict[str, Any]:
    """An ``api`` ("openai" or "anthropic") body of about ``size`` bytes of compact JSON."""
    turns = _turns(size, seed)
    broken_at = len(turns) // 2 if broken else None
    return (_openai if api == "openai" else _anthropic)(turns, broken_at)


def encode(body: dict[str, Any]) -> bytes:
    """The body as a client sends it: compact JSON, non-ASCII as UTF-8."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def label(size: int) -> str:
    return f"{size // 1_000_000} MB" if size >= 1_000_000 else f"{size // 1000} KB"
