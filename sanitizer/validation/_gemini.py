"""Gemini ``generateContent`` rules (catalogue section 4).

Check order: G6 (no contents), G5 (a content without parts, in body order), then turn order in
body order: G1 (function-call turn not after a user or function-response turn), G2
(function-response turn not after a function-call turn), G3 (response count differs from the
call count, reported on the call turn, also when the call turn is followed by anything but a
function-response turn), then G7 (trailing model turn).

A "user turn" is any content with role ``user`` (or no role); a function-response turn is a
user (or ``function``) content holding ``functionResponse`` parts; a function-call turn is a
``model`` content holding ``functionCall`` parts.

G7 is [infer]: its text comes from third-party documentation. Not checked: G4
(``thoughtSignature`` is required only on Gemini 3 with thinking, and the model is named in the
URL, not the body); empty text parts on the native API (the native error text is unknown; the
OpenAI-compatible text is used for ``gemini-openai-compat``).
"""

from __future__ import annotations

from typing import Any

from ._envelope import violation
from ._shape import as_dict, as_list, as_str, body_dict
from ._violation import Violation

G1 = "Please ensure that function call turn comes immediately after a user turn or after a function response turn."
G2 = "Please ensure that function response turn comes immediately after a function call turn."
G3 = (
    "Please ensure that the number of function response parts is equal to the number of function call "
    "parts of the function call turn."
)
G5 = "* GenerateContentRequest.contents[{n}].parts: contents.parts must not be empty.\n"
G6 = "* GenerateContentRequest.contents: contents is not specified\n"
G7 = "Requests ending with a model turn are not supported"


def contents_of(body: object) -> list[dict[str, Any]]:
    b = body_dict(body)
    raw = b.get("contents")
    if raw is None:
        return []
    contents: list[dict[str, Any]] = []
    for i, item in enumerate(as_list(raw, "contents")):
        c = as_dict(item, f"contents[{i}]")
        if "role" in c:
            as_str(c["role"], f"contents[{i}].role")
        for k, part in enumerate(as_list(c.get("parts", []), f"contents[{i}].parts")):
            as_dict(part, f"contents[{i}].parts[{k}]")
        contents.append(c)
    return contents


def validate_gemini(body: object, provider: str = "gemini") -> list[Violation]:
    """Gemini's rules for a native ``generateContent`` body."""
    return check_contents(contents_of(body), provider, None)


def check_contents(contents: list[dict[str, Any]], provider: str, index_map: list[int] | None) -> list[Violation]:
    def at(i: int) -> int:
        return index_map[i] if index_map is not None else i

    if not contents:
        return [violation(provider, "gemini.G6", G6, None)]
    out: list[Violation] = []
    for i, c in enumerate(contents):
        if not c.get("parts"):
            out.append(violation(provider, "gemini.G5", G5.format(n=i), at(i)))
    calls = [_count(c, "model", "functionCall") for c in contents]
    responses = [_count(c, "user", "functionResponse") for c in contents]
    roles = [_role(c) for c in contents]
    for i in range(len(contents)):
        if calls[i]:
            if i == 0 or roles[i - 1] not in ("user", "function"):
                out.append(violation(provider, "gemini.G1", G1, at(i)))
            if i + 1 < len(contents) and responses[i + 1] != calls[i]:
                out.append(violation(provider, "gemini.G3", G3, at(i)))
        if responses[i] and (i == 0 or not calls[i - 1]):
            out.append(violation(provider, "gemini.G2", G2, at(i)))
    if roles[-1] == "model":
        out.append(violation(provider, "gemini.G7", G7, at(len(contents) - 1)))
    return out


def _role(content: dict[str, Any]) -> str:
    role = content.get("role") or "user"
    return str(role)


def _count(content: dict[str, Any], role: str, key: str) -> int:
    actual = _role(content)
    if actual != role and not (role == "user" and actual == "function"):
        return 0
    # The API reads proto JSON: a field may be spelt in camelCase or snake_case (LiteLLM sends the latter).
    snake = _SNAKE[key]
    return sum(1 for part in content.get("parts") or () if key in part or snake in part)


_SNAKE = {"functionCall": "function_call", "functionResponse": "function_response"}
