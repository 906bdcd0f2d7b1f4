"""Gemini ``generateContent`` rules (catalogue section 4).

Check order: a payload the API cannot read as its proto (a ``functionResponse.response`` that is
a list), a content whose role is neither ``user`` nor ``model`` (nor ``function``), then G6 (no
contents), G5 (a content without parts) and parts without data, in body order, then, for a model
before Gemini 3 (``response_parts_refused``), files nested in a function response, then turn
order in body order: G1 (function-call turn not after a user or function-response turn), G2
(function-response turn not after a function-call turn), G3 (response count differs from the call
count, reported on the call turn, also when the call turn is followed by anything but a
function-response turn), then G7 (trailing model turn) or, for Gemini 3
(``responses_stand_alone``), G7's text for a last content that holds text beside its function
responses.

A "user turn" is any content with role ``user`` (or no role); a function-response turn is a
user (or ``function``) content holding ``functionResponse`` parts; a function-call turn is a
``model`` content holding ``functionCall`` parts. Gemini 1 reads the turns before the first call
by position, whatever their roles, so there G1 also holds a first call at an even index (see
``turns_by_position``); checked for native bodies only, like G4, when ``validate`` is given the
model.

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

G7's text, [infer] in the catalogue (from third-party documentation), was first quoted from the
API in anomalyco/opencode#47034 (Vertex AI), with a final period. A part with none of its data set
(``{}``, or an empty text, which proto3 JSON reads as unset) is a schema error reported with G5, in
body order; Vertex's own text for it is not known, so the Gemini API's is used. Not checked: the
parts of ``systemInstruction``.
"""

from __future__ import annotations

import re
from typing import Any

from ..dialects.gemini import without_data
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
# A part with none of its data set, an empty text included (54xzh/FLIT#69, through a gateway that
# masks the request type; router-for-me/CLIProxyAPI#3485, #1292).
NO_DATA = (
    "* GenerateContentRequest.contents[{n}].parts[{m}].data: required oneof field 'data' must have one "
    "initialized field\n"
)
G6 = "* GenerateContentRequest.contents: contents is not specified\n"
# [infer] in the catalogue (memberjunction's docs quote it without the period); quoted from the API
# with it by anomalyco/opencode#47034 (Vertex AI) and vellum-ai/vellum-assistant PR#39495.
G7 = "Requests ending with a model turn are not supported."
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
# A content's role is ``user`` or ``model`` (``function``, the role Google's early function-calling
# samples gave responses, is still taken): an OpenAI-style ``assistant``, ``system`` or ``developer``
# passed through unchanged is refused (router-for-me/CLIProxyAPI#2791, mem0ai/mem0#6393).
INVALID_ROLE = "Please use a valid role: user, model."
_VALID_ROLES = ("user", "model", "function", "")
# Multimodal function responses (files in ``functionResponse.parts``) are Gemini 3's; earlier models
# refuse them (google-gemini/gemini-cli#19436), except the Computer Use ones.
RESPONSE_PARTS = (
    "Unable to submit request because `function_response.parts` is not supported for this model. Learn more: "
    "https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling"
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
    generation = _generation(model)
    return generation is not None and generation >= 3 and "-image" not in str(model)


def turns_by_position(model: object) -> bool:
    """Whether ``model`` tells user turns from model turns by their position in ``contents``, not
    their role, up to the first function call (G1).

    Seen on Gemini 1.5: a first call after two user contents (langchain-ai/langchain-academy#28),
    or after a model greeting and the user's question (firebase/firebase-ios-sdk#13685, where any
    even number of contents before the question works, ten model ones included); the Gemini API
    forum traced it to the index (discuss.ai.google.dev topic 46213: an even number of user turns
    before the call fails, an odd one works). Gemini 3 answered G4 for calls at even positions
    (nanbingxyz/5ire#405, position 2; RooCodeInc/Roo-Code#9499, position 4), so it reads roles;
    nothing shows Gemini 2 either way, so only Gemini 1 is held to it.
    """
    return _generation(model) == 1


def responses_stand_alone(model: object) -> bool:
    """Whether ``model`` refuses a request whose last content holds text beside function responses.

    Gemini 3 reads a content of function responses as a turn of its own, and answers G7's text for
    the text beside them (vellum-ai/vellum-assistant PR#39495, from production logs). Gemini 2.5
    took text and files beside the responses (Gemini CLI sent them so), so only Gemini 3 and later
    are held to it.
    """
    generation = _generation(model)
    return generation is not None and generation >= 3


def response_parts_refused(model: object) -> bool:
    """Whether ``model`` refuses files nested in ``functionResponse.parts``: a Gemini before 3, not a
    Computer Use model (which took them first). A model not known is not held to it."""
    generation = _generation(model)
    return generation is not None and generation < 3 and "computer-use" not in str(model)


def _generation(model: object) -> int | None:
    found = _MODEL_GENERATION.search(model) if isinstance(model, str) else None
    return int(found.group(1)) if found is not None else None


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
    invalid_roles = [
        violation("gemini", "gemini.invalid-role", INVALID_ROLE, i)
        for i, c in enumerate(contents)
        if c.get("role", "user") not in _VALID_ROLES
    ]
    return malformed or invalid_roles or check_contents(contents, provider, None, model)


def _answer(part: dict[str, Any]) -> Any:
    return part.get("functionResponse", part.get("function_response"))


def _nests_parts(part: dict[str, Any]) -> bool:
    answer = _answer(part)
    return isinstance(answer, dict) and isinstance(answer.get("parts"), list) and bool(answer["parts"])


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
        elif provider == "gemini":
            out += [
                violation(provider, "gemini.part-without-data", NO_DATA.format(n=i, m=k), at(i))
                for k, part in enumerate(c["parts"])
                if without_data(part)
            ]
    if provider == "gemini" and response_parts_refused(model):
        out += [
            violation(provider, "gemini.response-parts-unsupported", RESPONSE_PARTS, at(i))
            for i, c in enumerate(contents)
            if any(_nests_parts(part) for part in c.get("parts") or ())
        ]
    calls = [_count(c, "model", "functionCall") for c in contents]
    responses = [_count(c, "user", "functionResponse") for c in contents]
    roles = [_role(c) for c in contents]
    # A native body for a model that reads turns by position: the first call must stand where a
    # model turn would in a strict user/model alternation, at an odd index.
    by_position = provider == "gemini" and turns_by_position(model)
    first_call = next((i for i, n in enumerate(calls) if n), None)
    for i in range(len(contents)):
        if calls[i]:
            out_of_step = by_position and i == first_call and i % 2 == 0
            if i == 0 or roles[i - 1] not in ("user", "function") or out_of_step:
                out.append(violation(provider, "gemini.G1", G1, at(i)))
            if i + 1 < len(contents) and responses[i + 1] != calls[i]:
                out.append(violation(provider, "gemini.G3", G3, at(i)))
        if responses[i] and (i == 0 or not calls[i - 1]):
            out.append(violation(provider, "gemini.G2", G2, at(i)))
    last = len(contents) - 1
    if roles[-1] == "model":
        out.append(violation(provider, "gemini.G7", G7, at(last)))
    elif provider == "gemini" and responses[-1] and responses_stand_alone(model) and _has_text(contents[-1]):
        out.append(violation(provider, "gemini.response-beside-text", G7, at(last)))
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


def _has_text(content: dict[str, Any]) -> bool:
    return any("text" in part and part.get("thought") is not True for part in content.get("parts") or ())


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
