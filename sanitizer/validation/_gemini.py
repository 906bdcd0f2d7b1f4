"""Gemini ``generateContent`` rules (catalogue section 4).

Check order: G6 (no contents), G5 (a content without parts, in body order), then turn order in
body order: G1 (function-call turn not after a user or function-response turn), G2
(function-response turn not after a function-call turn), G3 (response count differs from the
call count, reported on the call turn, also when the call turn is followed by anything but a
function-response turn), then G7 (trailing model turn).

A "user turn" is any content with role ``user`` (or no role); a function-response turn is a
user (or ``function``) content holding ``functionResponse`` parts; a function-call turn is a
``model`` content holding ``functionCall`` parts.

G4 (a replayed function call without its ``thoughtSignature``) is checked last, after the
request's own shape and turn order, and only for a model that enforces it: Gemini 3 and later,
except the image models (Google's thought-signature docs). A native body does not name its model
(the URL does), so G4 is checked only when ``validate`` is given ``model``. Google validates the
current turn only, the steps after the latest user content that holds more than function
responses, and in each step the first ``functionCall`` part; ``position`` in the text is the
step's index in the body as sent.

Providers: ``gemini`` (the Gemini API) and ``vertex`` (Vertex AI), which words G5 its own way
(epam/ai-dial-adapter-vertexai PR#164, genkit-ai/genkit#3690) and answers in the same Google
envelope; its texts for G6 and G4 are not in the catalogue, so the Gemini API's are used.

G7 is [infer]: its text comes from third-party documentation. Not checked: empty text parts on
the native API (the native error text is unknown; the OpenAI-compatible text is used for
``gemini-openai-compat``).
"""

from __future__ import annotations

import re
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
G4 = (
    "Function call is missing a thought_signature in functionCall parts. This is required for tools to work "
    "correctly, and missing thought_signature may lead to degraded model performance. Additional data, function "
    "call `default_api:{name}` , position {k}. Please refer to "
    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)
G5_VERTEX = (
    "Unable to submit request because it must include at least one parts field, which describes the prompt "
    "input. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini"
)
# functionResponse.response is a protobuf Struct: an object (microsoft/vscode-copilot-release#14113,
# an MCP tool's content list sent as it came). The path is proto's, snake_case whatever the body's.
RESPONSE_LIST = (
    "Invalid JSON payload received. Unknown name \"response\" at 'contents[{n}].parts[{m}].function_response': "
    "Proto field is not repeating, cannot start list."
)
# Gemini 3 and later enforce thought signatures on function calls; the image models do not.
_MODEL_GENERATION = re.compile(r"(?:^|/)gemini-(\d+)(?:\.\d+)?(?:-|$)")


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


def signature_required(model: object) -> bool:
    """Whether ``model`` rejects a replayed function call without its thought signature (G4)."""
    if not isinstance(model, str):
        return False
    found = _MODEL_GENERATION.search(model)
    return found is not None and int(found.group(1)) >= 3 and "-image" not in model


def validate_gemini(body: object, provider: str = "gemini", model: str | None = None) -> list[Violation]:
    """Gemini's rules for a native ``generateContent`` body bound for ``model`` (named in the URL)."""
    contents = contents_of(body)
    # A payload the API cannot read as its proto is refused before any rule about turns.
    malformed = [
        violation("gemini", "gemini.response-not-object", RESPONSE_LIST.format(n=i, m=k), i)
        for i, c in enumerate(contents)
        for k, part in enumerate(c.get("parts") or ())
        if isinstance(answer := _answer(part), dict) and isinstance(answer.get("response"), list)
    ]
    return malformed or check_contents(contents, provider, None, model)


def _answer(part: dict[str, Any]) -> Any:
    return part.get("functionResponse", part.get("function_response"))


def check_contents(
    contents: list[dict[str, Any]], provider: str, index_map: list[int] | None, model: object = None
) -> list[Violation]:
    def at(i: int) -> int:
        return index_map[i] if index_map is not None else i

    # Vertex answers in the Gemini API's envelope; only some of its texts differ.
    vertex = provider == "vertex"
    if vertex:
        provider = "gemini"
    if not contents:
        return [violation(provider, "gemini.G6", G6, None)]
    out: list[Violation] = []
    for i, c in enumerate(contents):
        if not c.get("parts"):
            out.append(violation(provider, "gemini.G5", G5_VERTEX if vertex else G5.format(n=i), at(i)))
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
    if signature_required(model):
        for i, name in _unsigned(contents):
            out.append(violation(provider, "gemini.G4", G4.format(name=name, k=at(i)), at(i)))
    return out


def _unsigned(contents: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """The steps of the current turn whose first function call has no signature: (index, name)."""
    # The current turn starts at the latest user content that holds more than function responses.
    start = -1
    for i in range(len(contents) - 1, -1, -1):
        if _role(contents[i]) != "model" and any(
            not ("functionResponse" in p or "function_response" in p) for p in contents[i].get("parts") or ()
        ):
            start = i
            break
    found = []
    for i in range(start + 1, len(contents)):
        if _role(contents[i]) != "model":
            continue
        first = next((p for p in contents[i].get("parts") or () if "functionCall" in p or "function_call" in p), None)
        if first is None or _signed(first):
            continue
        call = first.get("functionCall", first.get("function_call"))
        name = call.get("name") if isinstance(call, dict) else None
        found.append((i, name if isinstance(name, str) else ""))
    return found


def _signed(part: dict[str, Any]) -> bool:
    # Proto JSON: either spelling of the field.
    signature = part.get("thoughtSignature", part.get("thought_signature"))
    return isinstance(signature, str) and signature != ""


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
