"""OpenAI Responses rules (catalogue section 3).

Check order: first each item's shape, in body order: R10 (an item ``id`` OpenAI cannot take:
empty, or with characters other than letters, digits, ``_`` and ``-``), else R12 (an id without
the prefix OpenAI gives that kind of item: ``msg``, ``fc``, ``rs``), else, on Azure, R11 (a
reasoning item without an ``id``, which OpenAI takes with its encrypted content and Azure does
not); R7 (an empty ``call_id``), R9 (a reasoning item without ``summary``, which OpenAI requires
even when empty), R14 (a call with an empty ``name``), R13 (a ``tool_search_call`` whose
``arguments`` are text, not an object). Then R6 (duplicate item ``id``, at the second
occurrence), R5 (with ``store: false``, items only the server's store could resolve: reasoning
without ``encrypted_content`` and ``item_reference`` items; HTTP 404, 400 on Azure), then the
pairing and reasoning checks
sorted by item index: R2 (an output whose call is not earlier in the input), R1 (a call with no
output after it), R3 (a reasoning item not followed by the item it produced), R4 (a function
call replayed with its ``fc_`` item id but without its reasoning item).

R9 to R14 are not in the catalogue. R9: AAswordman/Operit#797 (OpenAI),
microsoft/agent-framework-go#783 (Azure), GizClaw/flowcraft PR#528. R10:
microsoft/agent-framework-go#783 (Azure), anomalyco/opencode#25065, stacklok/mecatl#406. R11:
openai/codex#3451 (Azure; OpenAI takes it: openai/codex PR#3528). R12:
openai/openai-agents-python#2293, openai/openai-cs-agents-demo#34 (the Agents SDK's
``__fake_id__``). R13, R14: Wei-Shaw/sub2api#3818.

R1 and R2 match by ``call_id``, as OpenAI does, not by position. An output that carries an item
``id`` which is not an output item id (``fco_...``, ``ctco_...``; a client that copied the call id
there) is not counted as the call's output: its call gets R1 (at the output when the call lives in
the ``previous_response_id`` chain). With ``previous_response_id``, a ``conversation`` or an
``item_reference`` the calls may live on the server, so R2 and R4 are not checked then. A
string ``input`` has no items to check.

R3 also covers a stored reasoning item (an ``id`` and no ``encrypted_content``) followed by an
item without an ``id``: the server pairs the reasoning with the very item it produced, by id
(openai/openai-node#1567; langchain-ai/langchainjs PR#9082). R4 is known only to the server
(which items were produced with reasoning); it is inferred for reasoning models (o-series,
``gpt-5``, ``codex``), which produce a reasoning item before every call: an ``fc_`` call (or a
``msg_`` answer) with no reasoning item since the last user, system or developer message; or one
that opens a response after tool outputs with a reasoning item right after it, which a client
stored out of order (openai/codex#33044). The server names the reasoning item it expected: in the
second case the text names that one; otherwise its id is not in the request, and the text shows
``rs_…`` in its place.

vLLM (``/v1/responses``) checks none of OpenAI's rules: it keeps no ids, pairs no reasoning and
stores nothing unless started with ``VLLM_ENABLE_RESPONSES_API_STORE=1``. Its one known refusal of
a transcript is VR1, on its Harmony path (gpt-oss models): a ``function_call_output`` whose
``call_id`` names no ``function_call`` earlier in ``input`` (langchain-ai/langchain#32885, a
LangGraph agent against gpt-oss-120b on vLLM). The text ends in `` None``: vLLM answered a
``ValueError`` as ``f"{e} {e.__cause__}"``. With ``previous_response_id`` the call may be in the
stored response, so VR1 is not checked then. Other models go through the chat template, whose
refusals of an orphan output are not known.

Not checked: R8 ([single], reported through LiteLLM; native OpenAI accepts ``status`` on replayed
items). R1/R2 cover ``function_call`` and ``custom_tool_call`` with their outputs; other call
types (local shell, computer use) have no known wording.
"""

from __future__ import annotations

from typing import Any

from ..dialects.openai_responses import (
    ID_PREFIX,
    PRODUCED,
    foreign_output_id,
    stored_reasoning,
    valid_item_id,
)
from ..dialects.openai_responses import reasoning_model as is_reasoning_model
from ._envelope import violation
from ._shape import as_dict, as_list, as_str, body_dict
from ._violation import Violation

R1 = "No tool output found for {what} {id}."
R2 = "No tool call found for {what} output with call_id {id}."
R3 = "Item '{id}' of type 'reasoning' was provided without its required following item."
R4 = "Item '{id}' of type '{type}' was provided without its required 'reasoning' item: '{reasoning}'."
R5 = (
    "Item with id '{id}' not found. Items are not persisted when `store` is set to false. "
    "Try again with `store` set to true, or remove this item from your input."
)
R6 = "Duplicate item found with id {id}. Remove duplicate items from your input and try again."
R7 = (
    "Invalid 'input[{n}].call_id': empty string. "
    "Expected a string with minimum length 1, but got an empty string instead."
)
R9 = "Missing required parameter: 'input[{n}].summary'."
R11 = "Missing required parameter: 'input[{n}].id'."
R10 = (
    "Invalid 'input[{n}].id': '{id}'. Expected an ID that contains letters, numbers, underscores, or dashes, "
    "but this value contained additional characters."
)
R12 = "Invalid 'input[{n}].id': '{id}'. Expected an ID that begins with '{prefix}'."
# A tool_search_call replayed with its arguments as their JSON text: the one item whose arguments
# OpenAI takes only as an object (Wei-Shaw/sub2api#3818: Codex desktop through a relay that
# stringified them; a function_call's are text).
R13 = "Invalid type for 'input[{n}].arguments': expected an object, but got a string instead."
# A call replayed with an empty name (Wei-Shaw/sub2api#3818, in a comment: a relay's conversion).
R14 = (
    "Invalid 'input[{n}].name': empty string. Expected a string with minimum length 1, but got an empty string instead."
)

# vLLM's Harmony input parser, finding no earlier function_call for an output's call_id; the
# trailing "None" is the exception's __cause__, which vLLM appended to the text.
VR1 = "No call message found for {id} None"

_CALLS = {"function_call": "function call", "custom_tool_call": "custom tool call"}
_OUTPUTS = {"function_call_output": "function_call", "custom_tool_call_output": "custom_tool_call"}
# Messages that open a new exchange: a reasoning item after one belongs to a later response.
_TURN_ROLES = frozenset({"user", "system", "developer"})


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
    if provider == "vllm":
        return _validate_vllm(b, items)

    out: list[Violation] = []
    for n, (kind, d) in enumerate(items):
        ident = d.get("id")
        if isinstance(ident, str) and not valid_item_id(ident):
            text = R10.format(n=n, id=ident)
            out.append(violation(provider, "responses.R10", text, n, param=f"input[{n}].id", code="invalid_value"))
        elif isinstance(ident, str) and kind in ID_PREFIX and not ident.startswith(ID_PREFIX[kind]):
            text = R12.format(n=n, id=ident, prefix=ID_PREFIX[kind])
            out.append(violation(provider, "responses.R12", text, n, param=f"input[{n}].id", code="invalid_value"))
        elif kind == "reasoning" and ident is None and provider == "azure":
            param = f"input[{n}].id"
            out.append(
                violation(provider, "responses.R11", R11.format(n=n), n, param=param, code="missing_required_parameter")
            )
        if (kind in _CALLS or kind in _OUTPUTS) and d["call_id"] == "":
            param = f"input[{n}].call_id"
            out.append(violation(provider, "responses.R7", R7.format(n=n), n, param=param, code="empty_string"))
        if kind == "reasoning" and "summary" not in d:
            param = f"input[{n}].summary"
            out.append(
                violation(provider, "responses.R9", R9.format(n=n), n, param=param, code="missing_required_parameter")
            )
        if kind in _CALLS and d.get("name") == "":
            param = f"input[{n}].name"
            out.append(violation(provider, "responses.R14", R14.format(n=n), n, param=param, code="empty_string"))
        if kind == "tool_search_call" and isinstance(d.get("arguments"), str):
            param = f"input[{n}].arguments"
            out.append(violation(provider, "responses.R13", R13.format(n=n), n, param=param, code="invalid_type"))
    seen: set[str] = set()
    for n, (_, d) in enumerate(items):
        ident = d.get("id")
        if isinstance(ident, str) and ident:
            if ident in seen:
                out.append(violation(provider, "responses.R6", R6.format(id=ident), n, param="input", code=None))
            seen.add(ident)

    if b.get("store") is False:
        for n, (kind, d) in enumerate(items):
            ident = d.get("id")
            if isinstance(ident, str) and ident and (kind == "item_reference" or stored_reasoning(d)):
                text = R5.format(id=ident)
                # OpenAI answers 404 (not found); Azure 400 (earendil-works/pi#6409).
                status = 400 if provider == "azure" else 404
                out.append(violation(provider, "responses.R5", text, n, status=status, param="input", code=None))

    # Earlier items may live on the server: the stored chain, or a conversation.
    # An item_reference brings in a stored item (a call, say) whose call_id the body does not show.
    chained = (
        b.get("previous_response_id") is not None
        or b.get("conversation") is not None
        or any(kind == "item_reference" for kind, _ in items)
    )
    model = b.get("model")
    reasoning_model = is_reasoning_model(model)
    ordered: list[Violation] = []
    calls: dict[str, int] = {}
    answered: set[str] = set()
    reasoned = fresh = False
    # The reasoning item of the current response, and whether a call came after it (nothing else).
    reasoning_at: int | None = None
    called = False
    for n, (kind, d) in enumerate(items):
        if kind != "reasoning" and kind not in _CALLS and not (kind == "message" and d.get("role") == "assistant"):
            reasoning_at, called = None, False
        if kind in _CALLS:
            called = reasoning_at is not None
            calls.setdefault(d["call_id"], n)
            ident = d.get("id")
            if (
                reasoning_model
                and not chained
                and (not reasoned or (fresh and _reasoning_after(items, n) != "rs_…"))
                and kind == "function_call"
                and isinstance(ident, str)
                and ident.startswith("fc_")
            ):
                text = R4.format(id=ident, type=kind, reasoning=_reasoning_after(items, n))
                ordered.append(violation(provider, "responses.R4", text, n, param="input", code=None))
        elif kind in _OUTPUTS:
            call_id = d["call_id"]
            counted = not foreign_output_id(d)
            if call_id in calls and items[calls[call_id]][0] == _OUTPUTS[kind]:
                if counted:
                    answered.add(call_id)
            elif not counted and chained and call_id:
                # The call is in the stored chain, and this output does not answer it.
                text = R1.format(what=_CALLS[_OUTPUTS[kind]], id=call_id)
                ordered.append(violation(provider, "responses.R1", text, n, param="input", code=None))
            elif not chained and call_id:
                text = R2.format(what=_CALLS[_OUTPUTS[kind]], id=call_id)
                ordered.append(violation(provider, "responses.R2", text, n, param="input", code=None))
            # The model's next items come from a new response: one whose reasoning the client put
            # after it (the next item) was stored out of order.
            fresh = True
        elif kind == "reasoning":
            reasoned, fresh = True, False
            reasoning_at, called = n, False
            following = items[n + 1] if n + 1 < len(items) else None
            ident = d.get("id")
            if isinstance(ident, str) and ident and not _follows(d, following):
                ordered.append(violation(provider, "responses.R3", R3.format(id=ident), n, param="input", code=None))
        elif kind == "message" and isinstance(d.get("role"), str) and d["role"] in _TURN_ROLES:
            reasoned = fresh = False
        elif (
            kind == "message"
            and d.get("role") == "assistant"
            and reasoning_model
            and not chained
            and (not reasoned or (fresh and _reasoning_after(items, n) != "rs_…"))
        ):
            # A reasoning model's answer replayed with its msg_ id but not the reasoning before it
            # (continuedev/continue#11466): the server links the two as it does a call's.
            ident = d.get("id")
            if isinstance(ident, str) and ident.startswith("msg_"):
                text = R4.format(id=ident, type=kind, reasoning=_reasoning_after(items, n))
                ordered.append(violation(provider, "responses.R4", text, n, param="input", code=None))
        elif (
            kind == "message"
            and d.get("role") == "assistant"
            and reasoning_model
            and not chained
            and called
            and isinstance(d.get("id"), str)
            and d["id"].startswith("msg_")
        ):
            # An answer put after the calls of its own response (continuedev/continue#11994): the
            # reasoning before it is not the one right before it, where the server looks.
            assert reasoning_at is not None
            named = items[reasoning_at][1].get("id")
            reasoning = named if isinstance(named, str) and named else "rs_…"
            text = R4.format(id=d["id"], type=kind, reasoning=reasoning)
            ordered.append(violation(provider, "responses.R4", text, n, param="input", code=None))
    for call_id, n in calls.items():
        if call_id and call_id not in answered:
            text = R1.format(what=_CALLS[items[n][0]], id=call_id)
            ordered.append(violation(provider, "responses.R1", text, n, param="input", code=None))
    ordered.sort(key=lambda v: v.message_index or 0)
    return out + ordered


def _validate_vllm(b: dict[str, Any], items: list[tuple[str, dict[str, Any]]]) -> list[Violation]:
    """vLLM's Harmony path (gpt-oss): an output must follow its call in ``input`` (VR1)."""
    model = b.get("model")
    if not (isinstance(model, str) and "gpt-oss" in model.lower()) or b.get("previous_response_id") is not None:
        return []
    calls: set[str] = set()
    for n, (kind, d) in enumerate(items):
        if kind == "function_call":
            calls.add(d["call_id"])
        elif kind == "function_call_output" and d["call_id"] not in calls:
            # The parser stops at the first output it cannot place: one error per request.
            return [violation("vllm", "vllm.VR1", VR1.format(id=d["call_id"]), n)]
    return []


def _reasoning_after(items: list[tuple[str, dict[str, Any]]], n: int) -> str:
    """The reasoning item the server names for item ``n``: the one right after it, when the client
    put the two out of order (openai/codex#33044); else one the request does not hold."""
    if n + 1 < len(items) and items[n + 1][0] == "reasoning":
        ident = items[n + 1][1].get("id")
        if isinstance(ident, str) and ident:
            return ident
    return "rs_…"


def _follows(reasoning: dict[str, Any], item: tuple[str, dict[str, Any]] | None) -> bool:
    """Whether ``item`` can be what ``reasoning`` produced.

    A stored reasoning item is paired with its item by id, so an item without one does not do.
    """
    if item is None:
        return False
    kind, d = item
    if kind == "item_reference":
        return True
    if not _produced(item):
        return False
    ident = d.get("id")
    return (isinstance(ident, str) and bool(ident)) or not stored_reasoning(reasoning)


def _produced(item: tuple[str, dict[str, Any]] | None) -> bool:
    if item is None:
        return False
    kind, d = item
    return kind in PRODUCED or (kind == "message" and d.get("role") == "assistant")
