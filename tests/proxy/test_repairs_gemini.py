"""Gemini's transcript 400s, through the official SDKs: the emulator's 400 sent directly, 200 through Suture.

Native Gemini (google-genai, the model named in the URL) and Gemini's OpenAI-compatible endpoint
(openai, reached through a Suture upstream with ``provider: gemini``):

- a function-call turn with no user turn before it (G1), and, on Gemini 1, a first one at a user
  turn's position;
- a tool message without the function's name, which the OpenAI-compatible endpoint needs;
- Gemini 3 function calls replayed without their thought signature (G4);
- a function response to no call ending the contents (G2; dropping it would end on a model turn);
- a content with role ``assistant`` or ``developer`` (Gemini takes ``user`` and ``model``);
- Gemini 3: text beside the function responses of the last content (answered with G7's text);
- a part without data (an empty text) beside a function response;
- files nested in a function response (``functionResponse.parts``), which only Gemini 3 takes;
- Vertex AI's own wording of a turn without parts (G5). Suture has no Vertex route: the direct
  request goes to the emulator's Vertex path, the repaired one through Suture's Gemini route to
  the same emulator.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from proxy.emulator import EmulatorConfig, build_emulator_app
from tests._support.emulator import recorded_requests
from tests._support.proxy_e2e import suture
from tests._support.servers import running_server

GOOGLE_KEY = "AIza-google-canary-0123456789"
GEMINI_2 = "gemini-2.5-flash"
GEMINI_3 = "gemini-3-pro-preview"
DUMMY = "skip_thought_signature_validator"

G1 = "Please ensure that function call turn comes immediately after a user turn or after a function response turn."
G2 = "Please ensure that function response turn comes immediately after a function call turn."
G7 = "Requests ending with a model turn are not supported."
G4 = (
    "Function call is missing a thought_signature in functionCall parts. This is required for tools to work "
    "correctly, and missing thought_signature may lead to degraded model performance. Additional data, function "
    "call `default_api:read_file` , position {k}. Please refer to "
    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)
G5_COMPAT = (
    "Unable to submit request because it has an empty text parameter. Add a value to the parameter and try again. "
    "Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini"
)
G5_VERTEX = (
    "Unable to submit request because it must include at least one parts field, which describes the prompt "
    "input. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini"
)

TOOLS = [{"functionDeclarations": [{"name": "read_file", "parameters": {"type": "object"}}]}]
CHAT_TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]


def call() -> dict[str, Any]:
    return {"functionCall": {"name": "read_file", "args": {"path": "a.txt"}}}


def response(name: str = "read_file", output: str = "contents of a.txt") -> dict[str, Any]:
    return {"functionResponse": {"name": name, "response": {"output": output}}}


def chat_call(ident: str = "call_1") -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.txt"}'}}


@dataclass
class Stack:
    emulator: str
    record: Path
    suture: str

    def requests(self) -> list[dict[str, Any]]:
        return recorded_requests(self.record)

    def gemini(self, *, direct: bool = False, vertex: bool = False) -> genai.Client:
        options = genai_types.HttpOptions(base_url=self.emulator if direct else self.suture, timeout=10_000)
        return genai.Client(vertexai=vertex, api_key=GOOGLE_KEY, http_options=options)

    def openai(self, *, direct: bool = False) -> openai.OpenAI:
        # Gemini's OpenAI-compatible base URL, on the emulator; Suture routes gemini-* there.
        base = self.emulator + "/v1beta/openai" if direct else self.suture + "/v1"
        return openai.OpenAI(base_url=base, api_key=GOOGLE_KEY, max_retries=0, timeout=10)


@contextlib.contextmanager
def stack(tmp_path: Path, **settings: Any) -> Iterator[Stack]:
    record = tmp_path / "emulator.jsonl"
    app = build_emulator_app(EmulatorConfig(provider="openai", record_path=record))
    with running_server(app, timeout_graceful_shutdown=1) as emu:
        gemini_compat = {
            "protocol": "openai",
            "base_url": emu + "/v1beta/openai",
            "provider": "gemini",
            # No retry after a refusal: each repair here must be made before the request is sent.
            "rejection_repair": {"enabled": False},
        }
        with suture(
            openai={"upstream": emu + "/v1", "rejection_repair": {"enabled": False}},
            gemini={"upstream": emu, "rejection_repair": {"enabled": False}},
            upstreams={"gemini_compat": gemini_compat},
            routes=[{"match": "gemini-*", "upstream": "gemini_compat"}],
            **settings,
        ) as url:
            yield Stack(emu, record, url)


@pytest.fixture
def repairing(tmp_path: Path) -> Iterator[Stack]:
    with stack(tmp_path) as s:
        yield s


def generate(client: genai.Client, model: str, contents: list[dict[str, Any]]) -> str:
    config = genai_types.GenerateContentConfig.model_validate({"tools": TOOLS})
    return client.models.generate_content(model=model, contents=contents, config=config).text or ""


def rejected(client: genai.Client, model: str, contents: list[dict[str, Any]]) -> str:
    with pytest.raises(genai_errors.ClientError) as info:
        generate(client, model, contents)
    assert (info.value.code, info.value.status) == (400, "INVALID_ARGUMENT")
    message = info.value.message
    assert isinstance(message, str)
    return message


def chat_rejected(client: openai.OpenAI, body: dict[str, Any]) -> str:
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(**body)
    # Gemini's OpenAI-compatible endpoint answers with a JSON array of Google errors.
    [error] = info.value.response.json()
    assert (error["error"]["code"], error["error"]["status"]) == (400, "INVALID_ARGUMENT")
    message: str = error["error"]["message"]
    return message


def forwarded(stack: Stack) -> list[dict[str, Any]]:
    """The requests the emulator answered 200: what Suture sent on."""
    return [r for r in stack.requests() if r["status"] == 200]


def by_hand(stack: Stack, model: str, body: dict[str, Any], error: str) -> dict[str, Any]:
    """A native request written by hand (a shape google-genai's types refuse): the provider's 400
    sent direct, then one repair through Suture and a 200; the request Suture sent on."""
    path = f"/v1beta/models/{model}:generateContent"
    headers = {"x-goog-api-key": GOOGLE_KEY}
    direct = httpx.post(stack.emulator + path, json=body, headers=headers)
    assert direct.status_code == 400
    assert direct.json()["error"]["message"] == error
    through = httpx.post(stack.suture + path, json=body, headers=headers)
    assert through.status_code == 200, through.text
    assert through.headers["x-suture-repairs"] == "1"
    [sent] = forwarded(stack)
    return sent


# --- G1: a function-call turn with no user turn before it -----------------------------------------


STARTS_WITH_CALL = [
    {"role": "model", "parts": [call()]},
    {"role": "user", "parts": [response()]},
    {"role": "model", "parts": [{"text": "a.txt holds a greeting."}]},
    {"role": "user", "parts": [{"text": "Is it polite?"}]},
]


def test_native_history_starting_with_a_call(repairing: Stack) -> None:
    with repairing.gemini(direct=True) as direct:
        assert rejected(direct, GEMINI_2, STARTS_WITH_CALL) == G1
    with repairing.gemini() as client:
        assert generate(client, GEMINI_2, STARTS_WITH_CALL) == 'Emulated reply. Last user text: "Is it polite?"'
    [sent] = forwarded(repairing)
    contents = sent["body"]["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user", "model", "user"]
    assert contents[0]["parts"] == [{"text": "(Conversation continues.)"}]


def test_chat_for_gemini_with_only_a_system_prompt_before_the_call(repairing: Stack) -> None:
    body = {
        "model": GEMINI_2,
        "messages": [
            {"role": "system", "content": "You are a background agent."},
            {"role": "assistant", "content": None, "tool_calls": [chat_call()]},
            {"role": "tool", "tool_call_id": "call_1", "name": "read_file", "content": "contents of a.txt"},
            {"role": "user", "content": "Go on."},
        ],
        "tools": CHAT_TOOLS,
    }
    with repairing.openai(direct=True) as direct:
        assert chat_rejected(direct, body) == G1
    with repairing.openai() as client:
        reply = client.chat.completions.with_raw_response.create(**body)
        assert reply.headers["x-suture-repairs"] == "1"
        assert reply.parse().choices[0].message.content == 'Emulated reply. Last user text: "Go on."'
    [sent] = forwarded(repairing)
    assert sent["path"] == "/v1beta/openai/chat/completions"
    assert [m["role"] for m in sent["body"]["messages"]] == ["system", "user", "assistant", "tool", "user"]


# --- a tool message without the function's name -----------------------------------------------------


def test_chat_for_gemini_tool_message_without_name(repairing: Stack) -> None:
    body = {
        "model": GEMINI_2,
        "messages": [
            {"role": "user", "content": "Read a.txt"},
            {"role": "assistant", "content": None, "tool_calls": [chat_call()]},
            {"role": "tool", "tool_call_id": "call_1", "content": "contents of a.txt"},
        ],
        "tools": CHAT_TOOLS,
    }
    with repairing.openai(direct=True) as direct:
        assert chat_rejected(direct, body) == "Request contains an invalid argument."
    with repairing.openai() as client:
        reply = client.chat.completions.with_raw_response.create(**body)
        assert reply.headers["x-suture-repairs"] == "1"
        assert reply.parse().choices[0].message.content
    [sent] = forwarded(repairing)
    assert sent["body"]["messages"][2]["name"] == "read_file"


# --- G1 on Gemini 1: a first call at a user turn's position -------------------------------------

GEMINI_1 = "gemini-1.5-flash"
OUT_OF_STEP = {
    "two-user-contents": [
        {"role": "user", "parts": [{"text": "Read a.txt"}]},
        {"role": "user", "parts": [{"text": "Quickly, please."}]},
        {"role": "model", "parts": [call()]},
        {"role": "user", "parts": [response()]},
    ],
    "greeting-first": [
        {"role": "model", "parts": [{"text": "Hi! I can read files for you."}]},
        {"role": "user", "parts": [{"text": "Read a.txt"}]},
        {"role": "model", "parts": [call()]},
        {"role": "user", "parts": [response()]},
    ],
}


@pytest.mark.parametrize("name", OUT_OF_STEP)
def test_native_gemini_1_first_call_at_an_even_index(repairing: Stack, name: str) -> None:
    contents = OUT_OF_STEP[name]
    with repairing.gemini(direct=True) as direct:
        assert rejected(direct, GEMINI_1, contents) == G1
        # Gemini 2.5 is not known to read turns by position: the same history goes through.
        assert generate(direct, GEMINI_2, contents)
    with repairing.gemini() as client:
        assert generate(client, GEMINI_1, contents)
    _, sent = forwarded(repairing)
    # The first call now stands at an odd index, after a strict user/model alternation.
    if name == "two-user-contents":
        merged = {"role": "user", "parts": [{"text": "Read a.txt"}, {"text": "Quickly, please."}]}
        assert sent["body"]["contents"] == [merged, *contents[2:]]
    else:
        lead_in = {"role": "user", "parts": [{"text": "(Conversation continues.)"}]}
        assert sent["body"]["contents"] == [lead_in, *contents]


# --- G5: a tool-calling turn with content "" -------------------------------------------------------


def test_chat_for_gemini_call_turn_with_empty_text(repairing: Stack) -> None:
    body = {
        "model": GEMINI_2,
        "messages": [
            {"role": "user", "content": "Read a.txt"},
            {"role": "assistant", "content": "", "tool_calls": [chat_call()]},
            {"role": "tool", "tool_call_id": "call_1", "name": "read_file", "content": "contents of a.txt"},
            {"role": "user", "content": "Summarise it."},
        ],
        "tools": CHAT_TOOLS,
    }
    with repairing.openai(direct=True) as direct:
        assert chat_rejected(direct, body) == G5_COMPAT
    with repairing.openai() as client:
        reply = client.chat.completions.with_raw_response.create(**body)
        assert reply.headers["x-suture-repairs"] == "1"
        assert reply.parse().choices[0].message.content == 'Emulated reply. Last user text: "Summarise it."'
    [sent] = forwarded(repairing)
    assert sent["body"]["messages"][1] == {"role": "assistant", "content": None, "tool_calls": [chat_call()]}


# --- a functionResponse whose response is not an object ----------------------------------------


def test_native_function_response_that_is_a_list(repairing: Stack) -> None:
    # google-genai's types refuse a list here; clients that build the JSON themselves (VS Code's
    # BYOK Gemini, with an MCP tool's content list) send it. So the request is written by hand.
    contents = [
        {"role": "user", "parts": [{"text": "Read a.txt"}]},
        {"role": "model", "parts": [call()]},
        {"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": [{"text": "hi"}]}}]},
        {"role": "model", "parts": [{"text": "It says hi."}]},
        {"role": "user", "parts": [{"text": "Thanks."}]},
    ]
    sent = by_hand(
        repairing,
        GEMINI_2,
        {"contents": contents, "tools": TOOLS},
        (
            "Invalid JSON payload received. Unknown name \"response\" at 'contents[2].parts[0].function_response': "
            "Proto field is not repeating, cannot start list."
        ),
    )
    [part] = sent["body"]["contents"][2]["parts"]
    assert part == {"functionResponse": {"name": "read_file", "response": {"output": [{"text": "hi"}]}}}


# --- a part without data: an empty text beside a function response -------------------------------


def test_native_blank_text_part_is_dropped(repairing: Stack) -> None:
    # Written by hand: the client serialises an empty text part next to the tool's result (FLIT).
    contents = [
        {"role": "user", "parts": [{"text": "Read a.txt"}]},
        {"role": "model", "parts": [call()]},
        {"role": "user", "parts": [response(), {"text": ""}]},
        {"role": "model", "parts": [{"text": "It says hi."}]},
        {"role": "user", "parts": [{"text": "Thanks."}]},
    ]
    sent = by_hand(
        repairing,
        GEMINI_2,
        {"contents": contents, "tools": TOOLS},
        (
            "* GenerateContentRequest.contents[2].parts[1].data: required oneof field 'data' must have one "
            "initialized field\n"
        ),
    )
    assert sent["body"]["contents"][2] == {"role": "user", "parts": [response()]}


# --- files nested in a function response, for Gemini 2.5 ------------------------------------------


def test_native_gemini_2_function_response_parts_move_beside_the_response(repairing: Stack) -> None:
    image = {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}
    answer = {"name": "read_file", "response": {"output": "Read image file: shot.png"}}
    contents = [
        {"role": "user", "parts": [{"text": "Look at shot.png"}]},
        {"role": "model", "parts": [call()]},
        {"role": "user", "parts": [{"functionResponse": {**answer, "parts": [image]}}]},
    ]
    headers = {"x-goog-api-key": GOOGLE_KEY}
    body = {"contents": contents, "tools": TOOLS}
    gemini_2 = f"/v1beta/models/{GEMINI_2}:generateContent"
    direct = httpx.post(repairing.emulator + gemini_2, json=body, headers=headers)
    assert direct.status_code == 400
    assert direct.json()["error"]["message"] == (
        "Unable to submit request because `function_response.parts` is not supported for this model. Learn more: "
        "https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling"
    )
    through = httpx.post(repairing.suture + gemini_2, json=body, headers=headers)
    assert through.status_code == 200, through.text
    assert through.headers["x-suture-repairs"] == "1"
    [sent] = forwarded(repairing)
    assert sent["body"]["contents"][2] == {"role": "user", "parts": [{"functionResponse": answer}, image]}


# --- G4: Gemini 3 calls without thought signatures -----------------------------------------------


UNSIGNED = [
    {"role": "user", "parts": [{"text": "Read a.txt"}]},
    {"role": "model", "parts": [call()]},
    {"role": "user", "parts": [response()]},
]


def test_native_gemini_3_call_without_signature(repairing: Stack) -> None:
    with repairing.gemini(direct=True) as direct:
        assert rejected(direct, GEMINI_3, UNSIGNED) == G4.format(k=1)
        # Gemini 2.5 does not require them: the same history is fine there.
        assert generate(direct, GEMINI_2, UNSIGNED)
    with repairing.gemini() as client:
        assert generate(client, GEMINI_3, UNSIGNED)
        assert generate(client, GEMINI_2, UNSIGNED)
    gemini_2_direct, gemini_3, gemini_2 = forwarded(repairing)
    # The model comes from the URL: only the Gemini 3 request was given a signature.
    assert gemini_3["path"] == f"/v1/models/{GEMINI_3}:generateContent"
    assert gemini_3["body"]["contents"][1]["parts"][0]["thoughtSignature"] == DUMMY
    assert gemini_2["body"]["contents"] == gemini_2_direct["body"]["contents"]
    assert "thoughtSignature" not in gemini_2["body"]["contents"][1]["parts"][0]


def test_chat_for_gemini_3_tool_call_without_signature(repairing: Stack) -> None:
    body = {
        "model": GEMINI_3,
        "messages": [
            {"role": "user", "content": "Read a.txt"},
            {"role": "assistant", "content": None, "tool_calls": [chat_call()]},
            {"role": "tool", "tool_call_id": "call_1", "name": "read_file", "content": "contents of a.txt"},
        ],
        "tools": CHAT_TOOLS,
    }
    with repairing.openai(direct=True) as direct:
        assert chat_rejected(direct, body) == G4.format(k=1)
    with repairing.openai() as client:
        assert client.chat.completions.create(**body).choices[0].message.content
    [sent] = forwarded(repairing)
    [tool_call] = sent["body"]["messages"][1]["tool_calls"]
    assert tool_call["extra_content"] == {"google": {"thought_signature": DUMMY}}


def test_signature_policy_leave_forwards_the_call_as_it_is(tmp_path: Path) -> None:
    with stack(tmp_path, policy={"missing_thought_signature": "leave"}) as s, s.gemini() as client:
        assert rejected(client, GEMINI_3, UNSIGNED) == G4.format(k=1)


# --- G2: a function response to no call ends the contents ----------------------------------------


RESPONSE_AFTER_TEXT = [
    {"role": "user", "parts": [{"text": "Order a pizza"}]},
    {"role": "model", "parts": [{"text": "Which pizza would you like?"}]},
    {"role": "user", "parts": [response("place_order", "order 17 placed")]},
]


@pytest.mark.parametrize("policy", ["fold", "drop"])
def test_native_trailing_response_to_no_call_is_kept_as_text(tmp_path: Path, policy: str) -> None:
    with stack(tmp_path, policy={"orphan_tool_result": policy}) as s:
        with s.gemini(direct=True) as direct:
            assert rejected(direct, GEMINI_2, RESPONSE_AFTER_TEXT) == G2
        with s.gemini() as client:
            assert generate(client, GEMINI_2, RESPONSE_AFTER_TEXT)
        [sent] = forwarded(s)
    contents = sent["body"]["contents"]
    # The request still ends on the user's turn, and the tool's output reaches the model.
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    [part] = contents[2]["parts"]
    assert "place_order" in part["text"]
    assert "order 17 placed" in part["text"]


# --- Vertex AI: its own wording of a turn without parts ------------------------------------------


EMPTY_MODEL_TURN = [
    {"role": "user", "parts": [{"text": "Hello"}]},
    {"role": "model", "parts": []},
    {"role": "user", "parts": [{"text": "Are you there?"}]},
]


def test_vertex_empty_parts(repairing: Stack) -> None:
    with repairing.gemini(direct=True, vertex=True) as direct:
        assert rejected(direct, GEMINI_2, EMPTY_MODEL_TURN) == G5_VERTEX
    with repairing.gemini() as client:
        assert generate(client, GEMINI_2, EMPTY_MODEL_TURN) == 'Emulated reply. Last user text: "Are you there?"'
    direct_call, sent = repairing.requests()
    assert direct_call["path"] == f"/v1beta1/publishers/google/models/{GEMINI_2}:generateContent"
    assert [c["role"] for c in sent["body"]["contents"]] == ["user", "user"]


# --- a content with an OpenAI-style role -----------------------------------------------------------


INVALID_ROLE = "Please use a valid role: user, model."


def test_native_assistant_role_becomes_model(repairing: Stack) -> None:
    contents = [
        {"role": "user", "parts": [{"text": "I prefer tea."}]},
        {"role": "assistant", "parts": [{"text": "Noted: tea."}]},
        {"role": "user", "parts": [{"text": "Create procedural memory of the above conversation."}]},
    ]
    with repairing.gemini(direct=True) as direct:
        assert rejected(direct, GEMINI_2, contents) == INVALID_ROLE
    with repairing.gemini() as client:
        reply = generate(client, GEMINI_2, contents)
        assert reply == 'Emulated reply. Last user text: "Create procedural memory of the above conversation."'
    [sent] = forwarded(repairing)
    assert [c["role"] for c in sent["body"]["contents"]] == ["user", "model", "user"]
    assert sent["body"]["contents"][1]["parts"] == [{"text": "Noted: tea."}]


def test_native_developer_role_moves_into_the_system_instruction(repairing: Stack) -> None:
    # A Responses-to-Gemini translator passing a developer message on; written by hand, as it sends it.
    body = {
        "systemInstruction": {"parts": [{"text": "You are a helpful agent."}]},
        "contents": [
            {"role": "developer", "parts": [{"text": "Answer in French."}]},
            {"role": "user", "parts": [{"text": "Hello"}]},
        ],
    }
    sent = by_hand(repairing, GEMINI_2, body, INVALID_ROLE)
    assert sent["body"]["contents"] == [{"role": "user", "parts": [{"text": "Hello"}]}]
    assert sent["body"]["systemInstruction"] == {
        "parts": [{"text": "You are a helpful agent."}, {"text": "Answer in French."}]
    }


# --- Gemini 3: text beside the function responses of the last content ------------------------------


def test_native_gemini_3_text_beside_function_responses_moves_after_them(repairing: Stack) -> None:
    # An agent's notice added to a failed call's results, in the same content (Vellum's converter).
    signed_call = {**call(), "thoughtSignature": "c2lnbmF0dXJl"}
    notice = {"text": "<system_notice>read_file failed: permission denied.</system_notice>"}
    contents = [
        {"role": "user", "parts": [{"text": "Read a.txt"}]},
        {"role": "model", "parts": [signed_call]},
        {"role": "user", "parts": [response(output="permission denied"), notice]},
    ]
    sent = by_hand(repairing, GEMINI_3, {"contents": contents, "tools": TOOLS}, G7)
    assert sent["body"]["contents"] == [
        *contents[:2],
        {"role": "user", "parts": [response(output="permission denied")]},
        {"role": "user", "parts": [notice]},
    ]


# --- G7: a request ending on a model turn ---------------------------------------------------------


ENDS_ON_MODEL = [
    {"role": "user", "parts": [{"text": "Write a haiku about rain."}]},
    {"role": "model", "parts": [{"text": "Soft rain on the roof"}]},
]


def test_native_request_ending_on_a_model_turn_gets_a_user_turn(repairing: Stack) -> None:
    with repairing.gemini(direct=True) as direct:
        assert rejected(direct, GEMINI_2, ENDS_ON_MODEL) == G7
    with repairing.gemini() as client:
        assert generate(client, GEMINI_2, ENDS_ON_MODEL) == 'Emulated reply. Last user text: "Continue."'
    [sent] = forwarded(repairing)
    contents = sent["body"]["contents"]
    assert contents[:2] == ENDS_ON_MODEL
    assert contents[2] == {"role": "user", "parts": [{"text": "Continue."}]}
