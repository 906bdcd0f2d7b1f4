"""Adversarial transcripts of any size: the shapes that make a careless repair quadratic.

Each shape is written as abstract events and rendered in every wire format it makes sense for,
so one damage pattern exercises all five dialects. A :class:`Shape` knows which rule it exercises
and how many repairs that rule must make at size ``n``, so a timing test can check that the
input really took the slow path it was built for. Used by ``tests/sanitizer/test_linear_time.py`` and by
``bench/bench_sanitize.py --scaling``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sanitizer import Policy, sanitize, validate

Event = tuple[Any, ...]
Body = dict[str, Any]

APIS = ("openai-chat", "anthropic-messages", "openai-responses", "gemini", "bedrock-converse")
DROP = Policy(orphan_tool_call="drop")
LEAVE = Policy(trailing_tool_call="leave")


# Events: ("user", text) ("assistant", text) ("system", text), with an optional count of text blocks
#         ("calls", [ids], thinking) a model turn calling tool "run_<id>" for each id
#         ("results", [ids]) one turn answering each id ("out-<id>"); one message per result in Chat/Responses


def _texts(ev: Event) -> list[str]:
    return [ev[1]] * (ev[2] if len(ev) > 2 else 1)


def _name(call_id: str) -> str:
    return "run_" + call_id.replace(".", "_").replace(":", "_")


def to_chat(evs: list[Event]) -> Body:
    messages: list[dict[str, Any]] = []
    for ev in evs:
        if ev[0] in ("user", "assistant", "system"):
            texts = _texts(ev)
            content = ev[1] if len(texts) == 1 else [{"type": "text", "text": t} for t in texts]
            messages.append({"role": ev[0], "content": content})
        elif ev[0] == "calls":
            calls = [{"id": i, "type": "function", "function": {"name": _name(i), "arguments": "{}"}} for i in ev[1]]
            messages.append({"role": "assistant", "content": "let me look" if ev[2] else None, "tool_calls": calls})
        else:
            messages += [{"role": "tool", "tool_call_id": i, "content": f"out-{i}"} for i in ev[1]]
    return {
        "model": "gpt-4o",
        "messages": messages,
        "tools": [{"type": "function", "function": {"name": "run", "parameters": {"type": "object"}}}],
    }


def to_anthropic(evs: list[Event]) -> Body:
    messages: list[dict[str, Any]] = []
    for ev in evs:
        if ev[0] in ("user", "assistant", "system"):
            role = "assistant" if ev[0] == "assistant" else "user"
            messages.append({"role": role, "content": [{"type": "text", "text": t} for t in _texts(ev)]})
        elif ev[0] == "calls":
            blocks: list[dict[str, Any]] = (
                [{"type": "thinking", "thinking": "hmm", "signature": "sig"}] if ev[2] else []
            )
            blocks += [{"type": "tool_use", "id": i, "name": _name(i), "input": {}} for i in ev[1]]
            messages.append({"role": "assistant", "content": blocks})
        else:
            results = [{"type": "tool_result", "tool_use_id": i, "content": f"out-{i}"} for i in ev[1]]
            messages.append({"role": "user", "content": results})
    return {
        "model": "claude",
        "max_tokens": 100,
        "tools": [{"name": "run", "input_schema": {"type": "object"}}],
        "messages": messages,
    }


def to_responses(evs: list[Event]) -> Body:
    items: list[dict[str, Any]] = []
    for ev in evs:
        if ev[0] in ("user", "system"):
            content = [{"type": "input_text", "text": t} for t in _texts(ev)]
            items.append({"type": "message", "role": "user" if ev[0] == "user" else "developer", "content": content})
        elif ev[0] == "assistant":
            content = [{"type": "output_text", "text": t} for t in _texts(ev)]
            items.append({"type": "message", "role": "assistant", "content": content})
        elif ev[0] == "calls":
            if ev[2]:
                items.append({"type": "reasoning", "id": f"rs_{len(items)}", "summary": []})
            items += [{"type": "function_call", "call_id": i, "name": _name(i), "arguments": "{}"} for i in ev[1]]
        else:
            items += [{"type": "function_call_output", "call_id": i, "output": f"out-{i}"} for i in ev[1]]
    return {"model": "gpt-5", "input": items}


def to_gemini(evs: list[Event]) -> Body:
    contents: list[dict[str, Any]] = []
    for ev in evs:
        if ev[0] in ("user", "assistant", "system"):
            role = "model" if ev[0] == "assistant" else "user"
            contents.append({"role": role, "parts": [{"text": t} for t in _texts(ev)]})
        elif ev[0] == "calls":
            parts: list[dict[str, Any]] = [{"text": "hmm", "thought": True}] if ev[2] else []
            parts += [{"functionCall": {"name": _name(i), "args": {}, "id": i}} for i in ev[1]]
            contents.append({"role": "model", "parts": parts})
        else:
            parts = [
                {"functionResponse": {"name": _name(i), "id": i, "response": {"output": f"out-{i}"}}} for i in ev[1]
            ]
            contents.append({"role": "user", "parts": parts})
    return {"contents": contents}


def to_bedrock(evs: list[Event]) -> Body:
    messages: list[dict[str, Any]] = []
    for ev in evs:
        if ev[0] in ("user", "assistant", "system"):
            role = "assistant" if ev[0] == "assistant" else "user"
            messages.append({"role": role, "content": [{"text": t} for t in _texts(ev)]})
        elif ev[0] == "calls":
            blocks: list[dict[str, Any]] = (
                [{"reasoningContent": {"reasoningText": {"text": "hmm", "signature": "sig"}}}] if ev[2] else []
            )
            blocks += [{"toolUse": {"toolUseId": i, "name": _name(i), "input": {}}} for i in ev[1]]
            messages.append({"role": "assistant", "content": blocks})
        else:
            results = [{"toolResult": {"toolUseId": i, "content": [{"text": f"out-{i}"}]}} for i in ev[1]]
            messages.append({"role": "user", "content": results})
    return {
        "modelId": "m",
        "toolConfig": {"tools": [{"toolSpec": {"name": "run", "inputSchema": {"json": {}}}}]},
        "messages": messages,
    }


WRITERS: dict[str, Callable[[list[Event]], Body]] = {
    "openai-chat": to_chat,
    "anthropic-messages": to_anthropic,
    "openai-responses": to_responses,
    "gemini": to_gemini,
    "bedrock-converse": to_bedrock,
}


# The damage, as events. ``n`` is the number of defects.


def orphans_in_one_message(n: int) -> list[Event]:
    return [("user", "task"), ("calls", [f"call_{i}" for i in range(n)], False), ("user", "go on")]


def orphan_per_message(n: int, thinking: Callable[[int], bool] = lambda i: False) -> list[Event]:
    evs: list[Event] = [("user", "task")]
    for i in range(n):
        evs += [("calls", [f"call_{i}"], thinking(i)), ("user", f"next {i}")]
    return evs


def orphan_per_message_then_trailing(n: int) -> list[Event]:
    # The last turn's unanswered call is left for the client under trailing_tool_call="leave".
    return [*orphan_per_message(n), ("calls", ["call_last", "call_done"], False), ("results", ["call_done"])]


def orphan_per_message_some_thinking(n: int) -> list[Event]:
    # Under the drop policy every other owner is pinned by its thinking and paired instead.
    return orphan_per_message(n, thinking=lambda i: i % 2 == 0)


def misplaced_results(n: int) -> list[Event]:
    # Every result arrives in one turn at the very end, far from its call.
    evs: list[Event] = [("user", "task")]
    for i in range(n):
        evs += [("calls", [f"call_{i}"], False), ("user", f"next {i}")]
    return [*evs, ("results", [f"call_{i}" for i in range(n)]), ("user", "go on")]


def misplaced_results_one_each(n: int) -> list[Event]:
    evs: list[Event] = [("user", "task")]
    for i in range(n):
        evs += [("calls", [f"call_{i}"], False), ("user", f"next {i}")]
    return [*evs, *(("results", [f"call_{i}"]) for i in range(n)), ("user", "go on")]


def orphan_results(n: int) -> list[Event]:
    evs: list[Event] = [("user", "task")]
    for i in range(n):
        evs += [("assistant", f"ok {i}"), ("results", [f"ghost_{i}"]), ("user", "go on")]
    return evs


def duplicate_results(n: int) -> list[Event]:
    evs: list[Event] = [("user", "task")]
    for i in range(n):
        evs += [
            ("calls", [f"call_{i}"], False),
            ("results", [f"call_{i}"]),
            ("results", [f"call_{i}"]),
            ("user", "go on"),
        ]
    return evs


def duplicates_in_one_message(n: int) -> list[Event]:
    return [("user", "task"), ("calls", ["call_0"], False), ("results", ["call_0"] * (n + 1)), ("user", "go on")]


def reused_ids(n: int) -> list[Event]:
    # Every turn numbers its call call_0, as some gateways do.
    evs: list[Event] = [("user", "task")]
    for _ in range(n + 1):
        evs += [("calls", ["call_0"], False), ("results", ["call_0"]), ("user", "go on")]
    return evs


def interposed(n: int) -> list[Event]:
    evs: list[Event] = [("user", "task"), ("calls", ["call_0"], False)]
    for i in range(n // 2):
        evs += [("assistant", f"I noticed that you have interrupted me {i}"), ("user", f"never mind {i}")]
    return [*evs, ("results", ["call_0"]), ("user", "go on")]


def interposed_per_call(n: int) -> list[Event]:
    evs: list[Event] = [("user", "task")]
    for i in range(n):
        evs += [("calls", [f"call_{i}"], False), ("user", f"wait {i}"), ("results", [f"call_{i}"]), ("assistant", "ok")]
    return [*evs, ("user", "go on")]


def user_run(n: int) -> list[Event]:
    # Several blocks each: merging by copying the growing message costs blocks x n².
    return [("user", f"line {i}", 8) for i in range(n + 1)]


def model_run(n: int) -> list[Event]:
    # A run of model turns ending in a call: the whole run must become one turn.
    evs: list[Event] = [("user", "task")]
    evs += [("assistant", f"thought {i}", 4) for i in range(n)]
    return [*evs, ("calls", ["call_0"], False), ("results", ["call_0"]), ("user", "go on")]


def invalid_ids(n: int) -> list[Event]:
    evs: list[Event] = [("user", "task")]
    for i in range(n):
        evs += [("calls", [f"functions.bash:{i}"], False), ("results", [f"functions.bash:{i}"]), ("user", "go on")]
    return evs


def blank_text(n: int) -> list[Event]:
    evs: list[Event] = [("user", "task")]
    for i in range(n):
        evs += [("assistant", " "), ("user", f"hello? {i}", 4)]
    return evs


def _render(events: Callable[[int], list[Event]], api: str) -> Callable[[int], Body]:
    writer = WRITERS[api]
    return lambda n: writer(events(n))


# Shapes no event list can say: one dialect's own damage.


def chat_empty_tool_calls(n: int) -> Body:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "task"}]
    for i in range(n):
        messages += [{"role": "assistant", "content": None, "tool_calls": []}, {"role": "user", "content": f"hi {i}"}]
    return {"model": "gpt-4o", "messages": messages}


def chat_null_content(n: int) -> Body:
    # An empty answer stored as content null after every question.
    messages: list[dict[str, Any]] = [{"role": "user", "content": "task"}]
    for i in range(n):
        messages += [{"role": "assistant", "content": None}, {"role": "user", "content": f"hi {i}"}]
    return {"model": "gpt-4o", "messages": messages}


def chat_tool_rounds(n: int, *, model: str = "gpt-4o", ids: bool = True) -> Body:
    # n answered tool rounds; without ids, each tool message lost its tool_call_id.
    evs: list[Event] = [("user", "task")]
    for i in range(n):
        evs += [("calls", [f"call_{i}"], False), ("results", [f"call_{i}"]), ("user", f"go on {i}")]
    body = {**to_chat(evs), "model": model}
    if not ids:
        body["messages"] = [{k: v for k, v in m.items() if k != "tool_call_id"} for m in body["messages"]]
    return body


def chat_system_parts(n: int) -> Body:
    messages: list[dict[str, Any]] = []
    for i in range(n):
        parts = [{"type": "text", "text": f"rule {i}. "}, {"type": "text", "text": "be brief"}]
        messages += [{"role": "system", "content": parts}, {"role": "user", "content": f"hi {i}"}]
    return {"model": "llama-3.3-70b-versatile", "messages": messages}


def anthropic_orphan_server_tool_use(n: int) -> Body:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "task"}]
    for i in range(n):
        use = {"type": "server_tool_use", "id": f"srvtoolu_{i}", "name": "web_search", "input": {"query": "x"}}
        messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": f"more {i}"}]
    return {"model": "claude", "max_tokens": 100, "messages": messages}


def responses_reasoning_orphans(n: int) -> Body:
    # Each turn: reasoning, then a call that never got its output. Dropping the call takes its reasoning.
    items: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": "task"}]
    for i in range(n):
        items += [
            {"type": "reasoning", "id": f"rs_{i}", "summary": []},
            {"type": "function_call", "call_id": f"call_{i}", "name": "run", "arguments": "{}"},
            {"type": "message", "role": "user", "content": f"next {i}"},
        ]
    return {"model": "gpt-5", "input": items}


def responses_dangling_reasoning(n: int) -> Body:
    # Each turn: reasoning with nothing it produced after it, then the next user turn.
    items: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": "task"}]
    for i in range(n):
        items += [
            {"type": "reasoning", "id": f"rs_{i}", "summary": []},
            {"type": "message", "role": "user", "content": f"next {i}"},
        ]
    return {"model": "gpt-5", "input": items}


def responses_item_ids(n: int, *, store: bool = True, duplicated: bool = False) -> Body:
    # Each turn: a gpt-5 call replayed with its fc_ id, and an output carrying its call id as item id;
    # with store false each turn also holds a reasoning item the server cannot look up; duplicated
    # sends every call twice, verbatim.
    items: list[dict[str, Any]] = [{"type": "message", "role": "user", "content": "task"}]
    for i in range(n):
        call = {"type": "function_call", "call_id": f"call_{i}", "name": "run", "arguments": "{}", "id": f"fc_{i}"}
        if not store:
            items.append({"type": "reasoning", "id": f"rs_{i}", "summary": []})
        items += [call, call] if duplicated else [call]
        items += [
            {"type": "function_call_output", "call_id": f"call_{i}", "output": "x", "id": f"call_{i}"},
            {"type": "message", "role": "user", "content": f"next {i}"},
        ]
    return {"model": "gpt-5", "input": items, **({} if store else {"store": False})}


def gemini_reused_ids(n: int) -> Body:
    # Gemini may repeat ids across turns: each response pairs with the nearest open call of that id.
    contents: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": "task"}]}]
    for _ in range(n):
        contents += [
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "run", "id": "call_0", "args": {}}},
                    {"functionCall": {"name": "ls", "id": "call_1", "args": {}}},
                ],
            },
            {"role": "user", "parts": [{"functionResponse": {"name": "run", "id": "call_0", "response": {}}}]},
        ]
    return {"contents": [*contents, {"role": "user", "parts": [{"text": "go on"}]}]}


def gemini_nameless_matching(n: int) -> Body:
    # Id-less calls of 2n distinct tools; the next turn answers n of them, last first, by name.
    calls = [{"functionCall": {"name": f"tool_{i}", "args": {}}} for i in range(2 * n)]
    answers = [{"functionResponse": {"name": f"tool_{i}", "response": {}}} for i in reversed(range(0, 2 * n, 2))]
    return {
        "contents": [
            {"role": "user", "parts": [{"text": "task"}]},
            {"role": "model", "parts": calls},
            {"role": "user", "parts": answers},
        ]
    }


def gemini_big_turn_with_ids(n: int) -> Body:
    calls = [{"functionCall": {"name": "run", "id": f"call_{i}", "args": {}}} for i in range(2 * n)]
    answers = [{"functionResponse": {"name": "run", "id": f"call_{i}", "response": {}}} for i in range(0, 2 * n, 2)]
    return {
        "contents": [
            {"role": "user", "parts": [{"text": "task"}]},
            {"role": "model", "parts": calls},
            {"role": "user", "parts": answers},
        ]
    }


def chat_gemini_3_unsigned(n: int) -> Body:
    # One user turn, then a long tool loop replayed to Gemini 3 without a thought signature anywhere.
    messages: list[dict[str, Any]] = [{"role": "user", "content": "task"}]
    for i in range(n):
        call = {"id": f"call_{i}", "type": "function", "function": {"name": "run", "arguments": "{}"}}
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{i}", "content": "x"},
        ]
    return {"model": "gemini-3-pro-preview", "messages": messages}


def gemini_trailing_orphans(n: int) -> Body:
    # The last turn: responses to calls the history no longer holds, to be kept as text.
    answers = [{"functionResponse": {"name": f"run_{i}", "response": {"output": i}}} for i in range(n)]
    return {
        "contents": [
            {"role": "user", "parts": [{"text": "task"}]},
            {"role": "model", "parts": [{"text": "ok"}]},
            {"role": "user", "parts": answers},
        ]
    }


def _anthropic_rounds(n: int, assistant: Callable[[int], list[dict[str, Any]]], **extra: Any) -> Body:
    # n tool rounds, the assistant message of round i being assistant(i), each answered in full.
    messages: list[dict[str, Any]] = [{"role": "user", "content": "task"}]
    for i in range(n):
        messages += [
            {"role": "assistant", "content": assistant(i)},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "x"}]},
        ]
    return {
        "model": "claude",
        "max_tokens": 100,
        "tools": [{"name": "run", "input_schema": {"type": "object"}}],
        "messages": messages,
        **extra,
    }


_THINK = {"type": "thinking", "thinking": "hmm", "signature": "sig"}


def anthropic_text_after_tool_use(n: int) -> Body:
    return _anthropic_rounds(
        n,
        lambda i: [
            {"type": "tool_use", "id": f"toolu_{i}", "name": "run", "input": {}},
            {"type": "text", "text": "checking"},
        ],
    )


def anthropic_text_before_thinking(n: int) -> Body:
    return _anthropic_rounds(
        n,
        lambda i: [
            {"type": "text", "text": "checking"},
            _THINK,
            {"type": "tool_use", "id": f"toolu_{i}", "name": "run", "input": {}},
        ],
    )


def anthropic_input_as_text(n: int) -> Body:
    return _anthropic_rounds(
        n, lambda i: [{"type": "tool_use", "id": f"toolu_{i}", "name": "run", "input": '{"x": 1}'}]
    )


def anthropic_texts_before_last_round(n: int) -> Body:
    # Thinking on: n assistant text messages, then the last round's thinking turn, which the API merges with them.
    messages: list[dict[str, Any]] = [{"role": "user", "content": "task"}]
    messages += [{"role": "assistant", "content": f"note {i}"} for i in range(n)]
    messages += [
        {"role": "assistant", "content": [_THINK, {"type": "tool_use", "id": "toolu_0", "name": "run", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_0", "content": "x"}]},
    ]
    return {
        "model": "claude",
        "max_tokens": 100,
        "tools": [{"name": "run", "input_schema": {"type": "object"}}],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "messages": messages,
    }


def anthropic_trailing_assistant_run(n: int) -> Body:
    messages = [{"role": "user", "content": "task"}, *({"role": "assistant", "content": f"part {i}"} for i in range(n))]
    return {"model": "claude-sonnet-4-6", "max_tokens": 100, "messages": messages}


@dataclass(frozen=True)
class Shape:
    """A damage pattern in one wire format, bound for one provider, at a size that takes ~10-50 ms."""

    name: str
    api: str
    build: Callable[[int], Body]
    code: str
    """The rule the shape exercises."""
    expected: Callable[[int], int]
    """How many repairs ``code`` makes at size ``n``."""
    n: int
    provider: str | None = None
    policy: Policy = field(default_factory=Policy)

    @property
    def id(self) -> str:
        provider = f"@{self.provider}" if self.provider else ""
        policy = "-drop" if self.policy.orphan_tool_call == "drop" else ""
        policy += "-leave" if self.policy.trailing_tool_call == "leave" else ""
        return f"{self.name}{policy}[{self.api}{provider}]"

    def run(self, body: Body) -> int:
        """Sanitize ``body`` and count the repairs of this shape's rule."""
        result = sanitize(body, api=self.api, policy=self.policy, provider=self.provider)
        return sum(1 for r in result.repairs if r.code == self.code)


def _every_api(
    name: str,
    events: Callable[[int], list[Event]],
    code: str,
    expected: Callable[[int], int],
    n: int,
    apis: tuple[str, ...] = APIS,
    **kw: Any,
) -> list[Shape]:
    return [Shape(name, api, _render(events, api), code, expected, n, **kw) for api in apis]


def _same(n: int) -> int:
    return n


def _one_less(n: int) -> int:
    return n - 1


SHAPES: list[Shape] = [
    *_every_api("orphans-in-one-message", orphans_in_one_message, "TP001", _same, 1000),
    *_every_api("orphan-per-message", orphan_per_message, "TP001", _same, 800),
    *_every_api("orphan-per-message", orphan_per_message, "TP001", _same, 800, policy=DROP),
    *_every_api(
        "orphan-per-message-then-trailing",
        orphan_per_message_then_trailing,
        "TP001",
        _same,
        800,
        apis=("openai-chat", "anthropic-messages"),
        policy=LEAVE,
    ),
    *_every_api(
        "orphan-per-message-some-thinking",
        orphan_per_message_some_thinking,
        "TP001",
        _same,
        800,
        apis=("anthropic-messages", "openai-responses", "bedrock-converse"),
        policy=DROP,
    ),
    # The last call's result is brought back by interposed-message: its user turn is all that separates them.
    *_every_api("misplaced-results", misplaced_results, "TP003", _one_less, 600),
    *_every_api("misplaced-results-one-each", misplaced_results_one_each, "TP003", _one_less, 800),
    *_every_api("orphan-results", orphan_results, "TP004", _same, 800),
    *_every_api("duplicate-results", duplicate_results, "TP005", _same, 600),
    *_every_api("duplicates-in-one-message", duplicates_in_one_message, "TP005", _same, 1500),
    *_every_api(
        "reused-ids",
        reused_ids,
        "TP006",
        _same,
        600,
        apis=("openai-chat", "anthropic-messages", "openai-responses", "bedrock-converse"),
    ),
    *_every_api("interposed", interposed, "TP002", _same, 1000),
    *_every_api("interposed-per-call", interposed_per_call, "TP002", _same, 300),
    *_every_api("invalid-ids", invalid_ids, "AN004", _same, 400, apis=("anthropic-messages", "bedrock-converse")),
    *[
        Shape("invalid-ids", "openai-chat", _render(invalid_ids, "openai-chat"), "PV001", _same, 400, provider=p)
        for p in ("mistral", "anthropic", "bedrock")
    ],
    Shape(
        "invalid-ids",
        "anthropic-messages",
        _render(invalid_ids, "anthropic-messages"),
        "PV001",
        _same,
        400,
        provider="mistral",
    ),
    *_every_api("blank-text", blank_text, "AN002", _same, 800, apis=("anthropic-messages", "bedrock-converse")),
    Shape("blank-text", "openai-chat", _render(blank_text, "openai-chat"), "AN002", _same, 1600, provider="bedrock"),
    Shape("user-run", "bedrock-converse", _render(user_run, "bedrock-converse"), "BR002", _same, 800),
    Shape(
        "user-run",
        "anthropic-messages",
        _render(user_run, "anthropic-messages"),
        "BR002",
        _same,
        800,
        provider="mistral",
    ),
    Shape("user-run", "openai-chat", _render(user_run, "openai-chat"), "PV003", _same, 1600, provider="bedrock"),
    Shape("model-run", "gemini", _render(model_run, "gemini"), "GM001", _same, 1500),
    Shape("model-run", "openai-chat", _render(model_run, "openai-chat"), "PV003", _same, 1500, provider="gemini"),
    Shape("empty-tool-calls", "openai-chat", chat_empty_tool_calls, "OA001", _same, 1500),
    Shape("null-content", "openai-chat", chat_null_content, "OA002", _same, 1500),
    Shape("results-without-ids", "openai-chat", lambda n: chat_tool_rounds(n, ids=False), "OA003", _same, 800),
    Shape(
        "user-run",
        "openai-chat",
        lambda n: {**to_chat(user_run(n)), "model": "deepseek-reasoner"},
        "PV004",
        _same,
        1600,
        provider="deepseek",
    ),
    Shape("user-run", "openai-chat", _render(user_run, "openai-chat"), "PV005", _same, 1600, provider="vllm"),
    Shape(
        "reasoning-missing",
        "openai-chat",
        lambda n: chat_tool_rounds(n, model="deepseek-reasoner"),
        "PV007",
        _same,
        800,
        provider="deepseek",
    ),
    Shape("system-parts", "openai-chat", chat_system_parts, "PV008", _same, 1500, provider="groq"),
    Shape("orphan-server-tool-use", "anthropic-messages", anthropic_orphan_server_tool_use, "AN005", _same, 1000),
    Shape("reasoning-orphans", "openai-responses", responses_reasoning_orphans, "TP001", _same, 800, policy=DROP),
    Shape("reasoning-orphans", "openai-responses", responses_reasoning_orphans, "TP001", _same, 800),
    Shape("reused-ids", "gemini", gemini_reused_ids, "TP001", _same, 500),
    Shape("dangling-reasoning", "openai-responses", responses_dangling_reasoning, "RS001", _same, 800),
    Shape("foreign-output-ids", "openai-responses", responses_item_ids, "RS002", _same, 600),
    Shape("call-ids-without-reasoning", "openai-responses", responses_item_ids, "RS003", _same, 600),
    Shape("unstored-reasoning", "openai-responses", lambda n: responses_item_ids(n, store=False), "RS004", _same, 600),
    Shape(
        "duplicate-item-ids", "openai-responses", lambda n: responses_item_ids(n, duplicated=True), "RS005", _same, 500
    ),
    Shape("nameless-matching", "gemini", gemini_nameless_matching, "TP001", _same, 800),
    Shape("big-turn-with-ids", "gemini", gemini_big_turn_with_ids, "TP001", _same, 800),
    Shape("unsigned-calls", "openai-chat", chat_gemini_3_unsigned, "GM003", _same, 1500, provider="gemini"),
    Shape(
        "trailing-orphans",
        "gemini",
        gemini_trailing_orphans,
        "GM004",
        _same,
        1500,
        policy=Policy(orphan_tool_result="drop"),
    ),
    Shape("text-after-tool-use", "anthropic-messages", anthropic_text_after_tool_use, "AN010", _same, 800),
    Shape("text-before-thinking", "anthropic-messages", anthropic_text_before_thinking, "AN011", _same, 800),
    Shape("texts-before-last-round", "anthropic-messages", anthropic_texts_before_last_round, "AN011", _same, 1500),
    Shape("input-as-text", "anthropic-messages", anthropic_input_as_text, "AN012", _same, 800),
    Shape("trailing-assistant-run", "anthropic-messages", anthropic_trailing_assistant_run, "AN009", _same, 1500),
]


@dataclass(frozen=True)
class Check:
    """A body for ``validate`` (what the proxy's strict mode runs) and the violations it must report."""

    name: str
    api: str
    provider: str | None
    build: Callable[[int], Body]
    rule: str
    expected: Callable[[int], int]
    """How many violations of ``rule`` ``validate`` reports at size ``n``."""
    n: int

    @property
    def id(self) -> str:
        return f"{self.name}[{self.api}@{self.provider}]"

    def run(self, body: Body) -> int:
        return sum(1 for v in validate(body, api=self.api, provider=self.provider) if v.rule == self.rule)


def anthropic_text_between_calls(n: int) -> Body:
    # One assistant turn alternating tool_use and text: every call is cut off from its result.
    blocks: list[dict[str, Any]] = []
    for i in range(n):
        blocks += [
            {"type": "tool_use", "id": f"toolu_{i}", "name": "run", "input": {}},
            {"type": "text", "text": "and"},
        ]
    results = [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "x"} for i in range(n)]
    return {
        "model": "claude",
        "max_tokens": 10,
        "tools": [{"name": "run", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": blocks},
            {"role": "user", "content": results},
        ],
    }


def chat_unknown_results(n: int) -> Body:
    # One call, then a long run of tool messages answering ids it never made.
    call = {"id": "call_0", "type": "function", "function": {"name": "run", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_0", "content": "x"},
    ]
    messages += [{"role": "tool", "tool_call_id": f"ghost_{i}", "content": "x"} for i in range(n)]
    return {"model": "deepseek-chat", "messages": [*messages, {"role": "user", "content": "go on"}]}


CHECKS: list[Check] = [
    Check(
        "text-between-calls",
        "anthropic-messages",
        "anthropic",
        anthropic_text_between_calls,
        "anthropic.A1",
        lambda n: 1,
        3000,
    ),
    Check("unknown-results", "openai-chat", "deepseek", chat_unknown_results, "deepseek.D1", lambda n: 1, 3000),
    Check("unknown-results", "openai-chat", "openai", chat_unknown_results, "openai.O3", _same, 1500),
    Check(
        "orphan-per-message",
        "openai-chat",
        "openai",
        _render(orphan_per_message, "openai-chat"),
        "openai.O1",
        _same,
        1000,
    ),
    Check(
        "orphan-per-message",
        "anthropic-messages",
        "anthropic",
        _render(orphan_per_message, "anthropic-messages"),
        "anthropic.A1",
        _same,
        600,
    ),
    Check(
        "orphan-per-message",
        "openai-responses",
        "openai",
        _render(orphan_per_message, "openai-responses"),
        "responses.R1",
        _same,
        1000,
    ),
    Check("orphan-per-message", "gemini", "gemini", _render(orphan_per_message, "gemini"), "gemini.G3", _same, 1000),
    Check(
        "orphan-per-message",
        "bedrock-converse",
        "bedrock",
        _render(orphan_per_message, "bedrock-converse"),
        "bedrock.B1",
        _same,
        1000,
    ),
    Check(
        "orphan-per-message",
        "openai-chat",
        "mistral",
        _render(orphan_per_message, "openai-chat"),
        "mistral.M2",
        _same,
        1000,
    ),
    Check(
        "orphan-per-message",
        "openai-chat",
        "anthropic-openai-compat",
        _render(orphan_per_message, "openai-chat"),
        "anthropic.A1",
        _same,
        500,
    ),
    Check(
        "orphan-per-message",
        "openai-chat",
        "gemini-openai-compat",
        _render(orphan_per_message, "openai-chat"),
        "gemini.G3",
        _same,
        1000,
    ),
    Check("unsigned-calls", "openai-chat", "gemini-openai-compat", chat_gemini_3_unsigned, "gemini.G4", _same, 1500),
]
