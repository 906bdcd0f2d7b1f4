"""OpenAI Chat Completions rules (section 2) and the OpenAI-compatible providers (sections 6-8).

Check order (OpenAI reports only the first): schema checks in body order (O5 empty
``messages``; per message O14 a ``name`` with characters outside ``^[a-zA-Z0-9_-]+$`` (OpenAI
and Azure; not in the catalogue), O5 ``tool_calls: []``, O10 a tool call id over 40 characters
(OpenAI and Azure only; not in the catalogue), O5 empty function name or O14 one with characters
outside the pattern, O13 a tool call's ``arguments``
that are an object or an array instead of their JSON text (OpenAI and Azure; not in the
catalogue), O11 a legacy ``function_call``
without ``arguments`` (OpenAI and Azure; not in the catalogue), O9 a ``tool`` message
without ``tool_call_id`` (not in the catalogue: OpenAI's text as ymichael/open-codex#5 quotes it,
through OpenRouter), O12 a ``function`` message without ``name`` (OpenAI and Azure; not in the
catalogue), O6 null content and content parts without ``type``; a missing
``content`` is not checked, its error text is not in the catalogue), O15 a tool definition's name
outside the pattern or over 64 characters (OpenAI and Azure; not in the catalogue; no rule renames
an agent's tools), then pairing in body order:
for each assistant message with ``tool_calls``, O1 for it, then O4 / O3 for the ``tool`` messages
that follow it; O2 for a ``tool`` message that follows anything else.

Providers differ only where the catalogue says so:

- ``azure``: OpenAI's texts. Azure has answered O2 with both spellings: "preceding" in reports up to
  2025-01 (Hk-Gosuto/ChatGPT-Next-Web-LangChain#193, langchain-ai/task_mAIstro#1), OpenAI's
  "preceeding" in 2024-08 and in the latest one, 2025-04 (Nikunj2003/LLaMa-MCP-Streamlit#1).
- ``openrouter``: the upstream's rules, chosen from the model's prefix as OpenRouter routes it
  (``anthropic/``: Anthropic's, on the body converted as for ``anthropic-openai-compat``;
  ``mistralai/``, ``deepseek/``, ``moonshotai/``: those providers'; anything else: OpenAI's),
  each violation wrapped as OpenRouter wraps upstream errors (W1).
- ``deepseek``: an assistant message whose content is an array is refused by DeepSeek's
  deserializer before anything else (the first one only); then D1 / D2 replace O1 / O2 (DeepSeek
  counts tool messages, so O3 / O4 become D1); D3 (``reasoning_content`` on tool-calling turns,
  when the model thinks: ``deepseek-reasoner``, ``thinking`` enabled, or a V4 model, which thinks
  unless ``thinking`` is disabled), D4 and D5 (``deepseek-reasoner``). D5 is raised when the last
  message that is not a system message is an assistant message without ``prefix: true`` (a system
  message after the last assistant turn does not end it: pig-mesh/deepseek4j#80); reasoner tool
  loops legitimately end on a tool message.
- ``mistral``: M4, M3, M2, then M1 (each in body order) replace the OpenAI rules entirely: the
  order of mistral-common's validator, whose texts these are; a tool message without its id gets
  its "Tool call id has to be defined." in the M1 step.
- ``groq``: X5 (string content for ``system`` and ``tool`` messages; a ``tool`` message's
  ``tool_call_id``, hackclub/ai#22; message keys outside Groq's schema, ServiceStack/llms#17)
  plus OpenAI's rules.
- ``moonshot``: X4 (thinking models: ``reasoning_content`` on tool-call turns; Kimi K2.5 and
  later think unless ``thinking`` is disabled, and count an empty ``reasoning_content`` as
  missing, theopenco/llmgateway PR#2093) plus OpenAI's pairing rules.
- ``minimax``: X3 for every pairing fault (missing, orphan, unknown or duplicate result), but a
  result whose id no call in the request has gets MiniMax's "tool id(...) not found" text
  (MiniMax-AI/MiniMax-M2#76); before those, in body order, a call whose ``arguments`` are not the
  JSON text of an object (obot-platform/nanobot#237; empty arguments are not checked: MiniMax
  seems to word them otherwise, "function name or parameters is empty", and where is unclear).
- ``cerebras``: before anything else, every assistant message that carries ``reasoning_content``,
  which Cerebras's schema refuses on every model (it returns and takes reasoning as ``reasoning``),
  all in one error, one line each (Alishahryar1/free-claude-code#1136); then OpenAI's rules, but a
  ``tool`` message with no call before it gets Cerebras's own text (capital M, no prefix, no period:
  elizaOS/eliza#18179). Texts in Cerebras's body, which has no ``error`` wrapper::

      {"message": "messages.2.assistant.reasoning_content: property
       'messages.2.assistant.reasoning_content' is unsupported", "type": "invalid_request_error",
       "param": "validation_error", "code": "wrong_api_format"}

  (Kilo-Org/kilocode#10375, CherryHQ/cherry-studio#16790, anomalyco/opencode#33413 with gpt-oss-120b,
  NousResearch/hermes-agent#34716 with zai-glm-4.7, QwenLM/qwen-code#11045 with qwen-3.8-27b: "for
  every model, not just thinking").
- ``dashscope`` (Alibaba Cloud Model Studio, Qwen; X2): OpenAI's rules, with DashScope's own texts,
  which carry the prefix ``<400> InternalError.Algo.InvalidParameter: `` and double quotes, for an
  orphan ``tool`` message (philschmid/mcp-openai-gemini-llama-example PR#5, QwenLM/qwen-code#2360,
  labring/FastGPT#4184), an unanswered call (QwenLM/qwen-code#315, #2249, alibaba/spring-ai-alibaba#914,
  google-gemini/gemini-cli#5031; it names ``message[N].role``, taken to be the calling message's index
  as in OpenAI's ``param`` [infer]) and ``tool_calls: []`` (cnblogs/dashscope-sdk PR#74, whose adapter
  quotes the text). Body: ``{"error": {"code": "invalid_parameter_error", "param": null, "message":
  ..., "type": "invalid_request_error"}}`` (DashScope adds an ``id`` and a ``request_id``, left out
  here: the validator makes up no ids). An unknown or repeated ``tool_call_id`` gets OpenAI's text,
  DashScope's own being unknown.
- ``llamacpp`` (llama.cpp's ``llama-server``): no pairing checks. Its own checks, status 400 in
  ``{"error": {"code": 400, "message": ..., "type": "invalid_request_error"}}``: an assistant message
  with neither ``content`` nor ``tool_calls`` ("Assistant message must contain either 'content' or
  'tool_calls'!", ggml-org/llama.cpp#12279 and PR#12293, which added it; a reasoning-only turn
  replayed), and a null ``content`` with no ``tool_calls`` ("Expected 'content' or 'tool_calls' (ref:
  ...)", common/chat.cpp; 500 on builds that threw it as a runtime error [infer]). Then the role
  check of the model's GGUF chat template, for models whose template is known from their name (as
  for vllm; the later Mistral models, which vLLM serves with mistral-common, by their Jinja template:
  "After the optional system message, conversation roles must alternate user and assistant roles
  except for tool calls and results.", ggml-org/llama.cpp#19851, SWE-agent/mini-swe-agent#759,
  sipeed/picoclaw#207, the tool messages and calling turns left out of the count as BerriAI/litellm
  PR#22675 reads the template). A template's refusal is HTTP **500**, ``type`` ``server_error``, its
  text at the end of a message naming the template line (nextai-translator/raycast-openai-translator#34,
  janhq/jan#6254 with gemma: "Conversation roles must alternate user/assistant/user/assistant/...").
- ``fireworks`` (Fireworks AI): no pairing checks (its texts for them unknown). Its schema forbids
  any key it does not have, on a message too, each answered "Extra inputs are not permitted, field:
  '<path>', value: <Python repr>." (FlowiseAI/Flowise#2866 and web-infra-dev/midscene#1322 on the
  request's own keys, boldsoftware/shelley#242 on a tool's; microsoft/vscode#335780 names
  ``messages[2].cot_id`` and ``messages[2].cot_summary``, a client's chain-of-thought bookkeeping
  replayed with an assistant message; the message path in that text is taken from theirs [infer]).
  The keys taken are a generous union (OpenAI's message keys, ``reasoning_content`` and
  ``reasoning``, which Fireworks returns), so that no key Fireworks may take is reported. Body:
  ``{"error": {"object": "error", "type": "invalid_request_error", "message": ...}}`` [infer].
- ``xai`` (xAI, Grok): no pairing checks (its texts for them unknown). A replayed tool call whose
  ``arguments`` are empty text, which xAI parses as JSON and refuses: "The arguments to a tool_call
  with ID 'initial_list_datasets' are not a valid JSON string. Parsing error: Error("EOF while
  parsing a value", line: 1, column: 0)" (spiceai/spiceai#4734, grok-2: an agent's seeded call with
  no arguments). The parsing error is serde_json's; only its empty-text form is known word for word,
  so arguments that are other text that is not JSON are not reported (PV010 still repairs them).
  Body: ``{"code": "Client specified an invalid argument", "error": ...}``, no wrapper (the same
  thread; lobehub/lobehub#8389, yym68686/uni-api#105 for other refusals). xAI's other known
  refusal, "The model expects a single `text` element per message." (nocmt/LLMSearchPlus#2, no
  request shown), is not checked: what triggers it is not known.
- ``zhipu`` (Zhipu GLM, ``open.bigmodel.cn`` and ``api.z.ai``): a conversation with no ``user``
  message is refused with code 1214, "The messages parameter is illegal. Please check the
  documentation." (api.z.ai: anomalyco/opencode#2557, where a user's own tests found it "when
  sending a completion request with zero `user` role messages in it. Does not matter if there are
  `system` or `assistant` messages"; continuedev/continue#13259) or "messages 参数非法。请检查文档。"
  (open.bigmodel.cn: MetaGLM/zhipuai-sdk-python-v4#14, whose request has a system message, calls
  and results and no user message; HKUDS/nanobot PR#3086, whose reproduction sends a system message
  alone). The validator writes z.ai's English text. 1214 is Zhipu's code for any malformed
  ``messages``; only this cause of it is known, so nothing else is checked: no pairing (its texts
  unknown), not an empty ``messages`` array (Zhipu's answer to it unknown). Body: ``{"error":
  {"code": "1214", "message": ...}}`` (the same threads).
- ``nim`` (NVIDIA NIM, ``integrate.api.nvidia.com``): no pairing checks (its texts for them
  unknown). A tool-calling assistant message whose ``content`` is the empty string, which NIM's
  request validator refuses though it takes ``null`` there: "request: Value error, Empty content is
  not allowed for assistant messages" (CherryHQ/cherry-studio#16155 and XiaomiMiMo/MiMo-Code#407,
  google/diffusiongemma-26b-a4b-it; ogx-ai/ogx#1751, meta/llama-3.1-8b-instruct: "NVIDIA NIM allow
  content=null, but not content=\"\""). The same text for an empty assistant message with no calls
  is likely [infer] but no public report shows it, so it is not checked. Body: ``{"error":
  {"message": ..., "type": "BadRequestError", "param": null, "code": 400}}``, the vLLM-shaped body
  integrate.api.nvidia.com answers other 400s in (hidenobunagai/nvidia-nim-provider#2); this text
  in it [infer].
- ``lmstudio`` (LM Studio's ``/v1``): the role check of Qwen3.5 and Qwen3.6's chat templates, for
  models named so: a conversation with no ``user`` message (the template looks, from the end, for a
  user message that is not wholly a ``<tool_response>`` wrapper, and raises without one), answered
  "Error rendering prompt with jinja template: "No user query found in messages.".", followed by LM
  Studio's advice on prompt templates (lmstudio-ai/lmstudio-bug-tracker#1655, opencode with
  qwen3.5-9b; #1855, opencode with Qwen3.6 27B; #1572, qwen3.5-35b-a3b). A user message that holds
  only a ``<tool_response>`` wrapper is not checked (no client is known to send one). Other models'
  templates are not known by name here, so nothing is checked for them (BR003 still adds the user
  message for any model). Body: ``{"error": "..."}``, a bare string (phodal/auto-dev#175,
  t59688/arboris-novel#23).
- ``ollama`` (Ollama's OpenAI layer, ``/v1/chat/completions``: ``openai/openai.go``
  FromChatRequest): no pairing checks. It converts the messages in order and stops at the first it
  cannot read: a message whose ``content`` is null or absent and that has no ``tool_calls``
  (content is optional only beside calls), "invalid message content type: <nil>" (Go's ``%T`` of
  the nil content; QwenLM/qwen-code#3350, Qwen Code against Ollama); a content part whose ``type``
  is not ``text``, ``image_url`` or ``input_audio`` (``refusal``, ``input_text``, ``file``...), or
  a text part whose ``text`` is not a string, "invalid message format" (tombii/better-ccflare#141);
  a call whose ``arguments`` do not unmarshal into a JSON object (empty text, text that is not
  JSON, an array), "invalid tool call arguments". The text ``null`` unmarshals into Go's map
  without an error, so it is neither reported nor repaired. Body
  (``middleware/openai.go``): ``{"error": {"message": ..., "type": "invalid_request_error",
  "param": null, "code": null}}``. Its native ``/api/chat`` is V2's.
- ``sglang`` (SGLang's OpenAI server, ``serving_chat.py``): no pairing checks. First the replayed
  calls' ``arguments``, which it parses (``parse_tool_call_arguments``): "Assistant tool call
  function.arguments must be valid JSON." (empty text, text that is not JSON) and "Assistant tool
  call function.arguments must be a JSON object." (JSON of another kind); sgl-project/sglang#9009
  reported the templates failing on arguments passed on unparsed. Then the chat template's
  ``raise_exception``, answered 400 since sgl-project/sglang PR#14748 (500 "Internal server error:
  ..." before): "Message has tool role, but there was no previous assistant message with a tool
  call!", for the models whose templates raise it, known by name (gpt-oss, MiniMax-M2): they keep
  the last call's name and forget it at an assistant message without calls, so a tool message
  whose nearest earlier assistant message made no call, or that has none before it, is refused.
  Other templates are not known here (TP004 and TP003 still repair such a message for any model).
  SGLang flattens a tool message's text parts itself: not checked. Each is raised, so one error
  per request. Body: ``{"object": "error", "message": ..., "type": "BadRequest", "param": null,
  "code": 400}`` (the same PR).
- ``sambanova`` (SambaNova Cloud, ``api.sambanova.ai/v1``): a message whose ``content`` is an
  array of text parts, which its tokenizer refuses with the request's model in the text: "Unable
  to tokenize message with status code 400 for model DeepSeek-V3.1: Invalid 'content' type.
  Expected one of: ['str'], got list." (musistudio/claude-code-router#965, which relays it as
  "Error from provider(sambanova,DeepSeek-V3.1: 400): ..."). Only arrays of text parts are
  reported: its vision models take image parts, and what a text model answers to one is not
  known. Which message the text is about is not said; the first such message is reported
  [infer]. Only the text is public: the body is OpenAI's, assumed.
- ``together`` (Together AI, ``api.together.xyz/v1``): nothing checked. Its one public refusal of
  a transcript names nothing: HTTP 400 ``{"message": "Input validation error", "type_":
  "invalid_request_error"}``, no ``error`` wrapper and the key ``type_`` (mozilla-ai/any-llm#714:
  an agent loop whose tool messages carried ``name`` beside ``tool_call_id`` was refused, the same
  loop without it passed). That cause is inferred, so no rule is bound for it: Suture repairs the
  refusal by its escalation (RJ011, which removes the key) and learns the fix. The emulator's
  ``/together/v1`` route makes that refusal (``proxy/emulator/together.py``).
- ``vllm``: no pairing checks (V1); the role-alternation error of the model's chat template for
  models whose template is known from their name: Mistral-7B-Instruct v0.1 / v0.2 and
  Mixtral-8x7B-Instruct v0.1 (no system message at all), the other Mistral 7B and Mixtral
  releases (an optional system message first; tool turns are not checked), Gemma and Llama-2
  (a system message first only). Later Mistral models (dated or numbered releases: Small 3 and
  4, Devstral, Magistral...) are served with the mistral-common tokenizer, which checks M3 and
  M2 instead (mistralai/mistral-vibe#578); not M1's id pattern, since vLLM shortens longer ids
  to their last 9 characters for it, and not M4, whose wording there differs.
- ``anthropic-openai-compat`` / ``gemini-openai-compat``: the body is converted the way the
  endpoint converts it and checked with Anthropic's / Gemini's rules; ``bedrock``: converted to
  Converse as a gateway (LiteLLM, Portkey) converts it, and checked with Bedrock's.

Where a compatible provider's own text for a rule is not in the catalogue (groq, moonshot
pairing), OpenAI's text is used inside that provider's envelope. Not checked: O7 (nothing to
reject), O8 (Assistants API), X1 (Perplexity is not a provider here), X6 (see ``xai``),
D6 (error text unknown), Groq's "property ... is unsupported" for a key outside its schema
anywhere but on a message (the request's own keys, a tool call's), V2 (Ollama's native ``/api/chat``;
see ``ollama`` for its ``/v1``), W2 / W3 (relays).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ._envelope import violation
from ._shape import as_dict, as_list, as_str, body_dict, required_list
from ._violation import Violation

O1 = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. The following tool_call_ids did not have response messages: {ids}"
)
O2 = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
O3 = "Invalid parameter: 'tool_call_id' of '{id}' not found in 'tool_calls' of previous message."
O4 = "Invalid parameter: Duplicate value for 'tool_call_id' of '{id}', in messages[{first}] and messages[{n}]."
O5_MESSAGES = (
    "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead."
)
O5_TOOL_CALLS = (
    "Invalid 'messages[{n}].tool_calls': empty array. "
    "Expected an array with minimum length 1, but got an empty array instead."
)
O5_NAME = (
    "Invalid 'messages[{n}].tool_calls[{k}].function.name': empty string. "
    "Expected a string with minimum length 1, but got an empty string instead."
)
O6 = "Invalid value for 'content': expected a string, got null."
# OpenAI and Azure cap a tool call's id at 40 characters, so an id another provider or a gateway made
# up (Portkey-AI/gateway#1062, BerriAI/litellm#11392: Gemini's calls get a 41-character one) is
# refused when it is replayed: microsoft/autogen#6377 (OpenAI), Azure/azure-dev#7324 (Azure).
O10 = (
    "Invalid 'messages[{n}].tool_calls[{k}].id': string too long. "
    "Expected a string with maximum length 40, but got a string with length {length} instead."
)
OPENAI_TOOL_ID_MAX = 40
# A legacy function call (the functions API) replayed without its arguments (BerriAI/litellm#6241,
# Azure; OpenAI's schema wording).
O11 = "Missing required parameter: 'messages[{n}].function_call.arguments'."
O9 = "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'."
# A legacy function message (the functions API) without the function's name (tmc/langchaingo PR#924).
O12 = "Missing parameter 'name': messages with role 'function' must have a 'name'."
# A tool call's arguments replayed as the object (or array) they encode rather than its JSON text: a
# client that keeps them parsed (aaif-goose/goose-mobile PR#20, OpenAI: "an object"; "an array" is
# the same check's word for a list, not seen in a report).
O13 = "Invalid type for 'messages[{n}].tool_calls[{k}].function.arguments': expected a string, but got {kind} instead."
_JSON_KIND: dict[type, str] = {dict: "an object", list: "an array"}
# A participant's name, or a replayed call's function name, with characters outside OpenAI's
# pattern (FlowiseAI/Flowise#2948: a message's name; mcp-use/mcp-use#90: a call in the history).
O14_NAME = (
    "Invalid 'messages[{n}].name': string does not match pattern. "
    "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
)
O14_CALL = (
    "Invalid 'messages[{n}].tool_calls[{k}].function.name': string does not match pattern. "
    "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
)
# The same pattern on a tool definition's name, and its 64 characters (Vortiago/mcp-azure-devops
# PR#30 and hackers365/xiaozhi-esp32-server-golang#268: an MCP tool's name; use-novamira/novamira#12:
# one over 64 characters). The agent dispatches calls by the names it declared: no repair renames them.
O15_PATTERN = (
    "Invalid 'tools[{k}].function.name': string does not match pattern. "
    "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
)
O15_LENGTH = (
    "Invalid 'tools[{k}].function.name': string too long. "
    "Expected a string with maximum length 64, but got a string with length {length} instead."
)
_NAME = re.compile(r"[a-zA-Z0-9_-]+")


def _refused_name(name: Any) -> bool:
    return isinstance(name, str) and name != "" and _NAME.fullmatch(name) is None


O6_PART = "Missing required parameter: 'messages[{n}].content[{k}].type'."
D1 = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'. (insufficient tool messages following tool_calls message)"
)
D2 = "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
D3 = "The `reasoning_content` in the thinking mode must be passed back to the API."
# The same rule on DeepSeek's Anthropic-compatible endpoint, which names the thinking blocks
# (decolua/9router#2397, in DeepSeek's own error body; openclaw/openclaw#71998).
D3_ANTHROPIC = "The `content[].thinking` in the thinking mode must be passed back to the API."
D3_REASONER = (
    "Missing `reasoning_content` field in the assistant message at message index {n}. For more "
    "information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls"
)
D4 = (
    "deepseek-reasoner does not support successive user or assistant messages (messages[{i}] and "
    "messages[{j}] in your input). You should interleave the user/assistant messages in the message sequence."
)
# DeepSeek's deserializer takes only a string as an assistant message's content (google/adk-python#226,
# huggingface/smolagents#1158, BerriAI/litellm#6642 from OpenHands, whose system and user content
# in parts passed); it answered 422 up to 2025 and answers 400 since (tailcallhq/forgecode#2008).
# serde stops at the first such message, and prints where it stood then: see deepseek_column.
D_CONTENT = (
    "Failed to deserialize the JSON body into the target type: messages[{n}]: invalid type: sequence, "
    "expected a string at line 1 column {column}"
)
D5 = (
    "The last message of deepseek-reasoner must be a user message, or an assistant message with prefix "
    "mode on (refer to https://api-docs.deepseek.com/guides/chat_prefix_completion)."
)
M1 = "Tool call id was {id} but must be a-z, A-Z, 0-9, with a length of 9."
# mistral-common's own text for a tool message without its id (MistralRequestValidatorV3).
M1_MISSING = "Tool call id has to be defined."
M2 = "Not the same number of function calls and responses"
M3 = "Unexpected role '{role}' after role '{previous}'"
M4 = "Expected last role User or Tool (or Assistant with prefix True) for serving but got assistant"
# mistral-common's check of an assistant message with neither (OpenHands/OpenHands#8685); behind
# vLLM, its newer wording prints the message (vllm-project/vllm#21089, content "" read as None).
M5 = "Assistant message must have either content or tool_calls, but not none."
M5_VLLM = "Invalid assistant message: role='assistant' content=None tool_calls=None prefix={prefix}"
X3 = "invalid params, tool call result does not follow tool call (2013)"
X3_NOT_FOUND = "invalid params, tool result's tool id({id}) not found (2013)"
# A replayed call whose arguments are not the JSON text of an object: text that is not JSON, or
# an object's JSON encoded once more as a JSON string (obot-platform/nanobot#237).
X3_ARGUMENTS = "invalid params, invalid function arguments json string, tool_call_id: {id} (2013)"
# DashScope (X2): OpenAI's checks, its own words (see the module docstring for the sources).
_DASHSCOPE = "<400> InternalError.Algo.InvalidParameter: "
X2_MISSING = (
    _DASHSCOPE + 'An assistant message with "tool_calls" must be followed by tool messages responding to each '
    '"tool_call_id". The following tool_call_ids did not have response messages: message[{n}].role'
)
X2_ORPHAN = _DASHSCOPE + 'messages with role "tool" must be a response to a preceeding message with "tool_calls".'
X2_EMPTY_TOOL_CALLS = _DASHSCOPE + "Empty tool_calls is not supported in message."
# Cerebras: a key its schema lacks, each one a line of one error (Alishahryar1/free-claude-code#1136).
CEREBRAS_PROPERTY = "messages.{n}.{role}.{field}: property 'messages.{n}.{role}.{field}' is unsupported"
# The keys Cerebras refuses on each role's message, where a public report shows the refusal; it
# takes ``reasoning`` (proxysoul/Empryo PR#209, measured), so that key is not one of them.
CEREBRAS_REFUSED_KEYS: dict[str, tuple[str, ...]] = {"assistant": ("reasoning_content",)}
CEREBRAS_ORPHAN = "Messages with role 'tool' must be a response to a preceeding message with 'tool_calls'"
X4 = "thinking is enabled but reasoning_content is missing in assistant tool call message at index {n}"
X5 = (
    "'messages.{n}' : for 'role:{role}' the following must be satisfied"
    "[('messages.{n}.content' : value must be a string)]"
)
X5_MISSING = (
    "'messages.{n}' : for 'role:{role}' the following must be satisfied"
    "[('messages.{n}.{field}' : property '{field}' is missing)]"
)
# A message key outside Groq's schema, as answered in 2026 (ServiceStack/llms#17 'timestamp',
# odysseus-dev/odysseus#200 'metadata'); answers up to 2025 added a guess, ", did you mean
# 'name'?" (run-llama/llama_index#14701 'status', chatboxai/chatbox#2083 'id').
X5_UNSUPPORTED = (
    "'messages.{n}' : for 'role:{role}' the following must be satisfied"
    "[('messages.{n}' : property '{field}' is unsupported)]"
)
# The keys Groq's schema takes on each role's message: the union of the message types its
# OpenAPI spec has held (as generated into groq/groq-python's chat message params: ``tool_call_id``
# on every role, ``name`` on tool messages and ``reasoning`` on assistant messages in some
# versions), so that no key Groq has taken is reported. Roles it does not list (``developer``)
# are not checked for keys.
GROQ_MESSAGE_KEYS: dict[str, frozenset[str]] = {
    "system": frozenset({"role", "content", "name", "tool_call_id"}),
    "user": frozenset({"role", "content", "name", "tool_call_id"}),
    "assistant": frozenset({"role", "content", "name", "tool_call_id", "tool_calls", "function_call", "reasoning"}),
    "tool": frozenset({"role", "content", "tool_call_id", "name"}),
    "function": frozenset({"role", "content", "name", "tool_call_id"}),
}
# Fireworks (see the module docstring for the sources). One model for every role's message.
FIREWORKS_EXTRA = "Extra inputs are not permitted, field: 'messages[{n}].{field}', value: {value}."
FIREWORKS_MESSAGE_KEYS = frozenset(
    {"role", "content", "name", "tool_calls", "tool_call_id", "function_call", "reasoning_content", "reasoning"}
)
# xAI (see the module docstring for the sources): serde_json's error for empty text closes the text.
XAI_ARGUMENTS = (
    "The arguments to a tool_call with ID '{id}' are not a valid JSON string. "
    'Parsing error: Error("EOF while parsing a value", line: 1, column: 0)'
)
# Zhipu's code 1214, as api.z.ai and open.bigmodel.cn word it (see the module docstring).
ZHIPU_1214 = "The messages parameter is illegal. Please check the documentation."
ZHIPU_1214_ZH = "messages 参数非法。请检查文档。"
# NVIDIA NIM and LM Studio (see the module docstring for the sources).
NIM_EMPTY_ASSISTANT = "request: Value error, Empty content is not allowed for assistant messages"
LMSTUDIO_NO_USER_QUERY = (
    'Error rendering prompt with jinja template: "No user query found in messages.".\n\n'
    "This is usually an issue with the model's prompt template. If you are using a popular model, you can try "
    "to search the model under lmstudio-community, which will have fixed prompt templates. If you cannot find "
    "one, you are welcome to post this issue to our discord or issue tracker on GitHub. Alternatively, if you "
    "know how to write jinja templates, you can override the prompt template in My Models > model settings > "
    "Prompt Template."
)
# The Qwen releases whose templates raise "No user query found in messages." (3.5 and 3.6; Qwen3's own does not).
_QWEN_USER_QUERY = re.compile(r"qwen3[._-]?[56](?![0-9])", re.IGNORECASE)
# Ollama, SGLang and SambaNova (see the module docstring for the sources).
OLLAMA_CONTENT_NIL = "invalid message content type: <nil>"
OLLAMA_MESSAGE_FORMAT = "invalid message format"
OLLAMA_ARGUMENTS = "invalid tool call arguments"
# The part types Ollama's OpenAI layer converts; any other is "invalid message format".
OLLAMA_PART_TYPES = ("text", "image_url", "input_audio")
SGLANG_ARGUMENTS_JSON = "Assistant tool call function.arguments must be valid JSON."
SGLANG_ARGUMENTS_OBJECT = "Assistant tool call function.arguments must be a JSON object."
SGLANG_TOOL_ROLE = "Message has tool role, but there was no previous assistant message with a tool call!"
# The models whose chat templates raise SGLANG_TOOL_ROLE.
_LAST_CALL_TEMPLATE = re.compile(r"gpt-oss|minimax-m2", re.IGNORECASE)
SAMBANOVA_CONTENT_LIST = (
    "Unable to tokenize message with status code 400 for model {model}: "
    "Invalid 'content' type. Expected one of: ['str'], got list."
)
V1_MISTRAL = "After the optional system message, conversation roles must alternate user/assistant/user/assistant/..."
V1_PLAIN = "Conversation roles must alternate user/assistant/user/assistant/..."
# llama.cpp's server (see the module docstring for the sources). The template's text closes a longer
# message that names the template line ("While executing CallExpression at line 189, ...").
LLAMACPP_MISTRAL = (
    "After the optional system message, conversation roles must alternate user and assistant roles "
    "except for tool calls and results."
)
LLAMACPP_NO_CONTENT = "Assistant message must contain either 'content' or 'tool_calls'!"
LLAMACPP_EXPECTED = (
    "Expected 'content' or 'tool_calls' (ref: https://github.com/ggml-org/llama.cpp/issues/8367 & "
    "https://github.com/ggml-org/llama.cpp/issues/12279)"
)

_MISTRAL_ID = re.compile(r"[a-zA-Z0-9]{9}")
# Mistral's model families. The first releases (Mistral 7B and Mixtral 8x, "-v0.x") are served with
# their Hugging Face Jinja templates, later ones (dated or numbered: Small 3.2 "-2506", Small 4,
# Devstral...) with the mistral-common tokenizer, as vLLM's own tests do.
_MISTRAL_FAMILY = re.compile(r"mixtral|(?:mi|magi|dev|mini|pix|code|vox)stral")
_MISTRAL_JINJA = re.compile(r"-v0\.|mistral-7b|mixtral-8x")
# The first Jinja templates, which take no system message at all (microsoft/autogen#1037).
_MISTRAL_NO_SYSTEM = re.compile(r"mistral-7b-instruct-v0\.[12]|mixtral-8x7b-instruct-v0\.1")
# Kimi models that think unless told not to: K2.5 and later ("k2p5" is Kimi for Coding's name).
_KIMI_THINKS = re.compile(r"k2(?:\.|p)[5-9]|kimi-k[3-9]")
# OpenRouter routes a model by its slug's prefix; these upstreams' own rules apply (W1).
OPENROUTER_UPSTREAMS = {
    "anthropic/": "anthropic",
    "mistralai/": "mistral",
    "deepseek/": "deepseek",
    "moonshotai/": "moonshot",
}


def model_name(model: object) -> str:
    """The model's own name, without a gateway's ``org/`` prefix (``deepseek/deepseek-v4-pro``)."""
    return model.rsplit("/", 1)[-1] if isinstance(model, str) else ""


def openrouter_upstream(model: object) -> str | None:
    """The provider whose rules apply to ``model`` behind OpenRouter; None for OpenAI's."""
    if isinstance(model, str):
        for prefix, provider in OPENROUTER_UPSTREAMS.items():
            if model.startswith(prefix):
                return provider
    return None


def deepseek_reasoner(body: dict[str, Any]) -> bool:
    return model_name(body.get("model")) == "deepseek-reasoner"


def deepseek_thinks(body: dict[str, Any]) -> bool:
    """DeepSeek answers in thinking mode, so tool-calling turns must carry ``reasoning_content`` (D3)."""
    if deepseek_reasoner(body):
        return True
    switch = _thinking_switch(body)
    if switch is not None:
        return switch
    # V4 models think unless thinking is disabled.
    return model_name(body.get("model")).startswith("deepseek-v4")


def moonshot_thinks(body: dict[str, Any]) -> bool:
    """A Kimi model answers in thinking mode, so tool-calling turns must carry ``reasoning_content`` (X4)."""
    name = model_name(body.get("model")).lower()
    if "thinking" in name:
        return True
    switch = _thinking_switch(body)
    if switch is not None:
        return switch
    return _KIMI_THINKS.search(name) is not None


def moonshot_takes_empty_reasoning(body: dict[str, Any]) -> bool:
    """Kimi K2.5 and later take ``reasoning_content: ""`` for a missing one; kimi-k2-thinking does not
    (theopenco/llmgateway PR#2093, checked against api.moonshot.ai)."""
    return "thinking" in model_name(body.get("model")).lower()


def _thinking_switch(body: dict[str, Any]) -> bool | None:
    """Thinking turned on or off by ``thinking: {type}`` (DeepSeek, Moonshot) or OpenRouter's
    ``reasoning`` (``enabled``, or an effort or token budget); None when the body says neither."""
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") in ("enabled", "disabled"):
        return bool(thinking["type"] == "enabled")
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict):
        enabled = reasoning.get("enabled")
        if isinstance(enabled, bool):
            return enabled
        if "effort" in reasoning or "max_tokens" in reasoning:
            return True
    return None


def deepseek_column(body: dict[str, Any], index: int) -> int:
    """The column serde_json prints for a message DeepSeek cannot read: the body's bytes up to the
    comma (or closing bracket) after that message, where its parser stood once the message was
    read whole, in the compact JSON that clients send (``JSON.stringify``, httpx)."""
    keys = list(body)
    before = keys[: keys.index("messages")]
    head = "".join(f"{_compact(k)}:{_compact(body[k])}," for k in before)
    messages = ",".join(_compact(m) for m in body["messages"][: index + 1])
    return len(f'{{{head}"messages":[{messages},'.encode())


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def arguments_hold_object(arguments: object) -> bool:
    """Whether a tool call's ``arguments`` are what MiniMax parses them as: the JSON text of an
    object. Empty text, and arguments that are not text at all, are not judged here."""
    if not isinstance(arguments, str) or not arguments.strip():
        return True
    try:
        return isinstance(json.loads(arguments), dict)
    except ValueError:
        return False


def vllm_template(model: object) -> str | None:
    """How vLLM checks the roles for ``model``: ``mistral-no-system``, ``mistral`` (Jinja templates),
    ``mistral-common`` (the tokenizer's own checks), ``plain`` (Gemma, Llama-2), None if unknown."""
    if not isinstance(model, str):
        return None
    name = model.lower()
    if _MISTRAL_FAMILY.search(name):
        if not _MISTRAL_JINJA.search(name):
            return "mistral-common"
        return "mistral-no-system" if _MISTRAL_NO_SYSTEM.search(name) else "mistral"
    if "gemma" in name or "llama-2" in name:
        return "plain"
    return None


@dataclass(frozen=True, slots=True)
class _Msg:
    role: str
    raw: dict[str, Any]
    calls: tuple[str, ...]  # tool_call ids of an assistant message, in order
    tool_call_id: str | None


@dataclass(frozen=True, slots=True)
class _Fault:
    """A pairing fault in provider-neutral terms."""

    kind: str  # missing | orphan | unknown | duplicate
    index: int
    ids: tuple[str, ...] = ()
    first: int = 0
    owner: int = 0
    """The assistant message whose calls the fault concerns (not set for an orphan)."""


def parse(body: object) -> tuple[dict[str, Any], list[_Msg]]:
    """The body and its messages, shape-checked."""
    b = body_dict(body)
    raw_messages = required_list(b, "messages")
    messages: list[_Msg] = []
    for i, raw in enumerate(raw_messages):
        m = as_dict(raw, f"messages[{i}]")
        role = as_str(m.get("role"), f"messages[{i}].role")
        calls: list[str] = []
        tool_calls = m.get("tool_calls")
        if tool_calls is not None:
            for k, call in enumerate(as_list(tool_calls, f"messages[{i}].tool_calls")):
                c = as_dict(call, f"messages[{i}].tool_calls[{k}]")
                calls.append(as_str(c.get("id"), f"messages[{i}].tool_calls[{k}].id"))
                fn = as_dict(c.get("function"), f"messages[{i}].tool_calls[{k}].function")
                as_str(fn.get("name"), f"messages[{i}].tool_calls[{k}].function.name")
        tool_call_id = None
        if role == "tool" and m.get("tool_call_id") is not None:
            # A missing or null id is a transcript fault the provider reports (O9), not a shape error.
            tool_call_id = as_str(m.get("tool_call_id"), f"messages[{i}].tool_call_id")
        content = m.get("content")
        if isinstance(content, list):
            for k, part in enumerate(content):
                as_dict(part, f"messages[{i}].content[{k}]")
        messages.append(_Msg(role, m, tuple(calls), tool_call_id))
    return b, messages


def faults(messages: list[_Msg]) -> list[_Fault]:
    """Pairing faults in the order OpenAI finds them: one linear pass."""
    found: list[_Fault] = []
    i = 0
    n = len(messages)
    while i < n:
        msg = messages[i]
        if msg.role == "tool":
            found.append(_Fault("orphan", i))
            i += 1
            continue
        if msg.role != "assistant" or not msg.calls:
            i += 1
            continue
        pending = dict.fromkeys(msg.calls)
        answered: dict[str, int] = {}
        later: list[_Fault] = []
        j = i + 1
        while j < n and messages[j].role == "tool":
            ident = messages[j].tool_call_id or ""
            if ident in answered:
                later.append(_Fault("duplicate", j, (ident,), answered[ident], owner=i))
            elif ident in pending:
                del pending[ident]
                answered[ident] = j
            else:
                later.append(_Fault("unknown", j, (ident,), owner=i))
            j += 1
        if pending:
            found.append(_Fault("missing", i, tuple(pending), owner=i))
        found.extend(later)
        i = j
    return found


def validate_compatible(body: object, provider: str) -> list[Violation]:
    """The rules of ``provider``, an OpenAI-compatible server (or OpenAI itself), for a Chat body;
    the providers reached through a conversion (Anthropic's and Gemini's compatibility endpoints,
    Bedrock, OpenRouter's upstreams) are ``_chat``'s to dispatch."""
    b, messages = parse(body)
    if provider == "mistral":
        return _mistral(messages)
    if provider == "vllm":
        return _vllm(b, messages)
    if provider == "llamacpp":
        return _llamacpp(b, messages)
    if provider == "fireworks":
        return _fireworks(messages)
    if provider == "xai":
        return _xai(messages)
    if provider == "zhipu":
        return _zhipu(messages)
    if provider == "nim":
        return _nim(messages)
    if provider == "lmstudio":
        return _lmstudio(b, messages)
    if provider == "ollama":
        return _ollama(messages)
    if provider == "sglang":
        return _sglang(b, messages)
    if provider == "sambanova":
        return _sambanova(b, messages)
    if provider == "together":
        return []
    if provider == "deepseek":
        return _deepseek(b, messages)
    out = _openai(b, messages, provider)
    if provider == "cerebras":
        out = _cerebras(messages) + out
    if provider == "groq":
        out = _groq(messages) + out
    if provider == "moonshot":
        out += _moonshot(b, messages)
    return out


def _tool_names(b: dict[str, Any], provider: str) -> list[Violation]:
    out: list[Violation] = []
    tools = b.get("tools")
    for k, tool in enumerate(tools if isinstance(tools, list) else ()):
        function = tool.get("function") if isinstance(tool, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or name == "":
            continue
        param = f"tools[{k}].function.name"
        if _refused_name(name):
            text = O15_PATTERN.format(k=k)
            out.append(violation(provider, "openai.O15", text, None, param=param, code="invalid_value"))
        elif len(name) > 64:
            text = O15_LENGTH.format(k=k, length=len(name))
            out.append(violation(provider, "openai.O15", text, None, param=param, code="string_above_max_length"))
    return out


def _schema(messages: list[_Msg], provider: str) -> list[Violation]:
    out: list[Violation] = []
    if not messages:
        return [violation(provider, "openai.O5", O5_MESSAGES, None, param="messages", code="empty_array")]
    for i, msg in enumerate(messages):
        if provider in ("openai", "azure") and _refused_name(msg.raw.get("name")):
            param = f"messages[{i}].name"
            out.append(violation(provider, "openai.O14", O14_NAME.format(n=i), i, param=param, code="invalid_value"))
        tool_calls = msg.raw.get("tool_calls")
        if tool_calls == [] and provider == "dashscope":
            out.append(violation(provider, "dashscope.X2", X2_EMPTY_TOOL_CALLS, i))
        elif tool_calls == []:
            param = f"messages[{i}].tool_calls"
            out.append(violation(provider, "openai.O5", O5_TOOL_CALLS.format(n=i), i, param=param, code="empty_array"))
        for k, call in enumerate(tool_calls or ()):
            if provider in ("openai", "azure") and len(call["id"]) > OPENAI_TOOL_ID_MAX:
                param = f"messages[{i}].tool_calls[{k}].id"
                text = O10.format(n=i, k=k, length=len(call["id"]))
                out.append(violation(provider, "openai.O10", text, i, param=param, code="string_above_max_length"))
            if call["function"]["name"] == "":
                param = f"messages[{i}].tool_calls[{k}].function.name"
                text = O5_NAME.format(n=i, k=k)
                out.append(violation(provider, "openai.O5", text, i, param=param, code="empty_string"))
            elif provider in ("openai", "azure") and _refused_name(call["function"]["name"]):
                param = f"messages[{i}].tool_calls[{k}].function.name"
                text = O14_CALL.format(n=i, k=k)
                out.append(violation(provider, "openai.O14", text, i, param=param, code="invalid_value"))
            kind = _JSON_KIND.get(type(call["function"].get("arguments")))
            if kind is not None and provider in ("openai", "azure"):
                param = f"messages[{i}].tool_calls[{k}].function.arguments"
                text = O13.format(n=i, k=k, kind=kind)
                out.append(violation(provider, "openai.O13", text, i, param=param, code="invalid_type"))
        function_call = msg.raw.get("function_call")
        if (
            provider in ("openai", "azure")
            and msg.role == "assistant"
            and isinstance(function_call, dict)
            and "arguments" not in function_call
        ):
            param = f"messages[{i}].function_call.arguments"
            text = O11.format(n=i)
            out.append(violation(provider, "openai.O11", text, i, param=param, code="missing_required_parameter"))
        if msg.role == "tool" and msg.tool_call_id is None:
            out.append(violation(provider, "openai.O9", O9, i, param=f"messages.[{i}].tool_call_id", code=None))
        if provider in ("openai", "azure") and msg.role == "function" and msg.raw.get("name") is None:
            out.append(violation(provider, "openai.O12", O12, i, param=f"messages.[{i}].name", code=None))
        content = msg.raw.get("content", "")
        if content is None and not (msg.role == "assistant" and (msg.calls or msg.raw.get("function_call"))):
            out.append(violation(provider, "openai.O6", O6, i, param=f"messages.[{i}].content", code=None))
        if isinstance(content, list):
            for k, part in enumerate(content):
                if "type" not in part:
                    param = f"messages[{i}].content[{k}].type"
                    text = O6_PART.format(n=i, k=k)
                    out.append(
                        violation(provider, "openai.O6", text, i, param=param, code="missing_required_parameter")
                    )
    return out


def _openai(b: dict[str, Any], messages: list[_Msg], provider: str) -> list[Violation]:
    out = _schema(messages, provider)
    if provider in ("openai", "azure"):
        out += _tool_names(b, provider)
    if provider == "minimax":
        for i, msg in enumerate(messages):
            for call in msg.raw.get("tool_calls") or ():
                if not arguments_hold_object(call["function"].get("arguments")):
                    text = X3_ARGUMENTS.format(id=call["id"])
                    out.append(violation(provider, "minimax.arguments-not-object", text, i))
        called = {c for m in messages for c in m.calls}
        for f in faults(messages):
            ident = messages[f.index].tool_call_id
            if f.kind in ("orphan", "unknown") and ident is not None and ident not in called:
                out.append(violation(provider, "minimax.X3", X3_NOT_FOUND.format(id=ident), f.index))
            else:
                out.append(violation(provider, "minimax.X3", X3, f.index))
        return out
    for f in faults(messages):
        role_param = f"messages.[{f.index}].role"
        if f.kind == "missing" and provider == "dashscope":
            out.append(violation(provider, "dashscope.X2", X2_MISSING.format(n=f.index), f.index))
        elif f.kind == "missing":
            text = O1.format(ids=", ".join(f.ids))
            out.append(violation(provider, "openai.O1", text, f.index, param=role_param, code=None))
        elif f.kind == "orphan" and provider == "dashscope":
            out.append(violation(provider, "dashscope.X2", X2_ORPHAN, f.index))
        elif f.kind == "orphan" and provider == "cerebras":
            out.append(violation(provider, "cerebras.orphan-tool-message", CEREBRAS_ORPHAN, f.index))
        elif f.kind == "orphan":
            out.append(violation(provider, "openai.O2", O2, f.index, param=role_param, code=None))
        elif f.kind == "unknown":
            param = f"messages.[{f.index}].tool_call_id"
            out.append(violation(provider, "openai.O3", O3.format(id=f.ids[0]), f.index, param=param, code=None))
        else:
            param = f"messages.[{f.index}].tool_call_id"
            text = O4.format(id=f.ids[0], first=f.first, n=f.index)
            out.append(violation(provider, "openai.O4", text, f.index, param=param, code=None))
    return out


def _deepseek(b: dict[str, Any], messages: list[_Msg]) -> list[Violation]:
    p = "deepseek"
    out: list[Violation] = []
    for i, msg in enumerate(messages):
        if msg.role == "assistant" and isinstance(msg.raw.get("content"), list):
            text = D_CONTENT.format(n=i, column=deepseek_column(b, i))
            out.append(violation(p, "deepseek.content-not-string", text, i))
            break
    missing_reported: set[int] = set()
    for f in faults(messages):
        if f.kind == "orphan":
            out.append(violation(p, "deepseek.D2", D2, f.index))
            continue
        # DeepSeek counts the tool messages after the call: an unknown or repeated id leaves one unanswered.
        if f.owner not in missing_reported:
            missing_reported.add(f.owner)
            out.append(violation(p, "deepseek.D1", D1, f.owner))
    out.sort(key=lambda v: v.message_index if v.message_index is not None else -1)
    reasoner = deepseek_reasoner(b)
    if deepseek_thinks(b):
        for i, msg in enumerate(messages):
            if msg.role == "assistant" and msg.calls and not isinstance(msg.raw.get("reasoning_content"), str):
                text = D3_REASONER.format(n=i) if reasoner else D3
                out.append(violation(p, "deepseek.D3", text, i))
    if reasoner:
        for i in range(1, len(messages)):
            role = messages[i].role
            if role in ("user", "assistant") and messages[i - 1].role == role:
                out.append(violation(p, "deepseek.D4", D4.format(i=i - 1, j=i), i - 1))
        # System messages after the last assistant turn do not end the conversation (deepseek4j#80).
        last = len(messages) - 1
        while last >= 0 and messages[last].role in _SYSTEM_ROLES:
            last -= 1
        if last >= 0 and messages[last].role == "assistant" and messages[last].raw.get("prefix") is not True:
            out.append(violation(p, "deepseek.D5", D5, last))
    return out


_SYSTEM_ROLES = frozenset(("system", "developer"))


def _mistral(messages: list[_Msg], p: str = "mistral") -> list[Violation]:
    """Mistral's API (``p`` mistral), or its mistral-common tokenizer behind vLLM (``p`` vllm, in vLLM's
    envelope; no M4, whose text there is not in the catalogue, and no id pattern, vLLM shortens ids).

    In mistral-common's order (``MistralRequestValidator``): the last message (M4), the order of
    roles (M3), calls against results (M2), then each message's content (M5, an assistant message
    with neither content nor tool calls; M1, a tool message's id).
    """
    out: list[Violation] = []

    def add(rule: str, text: str, i: int, type_: str | None = None, code: str | None = None) -> None:
        if p == "mistral" and type_ is not None:
            out.append(violation(p, rule, text, i, type_=type_, code=code))
        else:
            out.append(violation(p, rule, text, i))

    # vLLM reads an empty string as no content; Mistral's API takes it.
    no_content: tuple[str | None, ...] = (None, "") if p == "vllm" else (None,)
    n = len(messages)
    if p == "mistral" and messages and messages[-1].role == "assistant" and messages[-1].raw.get("prefix") is not True:
        add("mistral.M4", M4, n - 1)
    i = 0
    while i < n:
        msg = messages[i]
        previous = messages[i - 1].role if i else None
        if previous in ("tool", "user") and msg.role in ("tool", "user") and previous != msg.role:
            add("mistral.M3", M3.format(role=msg.role, previous=previous), i, "invalid_request_message_order", "3230")
            i += 1
            while msg.role == "tool" and i < n and messages[i].role == "tool":
                i += 1
            continue
        i += 1
    i = 0
    while i < n:
        msg = messages[i]
        if msg.role == "tool" and i and messages[i - 1].role == "user":
            # A run of tool messages after a user message is out of order (M3), not miscounted.
            while i < n and messages[i].role == "tool":
                i += 1
            continue
        if msg.role == "tool" or (msg.role == "assistant" and msg.calls):
            # A run of tool messages answers the calls of the assistant message just before it.
            calls = len(msg.calls)
            j = i + 1 if msg.role == "assistant" else i
            start = j
            while j < n and messages[j].role == "tool":
                j += 1
            if j - start != calls:
                add("mistral.M2", M2, i)
            i = max(j, i + 1)
            continue
        i += 1
    for i, msg in enumerate(messages):
        if msg.role == "assistant" and not msg.calls and msg.raw.get("content") in no_content:
            add("mistral.M5", M5 if p == "mistral" else M5_VLLM.format(prefix=msg.raw.get("prefix") is True), i)
        if msg.role == "tool" and msg.tool_call_id is None:
            add("mistral.M1", M1_MISSING, i)
        if p != "mistral":
            continue
        ids = list(msg.calls)
        if msg.tool_call_id is not None:
            ids.append(msg.tool_call_id)
        for ident in ids:
            if not _MISTRAL_ID.fullmatch(ident):
                add("mistral.M1", M1.format(id=ident), i, "invalid_function_call", "3280")
    return out


def _groq(messages: list[_Msg]) -> list[Violation]:
    out: list[Violation] = []
    for i, msg in enumerate(messages):
        if msg.role in ("system", "tool") and not isinstance(msg.raw.get("content"), str):
            out.append(violation("groq", "groq.X5", X5.format(n=i, role=msg.role), i))
        if msg.role == "tool" and msg.tool_call_id is None:
            text = X5_MISSING.format(n=i, role="tool", field="tool_call_id")
            out.append(violation("groq", "groq.X5", text, i))
        for key in groq_unsupported_keys(msg.role, msg.raw):
            text = X5_UNSUPPORTED.format(n=i, role=msg.role, field=key)
            out.append(violation("groq", "groq.X5", text, i))
    return out


def groq_unsupported_keys(role: object, message: dict[str, Any]) -> list[str]:
    """The keys of a ``role`` message that Groq's schema does not take, in the message's order."""
    allowed = GROQ_MESSAGE_KEYS.get(role) if isinstance(role, str) else None
    return [] if allowed is None else [k for k in message if k not in allowed]


def _cerebras(messages: list[_Msg]) -> list[Violation]:
    """Cerebras's schema check: every refused key of the request in one error, a line each."""
    lines: list[str] = []
    first: int | None = None
    for i, msg in enumerate(messages):
        for key in cerebras_refused_keys(msg.role, msg.raw):
            lines.append(CEREBRAS_PROPERTY.format(n=i, role=msg.role, field=key))
            first = i if first is None else first
    if not lines:
        return []
    text = "\n".join(lines)
    return [
        violation(
            "cerebras", "cerebras.unsupported-property", text, first, param="validation_error", code="wrong_api_format"
        )
    ]


def cerebras_refused_keys(role: object, message: dict[str, Any]) -> list[str]:
    """The keys of a ``role`` message that Cerebras refuses, in the message's order."""
    refused = CEREBRAS_REFUSED_KEYS.get(role) if isinstance(role, str) else None
    return [] if refused is None else [k for k in message if k in refused]


def _fireworks(messages: list[_Msg]) -> list[Violation]:
    out: list[Violation] = []
    for i, msg in enumerate(messages):
        for key in fireworks_unsupported_keys(msg.role, msg.raw):
            text = FIREWORKS_EXTRA.format(n=i, field=key, value=repr(msg.raw[key]))
            out.append(violation("fireworks", "fireworks.extra-input", text, i))
    return out


def fireworks_unsupported_keys(role: object, message: dict[str, Any]) -> list[str]:
    """The keys of a message that Fireworks's schema forbids, in the message's order (any role)."""
    return [k for k in message if k not in FIREWORKS_MESSAGE_KEYS]


def _xai(messages: list[_Msg]) -> list[Violation]:
    out: list[Violation] = []
    for i, msg in enumerate(messages):
        for call in msg.raw.get("tool_calls") or ():
            if call["function"].get("arguments") == "":
                out.append(violation("xai", "xai.arguments-not-json", XAI_ARGUMENTS.format(id=call["id"]), i))
    return out


def xai_refuses_arguments(arguments: object) -> bool:
    """Whether xAI refuses a tool call's ``arguments`` text: empty, or not JSON at all (it parses
    them, and JSON of any kind passes its parse). Arguments that are not text are not judged here."""
    if not isinstance(arguments, str):
        return False
    try:
        json.loads(arguments)
    except ValueError:
        return True
    return False


def _zhipu(messages: list[_Msg]) -> list[Violation]:
    if not messages or any(m.role == "user" for m in messages):
        return []
    # The whole list is refused; the first message past the system prompt is where a user turn is missing.
    first = next((i for i, m in enumerate(messages) if m.role not in _SYSTEM_ROLES), len(messages) - 1)
    return [violation("zhipu", "zhipu.1214-no-user-message", ZHIPU_1214, first)]


def _nim(messages: list[_Msg]) -> list[Violation]:
    return [
        violation("nim", "nim.empty-assistant-content", NIM_EMPTY_ASSISTANT, i)
        for i, msg in enumerate(messages)
        if msg.role == "assistant" and msg.raw.get("content") == "" and msg.raw.get("tool_calls")
    ]


def _lmstudio(b: dict[str, Any], messages: list[_Msg]) -> list[Violation]:
    model = b.get("model")
    if not messages or not isinstance(model, str) or not _QWEN_USER_QUERY.search(model):
        return []
    if any(m.role == "user" for m in messages):
        return []
    # The template refuses the whole list; the first message past the system prompt is where a user turn is missing.
    first = next((i for i, m in enumerate(messages) if m.role not in _SYSTEM_ROLES), len(messages) - 1)
    return [violation("lmstudio", "lmstudio.no-user-query", LMSTUDIO_NO_USER_QUERY, first)]


def _ollama(messages: list[_Msg]) -> list[Violation]:
    """FromChatRequest: each message in order, the first it cannot convert refused."""
    for i, msg in enumerate(messages):
        content = msg.raw.get("content")
        if isinstance(content, list) and not all(ollama_reads_part(p) for p in content):
            return [violation("ollama", "ollama.invalid-message-format", OLLAMA_MESSAGE_FORMAT, i)]
        tool_calls = msg.raw.get("tool_calls")
        if content is None and tool_calls is None:
            return [violation("ollama", "ollama.content-type-nil", OLLAMA_CONTENT_NIL, i)]
        if any(ollama_refuses_arguments(c["function"].get("arguments")) for c in tool_calls or ()):
            return [violation("ollama", "ollama.invalid-tool-call-arguments", OLLAMA_ARGUMENTS, i)]
    return []


def ollama_reads_part(part: dict[str, Any]) -> bool:
    """Whether Ollama's OpenAI layer converts a content part: its three types, a text's text a string."""
    kind = part.get("type")
    if kind == "text":
        return isinstance(part.get("text"), str)
    return isinstance(kind, str) and kind in OLLAMA_PART_TYPES


def ollama_refuses_arguments(arguments: object) -> bool:
    """Whether Ollama refuses a call's ``arguments`` text: it does not unmarshal into a JSON object
    (``null`` does, into Go's nil map). Arguments that are not text are not judged here."""
    if not isinstance(arguments, str):
        return False
    try:
        value = json.loads(arguments)
    except ValueError:
        return True
    return value is not None and not isinstance(value, dict)


def sglang_arguments_refusal(arguments: object) -> str | None:
    """SGLang's text for a call's ``arguments`` text it refuses (not JSON, or JSON of something
    other than an object), or None. Arguments that are not text are not judged here."""
    if not isinstance(arguments, str):
        return None
    try:
        value = json.loads(arguments)
    except ValueError:
        return SGLANG_ARGUMENTS_JSON
    return None if isinstance(value, dict) else SGLANG_ARGUMENTS_OBJECT


def _sglang(b: dict[str, Any], messages: list[_Msg]) -> list[Violation]:
    for i, msg in enumerate(messages):
        for call in msg.raw.get("tool_calls") or ():
            text = sglang_arguments_refusal(call["function"].get("arguments"))
            if text is not None:
                return [violation("sglang", "sglang.arguments-not-object", text, i)]
    model = b.get("model")
    if not isinstance(model, str) or not _LAST_CALL_TEMPLATE.search(model):
        return []
    called = False  # whether the nearest assistant message so far made a call
    for i, msg in enumerate(messages):
        if msg.role == "assistant":
            called = bool(msg.calls)
        elif msg.role == "tool" and not called:
            return [violation("sglang", "sglang.tool-role-without-call", SGLANG_TOOL_ROLE, i)]
    return []


def _sambanova(b: dict[str, Any], messages: list[_Msg]) -> list[Violation]:
    model = b.get("model")
    text = SAMBANOVA_CONTENT_LIST.format(model=model if isinstance(model, str) else "")
    for i, msg in enumerate(messages):
        if sambanova_refuses_content(msg.raw.get("content")):
            return [violation("sambanova", "sambanova.content-not-string", text, i)]
    return []


def sambanova_refuses_content(content: object) -> bool:
    """Whether SambaNova's tokenizer refuses a message's content as this profile judges it: an
    array of text parts (or none); an array holding another part is not judged."""
    return isinstance(content, list) and all(
        isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str) for p in content
    )


def _moonshot(b: dict[str, Any], messages: list[_Msg]) -> list[Violation]:
    if not moonshot_thinks(b):
        return []
    empty_ok = moonshot_takes_empty_reasoning(b)
    out: list[Violation] = []
    for i, msg in enumerate(messages):
        if msg.role != "assistant" or not msg.calls:
            continue
        reasoning = msg.raw.get("reasoning_content")
        if not isinstance(reasoning, str) or (reasoning == "" and not empty_ok):
            out.append(violation("moonshot", "moonshot.X4", X4.format(n=i), i))
    return out


def _vllm(b: dict[str, Any], messages: list[_Msg]) -> list[Violation]:
    template = vllm_template(b.get("model"))
    if template is None:
        return []
    if template == "mistral-common":
        return _mistral(messages, "vllm")
    return _template_roles(messages, template, "vllm")


def _llamacpp(b: dict[str, Any], messages: list[_Msg]) -> list[Violation]:
    """llama-server's own message checks, then the GGUF chat template's role check (a 500)."""
    out: list[Violation] = []
    for i, msg in enumerate(messages):
        has_calls = "tool_calls" in msg.raw
        if msg.role == "assistant" and "content" not in msg.raw and not has_calls:
            out.append(violation("llamacpp", "llamacpp.empty-assistant", LLAMACPP_NO_CONTENT, i))
        elif "content" in msg.raw and msg.raw["content"] is None and not has_calls:
            out.append(violation("llamacpp", "llamacpp.empty-assistant", LLAMACPP_EXPECTED, i))
    template = vllm_template(b.get("model"))
    if template is None:
        return out
    # llama.cpp renders every model with its GGUF's Jinja template: the later Mistral models too,
    # whose templates word the check their own way (vLLM serves those with mistral-common).
    return out + _template_roles(messages, template, "llamacpp")


def _template_roles(messages: list[_Msg], template: str, provider: str) -> list[Violation]:
    checked = messages
    if template in ("mistral", "mistral-common"):
        text = LLAMACPP_MISTRAL if template == "mistral-common" else V1_MISTRAL
        # Mistral's tool-aware templates leave tool messages and tool-calling turns out of the check.
        checked = [m for m in messages if m.role != "tool" and not m.calls]
    else:
        text = V1_PLAIN
    rule, status = ("vllm.V1", 400) if provider == "vllm" else ("llamacpp.template-role-order", 500)
    # Only the first message may be the system message the template takes out (none, for the first
    # Mistral templates); the template raises at the first turn out of place: every such turn is listed.
    system_first = template != "mistral-no-system"
    position = {id(m): i for i, m in enumerate(messages)}
    out: list[Violation] = []
    k = 0
    for n, msg in enumerate(checked):
        if msg.role == "system" and n == 0 and system_first:
            continue
        expected = "user" if k % 2 == 0 else "assistant"
        if msg.role != expected:
            out.append(violation(provider, rule, text, position[id(msg)], status=status))
        k += 1
    return out
