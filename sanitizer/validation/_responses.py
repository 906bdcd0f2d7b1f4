"""OpenAI Responses rules (catalogue section 3).

Check order: R7 (empty ``call_id``, in body order), R6 (duplicate item ``id``, at the second
occurrence), then the pairing and reasoning checks sorted by item index: R2 (an output whose
call is not earlier in the input), R1 (a call with no output after it), R3 (a reasoning item not
followed by an item the model produced).

R1 and R2 match by ``call_id``, as OpenAI does, not by position. With ``previous_response_id``
the calls may live in the stored chain, so R2 is not checked then. A string ``input`` has no
items to check.

Not checked: R4 (which items were produced with reasoning is known only to the server), R5
(needs the server's store), R8 ([single], reported through LiteLLM; native OpenAI accepts
``status`` on replayed items). R1/R2 cover ``function_call`` and ``custom_tool_call`` with their
outputs; other call types (local shell, computer use) have no known wording.
"""

from __future__ import annotations

from typing import Any

from ._envelope import violation
from ._shape import as_dict, as_list, as_str, body_dict
from ._violation import Violation

R1 = "No tool output found for {what} {id}."
R2 = "No tool call found for {what} output with call_id {id}."
R3 = "Item '{id}' of type 'reasoning' was provided without its required following item."
R6 = "Duplicate item found with id {id}. Remove duplicate items from your input and try again."
R7 = (
    "Invalid 'input[{n}].call_id': empty string. "
    "Expected a string with minimum length 1, but got an empty string instead."
)

_CALLS = {"function_call": "function call", "custom_tool_call": "custom tool call"}
_OUTPUTS = {"function_call_output": "function_call", "custom_tool_call_output": "custom_tool_call"}
# Items the model produces, which a reasoning item may precede.
_PRODUCED = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "shell_call",
        "apply_patch_call",
        "computer_call",
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "tool_search_call",
    }
)


def validate_responses(body: object, provider: str) -> list[Violation]:
    """The Responses API's rules for ``input``."""
    b = body_dict(body)
    raw = b.get("input")
    if raw is None or isinstance(raw, str):
        return []
    items: list[tuple[str, dict[str, Any]]] = []
    for n, item in enumerate(as_list(raw, "input")):
        d = as_dict(item, f"input[{n}]")
        kind = d.get("type", "message")
        kind = as_str(kind, f"input[{n}].type")
        if kind in _CALLS or kind in _OUTPUTS:
            as_str(d.get("call_id"), f"input[{n}].call_id")
        if "id" in d and d["id"] is not None:
            as_str(d["id"], f"input[{n}].id")
        items.append((kind, d))

    out: list[Violation] = []
    for n, (kind, d) in enumerate(items):
        if (kind in _CALLS or kind in _OUTPUTS) and d["call_id"] == "":
            param = f"input[{n}].call_id"
            out.append(violation(provider, "responses.R7", R7.format(n=n), n, param=param, code="empty_string"))
    seen: set[str] = set()
    for n, (_, d) in enumerate(items):
        ident = d.get("id")
        if isinstance(ident, str) and ident:
            if ident in seen:
                out.append(violation(provider, "responses.R6", R6.format(id=ident), n, param="input", code=None))
            seen.add(ident)

    chained = b.get("previous_response_id") is not None
    ordered: list[Violation] = []
    calls: dict[str, int] = {}
    answered: set[str] = set()
    for n, (kind, d) in enumerate(items):
        if kind in _CALLS:
            calls.setdefault(d["call_id"], n)
        elif kind in _OUTPUTS:
            call_id = d["call_id"]
            if call_id in calls and items[calls[call_id]][0] == _OUTPUTS[kind]:
                answered.add(call_id)
            elif not chained and call_id:
                text = R2.format(what=_CALLS[_OUTPUTS[kind]], id=call_id)
                ordered.append(violation(provider, "responses.R2", text, n, param="input", code=None))
        elif kind == "reasoning":
            following = items[n + 1] if n + 1 < len(items) else None
            ident = d.get("id")
            if isinstance(ident, str) and ident and not _produced(following):
                ordered.append(violation(provider, "responses.R3", R3.format(id=ident), n, param="input", code=None))
    for call_id, n in calls.items():
        if call_id and call_id not in answered:
            text = R1.format(what=_CALLS[items[n][0]], id=call_id)
            ordered.append(violation(provider, "responses.R1", text, n, param="input", code=None))
    ordered.sort(key=lambda v: v.message_index or 0)
    return out + ordered


def _produced(item: tuple[str, dict[str, Any]] | None) -> bool:
    if item is None:
        return False
    kind, d = item
    return kind in _PRODUCED or (kind == "message" and d.get("role") == "assistant")
