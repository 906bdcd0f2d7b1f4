"""Every violation the validator can report: its code, who reports it, its text and its source.

The single source of truth for the codes in ``Violation.rule``: the validator modules emit them,
this table names them (a test holds the two to each other), ``suture rules --violations`` prints
it, and the parity test repairs a body for each. Texts are the modules' own constants, not copies.
``source`` is the rule's section in the catalogue (``PROVIDER_RULES.md``) or, for a text the
catalogue lacks, the public report it was taken from.

``UNREPAIRABLE`` names the codes no repair can clear in some of their forms without inventing
data the request lost; ``NOT_YET_REPAIRED`` the ones a rule could clear but none does yet.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from . import _anthropic as an
from . import _bedrock as br
from . import _convert as cv
from . import _gemini as gm
from . import _openai_chat as oc
from . import _responses as rs


@dataclass(frozen=True, slots=True)
class Code:
    """One code the validator reports (``Violation.rule``)."""

    code: str
    providers: tuple[str, ...]
    """The validator profiles that report it (see ``sanitizer.providers``)."""
    templates: tuple[str, ...]
    """Its message texts, with ``{placeholders}`` for the indexes and ids the provider prints."""
    source: str


# The profiles that report each family: the provider itself, the hosts that answer alike, and
# the gateways whose conversion reaches it (OpenRouter passes its upstreams' errors on, W1).
# DeepSeek's Anthropic-compatible endpoint is checked by Anthropic's rules, its own texts for them
# being unknown, except thinking, where it answers its own D3 instead of A13.
_ANTHROPIC = ("anthropic", "bedrock", "vertex", "anthropic-openai-compat", "openrouter", "deepseek-anthropic-compat")
_ANTHROPIC_A13 = tuple(p for p in _ANTHROPIC if p != "deepseek-anthropic-compat")
# What only an Anthropic body holds (a top-level ``system``): a Chat body converted for Anthropic
# is not checked for it.
_ANTHROPIC_BODY = ("anthropic", "bedrock", "vertex", "deepseek-anthropic-compat")
_OPENAI = ("openai", "azure", "groq", "moonshot", "openrouter")
# Cerebras and DashScope word some of OpenAI's checks their own way (their own codes below).
_OPENAI_O1 = (*_OPENAI, "cerebras")
_OPENAI_O3 = (*_OPENAI, "cerebras", "dashscope")
_OPENAI_SCHEMA = (*_OPENAI, "minimax", "cerebras", "dashscope")
_GEMINI = ("gemini", "vertex", "gemini-openai-compat")
_RESPONSES = ("openai", "azure")
_BEDROCK = ("bedrock",)
_DEEPSEEK = ("deepseek", "openrouter")
_DEEPSEEK_D3 = (*_DEEPSEEK, "deepseek-anthropic-compat")
_MISTRAL = ("mistral", "openrouter")
_MISTRAL_COMMON = ("mistral", "vllm", "openrouter")
_PEERS = "PEERS.md section 0 (reported by peers' users; not in the catalogue)"


def _catalogue(section: int, rule: str) -> str:
    return f"PROVIDER_RULES.md section {section}, {rule}"


def _section(family: str, section: int, providers: tuple[str, ...], texts: dict[str, tuple[str, ...]]) -> list[Code]:
    """The codes of one catalogue section, each sourced to its rule there (``A10-system`` to A10)."""
    return [
        Code(f"{family}.{rule}", providers, templates, _catalogue(section, rule.split("-")[0]))
        for rule, templates in texts.items()
    ]


_CODES = (
    *_section(
        "anthropic",
        1,
        _ANTHROPIC,
        {
            "A1": (an.A1,),
            "A2": (an.A2, an.A2_SERVER),
            "A4": (an.A4,),
            "A5": (an.A5,),
            "A6": (an.A6,),
            "A7": (an.A7,),
            "A8": (an.A8,),
            "A11": (an.A11,),
            "A12": (an.A12, an.A12_SERVER),
        },
    ),
    *_section("anthropic", 1, _ANTHROPIC_A13, {"A13": (an.A13, an.A13_SHORT)}),
    *_section(
        "anthropic",
        1,
        _ANTHROPIC,
        {
            "A17": (an.A17,),
            "A18": (an.A18,),
            "A19": (an.A19,),
            "A20": (an.A20,),
        },
    ),
    Code(
        "anthropic.A10-system",
        _ANTHROPIC,
        (an.A10_SYSTEM, an.A10_SYSTEM_BEFORE),
        _catalogue(1, "A10") + "; the text since Claude Opus 4.8: anthropics/claude-code#61242, #61412 (2026-05)",
    ),
    Code(
        "anthropic.system-placement",
        ("anthropic",),
        (an.SYSTEM_PLACEMENT,),
        "platform.claude.com, Mid-conversation system messages (the placement rules); the text, a live 400 "
        "quoted in a public client's tests (not in the catalogue)",
    ),
    Code("anthropic.tools-required", _ANTHROPIC, (an.TOOLS_REQUIRED,), _PEERS),
    Code("anthropic.duplicate-result", _ANTHROPIC, (an.DUPLICATE_RESULT,), _PEERS + "; goose"),
    Code("anthropic.thinking-first", _ANTHROPIC, (an.THINKING_FIRST,), _PEERS),
    Code("anthropic.thinking-final", _ANTHROPIC, (an.THINKING_FINAL_BLOCK, an.THINKING_DISABLED_FINAL), _PEERS),
    Code(
        "anthropic.A10",
        ("bedrock",),
        (an.A10,),
        _catalogue(1, "A10") + "; on Bedrock: anthropics/anthropic-sdk-typescript#622, langchain4j/langchain4j#1864",
    ),
    Code(
        "anthropic.A6-system",
        _ANTHROPIC_BODY,
        (an.A6_SYSTEM,),
        "olimorris/codecompanion.nvim PR#2700, t8y2/dbx PR#1298 (not in the catalogue)",
    ),
    Code(
        "anthropic.A7-system",
        _ANTHROPIC_BODY,
        (an.A7_SYSTEM,),
        "anomalyco/opencode#35101, agentjido/req_llm#711 (not in the catalogue)",
    ),
    Code(
        "anthropic.A21",
        ("anthropic", "bedrock", "vertex"),
        (an.A21,),
        "vybestack/llxprt-code#2130 (2026 wording), anthropics/claude-code#6300, #15746 (2025 wording) "
        "(not in the catalogue)",
    ),
    Code(
        "anthropic.thinking-signature",
        ("anthropic", "bedrock", "vertex"),
        (an.THINKING_SIGNATURE,),
        "lbjlaq/Antigravity-Manager#1650 (Vertex); can1357/oh-my-pi PR#10486, earendil-works/pi#2063 "
        "(Bedrock, an empty signature too); maximhq/bifrost#6624 (not in the catalogue)",
    ),
    Code(
        "anthropic.A15",
        ("anthropic", "vertex"),
        (an.A15,),
        _catalogue(1, "A15") + "; for an empty signature: can1357/oh-my-pi PR#10486, kaitranntt/ccs#415",
    ),
    *_section("openai", 2, _OPENAI_O1, {"O1": (oc.O1,)}),
    *_section("openai", 2, _OPENAI, {"O2": (oc.O2,)}),
    *_section("openai", 2, _OPENAI_O3, {"O3": (oc.O3,), "O4": (oc.O4,)}),
    *_section(
        "openai",
        2,
        _OPENAI_SCHEMA,
        {
            "O5": (oc.O5_MESSAGES, oc.O5_TOOL_CALLS, oc.O5_NAME),
            "O6": (oc.O6, oc.O6_PART),
        },
    ),
    Code("openai.O9", _OPENAI_SCHEMA, (oc.O9,), "ymichael/open-codex#5 (OpenAI's text, through OpenRouter)"),
    Code(
        "openai.O10",
        ("openai", "azure", "openrouter"),
        (oc.O10,),
        "microsoft/autogen#6377 (OpenAI), Azure/azure-dev#7324, Portkey-AI/gateway#1062 (Azure) (not in the catalogue)",
    ),
    Code(
        "openai.O11",
        ("openai", "azure", "openrouter"),
        (oc.O11,),
        "BerriAI/litellm#6241 (Azure) (not in the catalogue)",
    ),
    Code(
        "openai.O12",
        ("openai", "azure", "openrouter"),
        (oc.O12,),
        "tmc/langchaingo PR#924 (not in the catalogue)",
    ),
    Code(
        "openai.O13",
        ("openai", "azure", "openrouter"),
        (oc.O13,),
        "aaif-goose/goose-mobile PR#20 (OpenAI) (not in the catalogue)",
    ),
    Code(
        "openai.O14",
        ("openai", "azure", "openrouter"),
        (oc.O14_NAME, oc.O14_CALL),
        "FlowiseAI/Flowise#2948 (a message's name), mcp-use/mcp-use#90 (a call's name) (not in the catalogue)",
    ),
    Code(
        "openai.O15",
        ("openai", "azure", "openrouter"),
        (oc.O15_PATTERN, oc.O15_LENGTH),
        "Vortiago/mcp-azure-devops PR#30, hackers365/xiaozhi-esp32-server-golang#268 (the pattern), "
        "use-novamira/novamira#12 (64 characters) (not in the catalogue)",
    ),
    *_section(
        "responses",
        3,
        _RESPONSES,
        {
            "R1": (rs.R1,),
            "R2": (rs.R2,),
            "R3": (rs.R3,),
            "R4": (rs.R4,),
            "R5": (rs.R5,),
            "R6": (rs.R6,),
            "R7": (rs.R7,),
        },
    ),
    Code(
        "responses.R9",
        _RESPONSES,
        (rs.R9,),
        "AAswordman/Operit#797 (OpenAI), microsoft/agent-framework-go#783 (Azure) (not in the catalogue)",
    ),
    Code(
        "responses.R10",
        _RESPONSES,
        (rs.R10,),
        "microsoft/agent-framework-go#783 (Azure), anomalyco/opencode#25065 (not in the catalogue)",
    ),
    Code(
        "responses.R11",
        ("azure",),
        (rs.R11,),
        "openai/codex#3451 (Azure; OpenAI takes it, openai/codex PR#3528) (not in the catalogue)",
    ),
    Code(
        "responses.R12",
        _RESPONSES,
        (rs.R12,),
        "openai/openai-agents-python#2293, openai/openai-cs-agents-demo#34 (not in the catalogue)",
    ),
    Code(
        "responses.R13",
        _RESPONSES,
        (rs.R13,),
        "Wei-Shaw/sub2api#3818 (OpenAI, Codex desktop through a relay) (not in the catalogue)",
    ),
    Code(
        "responses.R14",
        _RESPONSES,
        (rs.R14,),
        "Wei-Shaw/sub2api#3818, a comment (OpenAI, through a relay) (not in the catalogue)",
    ),
    Code(
        "vllm.VR1",
        ("vllm",),
        (rs.VR1,),
        "langchain-ai/langchain#32885 (gpt-oss-120b on vLLM's /v1/responses) (not in the catalogue)",
    ),
    Code(
        "gemini.G1",
        _GEMINI,
        (gm.G1,),
        _catalogue(4, "G1") + "; a first call out of step on Gemini 1: langchain-ai/langchain-academy#28, "
        "firebase/firebase-ios-sdk#13685",
    ),
    *_section("gemini", 4, _GEMINI, {"G2": (gm.G2,), "G3": (gm.G3,), "G4": (gm.G4,)}),
    Code(
        "gemini.G5",
        _GEMINI,
        (gm.G5, gm.G5_VERTEX, cv.G5_COMPAT),
        _catalogue(4, "G5") + "; Vertex: epam/ai-dial-adapter-vertexai PR#164, genkit-ai/genkit#3690",
    ),
    *_section("gemini", 4, _GEMINI, {"G6": (gm.G6,)}),
    Code("gemini.G7", _GEMINI, (gm.G7,), _catalogue(4, "G7") + "; quoted from the API in anomalyco/opencode#47034"),
    Code(
        "gemini.response-not-object",
        ("gemini", "vertex"),
        (gm.RESPONSE_LIST,),
        "microsoft/vscode-copilot-release#14113 (not in the catalogue)",
    ),
    Code(
        "gemini.compat-result-without-name",
        ("gemini-openai-compat",),
        (cv.INVALID_ARGUMENT,),
        "NousResearch/hermes-agent#16478 (not in the catalogue)",
    ),
    Code(
        "gemini.part-without-data",
        ("gemini", "vertex"),
        (gm.NO_DATA,),
        "54xzh/FLIT#69, router-for-me/CLIProxyAPI#3485 (not in the catalogue)",
    ),
    Code(
        "gemini.response-parts-unsupported",
        ("gemini", "vertex"),
        (gm.RESPONSE_PARTS,),
        "google-gemini/gemini-cli#19436 (not in the catalogue)",
    ),
    Code(
        "gemini.response-beside-text",
        ("gemini", "vertex"),
        (gm.G7,),
        "vellum-ai/vellum-assistant PR#39495 (not in the catalogue)",
    ),
    Code(
        "gemini.invalid-role",
        ("gemini", "vertex"),
        (gm.INVALID_ROLE,),
        "router-for-me/CLIProxyAPI#2791, mem0ai/mem0#6393 (not in the catalogue)",
    ),
    *_section(
        "bedrock",
        5,
        _BEDROCK,
        {
            "B1": (br.B1,),
            "B2": (br.B2,),
            "B3": (br.B3, br.B3_TOOL_USE),
            "B4": (br.B4,),
            "B5": (br.B5,),
            "B6": (br.B6, br.B6_ERROR),
            "B7": (br.B7,),
            "B8": (br.B8,),
            "B9": (br.B9,),
        },
    ),
    *_section("mistral", 6, _MISTRAL_COMMON, {"M1": (oc.M1, oc.M1_MISSING), "M2": (oc.M2,), "M3": (oc.M3,)}),
    *_section("mistral", 6, _MISTRAL, {"M4": (oc.M4,)}),
    Code(
        "mistral.M5",
        _MISTRAL_COMMON,
        (oc.M5, oc.M5_VLLM),
        "OpenHands/OpenHands#8685; vllm-project/vllm#21089 (not in the catalogue)",
    ),
    *_section(
        "deepseek",
        7,
        _DEEPSEEK,
        {"D1": (oc.D1,), "D2": (oc.D2,)},
    ),
    *_section("deepseek", 7, _DEEPSEEK_D3, {"D3": (oc.D3, oc.D3_REASONER, oc.D3_ANTHROPIC)}),
    *_section("deepseek", 7, _DEEPSEEK, {"D4": (oc.D4,), "D5": (oc.D5,)}),
    Code(
        "deepseek.content-not-string",
        _DEEPSEEK,
        (oc.D_CONTENT,),
        "google/adk-python#226, huggingface/smolagents#1158, tailcallhq/forgecode#2008 (not in the catalogue)",
    ),
    Code("minimax.X3", ("minimax",), (oc.X3, oc.X3_NOT_FOUND), _catalogue(8, "X3") + "; MiniMax-AI/MiniMax-M2#76"),
    Code(
        "minimax.arguments-not-object",
        ("minimax",),
        (oc.X3_ARGUMENTS,),
        "obot-platform/nanobot#237 (not in the catalogue)",
    ),
    Code("moonshot.X4", ("moonshot", "openrouter"), (oc.X4,), _catalogue(8, "X4") + "; theopenco/llmgateway PR#2093"),
    Code(
        "groq.X5",
        ("groq",),
        (oc.X5, oc.X5_MISSING, oc.X5_UNSUPPORTED),
        _catalogue(8, "X5") + "; hackclub/ai#22; ServiceStack/llms#17",
    ),
    Code("vllm.V1", ("vllm",), (oc.V1_MISTRAL, oc.V1_PLAIN), _catalogue(8, "V1")),
    Code(
        "dashscope.X2",
        ("dashscope",),
        (oc.X2_ORPHAN, oc.X2_MISSING, oc.X2_EMPTY_TOOL_CALLS),
        _catalogue(8, "X2") + "; philschmid/mcp-openai-gemini-llama-example PR#5, QwenLM/qwen-code#2360 (orphan); "
        "QwenLM/qwen-code#315, alibaba/spring-ai-alibaba#914 (unanswered); cnblogs/dashscope-sdk PR#74 (empty)",
    ),
    Code(
        "cerebras.unsupported-property",
        ("cerebras",),
        (oc.CEREBRAS_PROPERTY,),
        "Kilo-Org/kilocode#10375, Alishahryar1/free-claude-code#1136, CherryHQ/cherry-studio#16790, "
        "QwenLM/qwen-code#11045 (not in the catalogue)",
    ),
    Code(
        "llamacpp.empty-assistant",
        ("llamacpp",),
        (oc.LLAMACPP_NO_CONTENT, oc.LLAMACPP_EXPECTED),
        "ggml-org/llama.cpp#12279, ggml-org/llama.cpp PR#12293, ggml-org/llama.cpp#8367 (not in the catalogue)",
    ),
    Code(
        "llamacpp.template-role-order",
        ("llamacpp",),
        (oc.V1_PLAIN, oc.V1_MISTRAL, oc.LLAMACPP_MISTRAL),
        "status 500: nextai-translator/raycast-openai-translator#34, janhq/jan#6254 (gemma); "
        "ggml-org/llama.cpp#19851, SWE-agent/mini-swe-agent#759, sipeed/picoclaw#207 (Devstral, Mistral 3) "
        "(not in the catalogue)",
    ),
    Code(
        "fireworks.extra-input",
        ("fireworks",),
        (oc.FIREWORKS_EXTRA,),
        "microsoft/vscode#335780 (messages[2].cot_id, cot_summary); FlowiseAI/Flowise#2866, "
        "web-infra-dev/midscene#1322, boldsoftware/shelley#242 (the text's shape) (not in the catalogue)",
    ),
    Code(
        "xai.arguments-not-json",
        ("xai",),
        (oc.XAI_ARGUMENTS,),
        "spiceai/spiceai#4734 (grok-2, a seeded call with empty arguments) (not in the catalogue)",
    ),
    Code(
        "zhipu.1214-no-user-message",
        ("zhipu",),
        (oc.ZHIPU_1214, oc.ZHIPU_1214_ZH),
        "anomalyco/opencode#2557 (zero user messages, api.z.ai), continuedev/continue#13259 (the English text); "
        "MetaGLM/zhipuai-sdk-python-v4#14, HKUDS/nanobot PR#3086 (open.bigmodel.cn, the Chinese text) "
        "(not in the catalogue)",
    ),
    Code(
        "nim.empty-assistant-content",
        ("nim",),
        (oc.NIM_EMPTY_ASSISTANT,),
        "CherryHQ/cherry-studio#16155, XiaomiMiMo/MiMo-Code#407 (google/diffusiongemma-26b-a4b-it); "
        'ogx-ai/ogx#1751 (null taken, "" refused) (not in the catalogue)',
    ),
    Code(
        "lmstudio.no-user-query",
        ("lmstudio",),
        (oc.LMSTUDIO_NO_USER_QUERY,),
        "lmstudio-ai/lmstudio-bug-tracker#1655, #1855, #1572 (Qwen3.5, Qwen3.6 templates) (not in the catalogue)",
    ),
    Code(
        "ollama.content-type-nil",
        ("ollama",),
        (oc.OLLAMA_CONTENT_NIL,),
        "QwenLM/qwen-code#3350 (Qwen Code against Ollama); ollama/ollama openai/openai.go FromChatRequest "
        "(not in the catalogue)",
    ),
    Code(
        "ollama.invalid-message-format",
        ("ollama",),
        (oc.OLLAMA_MESSAGE_FORMAT,),
        "tombii/better-ccflare#141; ollama/ollama openai/openai.go FromChatRequest (not in the catalogue)",
    ),
    Code(
        "ollama.invalid-tool-call-arguments",
        ("ollama",),
        (oc.OLLAMA_ARGUMENTS,),
        "ollama/ollama openai/openai.go FromChatRequest (not in the catalogue)",
    ),
    Code(
        "sglang.arguments-not-object",
        ("sglang",),
        (oc.SGLANG_ARGUMENTS_JSON, oc.SGLANG_ARGUMENTS_OBJECT),
        "sgl-project/sglang#9009; serving_chat.py parse_tool_call_arguments (not in the catalogue)",
    ),
    Code(
        "sglang.tool-role-without-call",
        ("sglang",),
        (oc.SGLANG_TOOL_ROLE,),
        "sgl-project/sglang PR#14748 (the 400 body; gpt-oss and MiniMax-M2 chat templates) (not in the catalogue)",
    ),
    Code(
        "sambanova.content-not-string",
        ("sambanova",),
        (oc.SAMBANOVA_CONTENT_LIST,),
        "musistudio/claude-code-router#965 (DeepSeek-V3.1 on SambaNova Cloud) (not in the catalogue)",
    ),
    Code(
        "cerebras.orphan-tool-message",
        ("cerebras",),
        (oc.CEREBRAS_ORPHAN,),
        "elizaOS/eliza#18179 (not in the catalogue)",
    ),
)

REGISTRY: Mapping[str, Code] = MappingProxyType({c.code: c for c in _CODES})

UNREPAIRABLE: Mapping[str, str] = MappingProxyType(
    {
        "anthropic.A13": "a thinking block the client dropped: the API takes only the signed original, which no "
        "repair can recreate (thinking that is there but misplaced is moved first by AN011); AN022 turns thinking "
        "off for the request instead, which a model that always thinks (Claude Opus 5.5, Sonnet 5.5, Fable, "
        "Mythos) refuses, and policy thinking_without_history leave forbids",
        "anthropic.A20": "a request sent with neither a message nor a system prompt: its prompt never reached "
        "the request, and a placeholder would hide that (AN007 covers a conversation that repairs emptied, "
        "and a system prompt sent alone)",
        "openai.O15": "a tool definition's name: the agent dispatches the model's calls by the names it "
        "declared, so only the agent can rename its tools (OA008 leaves the calls to a declared name as they are)",
        "gemini.G6": "a request sent with neither contents nor a system instruction: its prompt never reached "
        "the request (AN007 covers contents that repairs emptied, and a system instruction sent alone)",
    }
)

NOT_YET_REPAIRED: Mapping[str, str] = MappingProxyType({})
