"""The repair rules, one per module, and the order they run in.

Order matters (pydantic-ai's rationale, extended): system messages an Anthropic body holds in
``messages`` that the model does not take there go into the user turn they stand by (or, opening
the conversation, to its top-level field, which then loses its blank texts), and a Gemini body's
OpenAI-style roles are renamed or moved (GM007), before any rule looks at turns; then make ids
unambiguous (and drop the unsigned thinking no request can carry, before any rule moves thinking),
then drop the results nothing can own, then move what exists to where it belongs,
and only then synthesize what is still missing; cosmetic fixes for empty content come last,
since earlier repairs can leave a message empty. A last turn's orphan results are kept as text
just before orphans are dropped; turns are added around call turns (and calls signed) only once
same-role runs are merged. Once empty messages are gone, a final assistant message a model
cannot take is dropped, which can make the turn before it the last tool round; then thinking is
put first in every assistant turn (after all the moves that can split a turn from its
thinking), a final message the API refuses for its thinking is settled (and a turn of thinking
alone, which a Chat provider behind LiteLLM would get as null content, removed), and only then is
the final assistant text trimmed. A system message the model takes, which all this left
beside no user message, joins a user turn (stranded-system-message) once nothing else can remove
a message; and a conversation that all this left with no message gets its placeholder at the
very end.

Chat bodies get their null content, id-less tool messages and the legacy functions API's
argument-less calls and nameless results settled first (and the functions API turned into tool
calls for a provider that has only those), so every later rule sees strings and ids
(a tool message whose call cannot be known is then an orphan like any other). A tool message bound
for Gemini's endpoint takes its call's name once every call has its result, the synthesized ones
included.
The OpenAI-compatible providers' own orders (DeepSeek's reasoner, vLLM's chat templates) are
settled once the pairing rules have placed every result, reasoning_content is filled once those
merges are done, and a final assistant message is answered last, when nothing can follow it.
Only then, the transcript settled, is a last tool round whose assistant turn holds no thinking
judged as the provider will see it, and thinking turned off for the request (it changes no
message, so nothing after it needs to look again).

The RS rules are OpenAI Responses' own (item ids, reasoning items, the server's store). Items the
store cannot resolve and repeated or foreign item ids go first, with the other id fixes, and an
answer replayed after its own response's calls goes back before them (before interposed-message
would take it for a message between calls and their outputs); reasoning
left without the item it produced, and call ids left without their reasoning, are settled once the
pairing rules have dropped or answered what they will.
"""

from ._base import DOC_HEADINGS, Context, Rule
from .an001_tool_result_not_first import ToolResultNotFirst
from .an002_blank_text_block import BlankTextBlock
from .an003_empty_message import EmptyMessage
from .an004_invalid_tool_id import InvalidToolId
from .an005_orphan_server_tool_use import OrphanServerToolUse
from .an006_tools_not_defined import ToolsNotDefined
from .an007_empty_transcript import EmptyTranscript
from .an008_prefill_trailing_whitespace import PrefillTrailingWhitespace
from .an009_unsupported_prefill import UnsupportedPrefill
from .an010_tool_use_not_last import ToolUseNotLast
from .an011_thinking_not_first import ThinkingNotFirst
from .an012_tool_input_not_object import ToolInputNotObject
from .an013_duplicate_tool_definition import DuplicateToolDefinition
from .an014_system_role_message import SystemRoleMessage
from .an015_orphan_server_tool_result import OrphanServerToolResult
from .an016_final_thinking import FinalThinking
from .an017_thinking_only_turn import ThinkingOnlyTurn
from .an018_blank_system_text import BlankSystemText
from .an019_unsigned_thinking import UnsignedThinking
from .an020_image_media_type import ImageMediaType
from .an021_stranded_system_message import StrandedSystemMessage
from .an022_thinking_without_history import ThinkingWithoutHistory
from .br001_tool_results_with_text import ToolResultsWithText
from .br002_consecutive_same_role import ConsecutiveSameRole
from .br003_conversation_starts_with_assistant import ConversationStartsWithAssistant
from .br004_tool_use_with_text import ToolUseWithText
from .br005_empty_error_result import EmptyErrorResult
from .gm001_consecutive_model_turns import ConsecutiveModelTurns
from .gm002_call_turn_without_user_turn import CallTurnWithoutUserTurn
from .gm003_missing_thought_signature import MissingThoughtSignature
from .gm004_trailing_orphan_response import TrailingOrphanResponse
from .gm005_empty_call_turn_text import EmptyCallTurnText
from .gm006_function_response_not_object import FunctionResponseNotObject
from .gm007_invalid_content_role import InvalidContentRole
from .gm008_first_call_out_of_step import FirstCallOutOfStep
from .gm009_text_beside_function_response import TextBesideFunctionResponse
from .gm010_part_without_data import PartWithoutData
from .gm011_nested_response_parts import NestedResponseParts
from .oa001_empty_tool_calls import EmptyToolCalls
from .oa002_null_content import NullContent
from .oa003_tool_result_without_id import ToolResultWithoutId
from .oa004_function_call_without_arguments import FunctionCallWithoutArguments
from .oa005_function_message_without_name import FunctionMessageWithoutName
from .oa006_tool_arguments_not_string import ToolArgumentsNotString
from .oa007_unnamed_tool_call import UnnamedToolCall
from .oa008_invalid_name_characters import InvalidNameCharacters
from .pv001_provider_tool_id import ProviderToolId
from .pv002_user_after_tool import UserAfterTool
from .pv003_chat_role_runs import ChatRoleRuns
from .pv004_reasoner_role_runs import ReasonerRoleRuns
from .pv005_template_role_order import TemplateRoleOrder
from .pv006_final_assistant_message import FinalAssistantMessage
from .pv007_missing_reasoning_content import MissingReasoningContent
from .pv008_content_parts_not_string import ContentPartsNotString
from .pv009_unsupported_message_key import UnsupportedMessageKey
from .pv010_tool_arguments_not_object import ToolArgumentsNotObject
from .pv011_tool_result_without_name import ToolResultWithoutName
from .pv012_legacy_function_call import LegacyFunctionCall
from .rs001_dangling_reasoning import DanglingReasoning
from .rs002_foreign_output_id import ForeignOutputId
from .rs003_call_id_without_reasoning import CallIdWithoutReasoning
from .rs004_unstored_item import UnstoredItem
from .rs005_duplicate_item_id import DuplicateItemId
from .rs006_invalid_item_id import InvalidItemId
from .rs007_reasoning_without_summary import ReasoningWithoutSummary
from .rs008_reasoning_without_id import ReasoningWithoutId
from .rs009_answer_after_its_calls import AnswerAfterItsCalls
from .rs010_reasoning_without_answer import ReasoningWithoutAnswer
from .rs011_tool_search_arguments_not_object import ToolSearchArgumentsNotObject
from .tp001_orphan_tool_call import OrphanToolCall
from .tp002_interposed_message import InterposedMessage
from .tp003_misplaced_tool_result import MisplacedToolResult
from .tp004_orphan_tool_result import OrphanToolResult
from .tp005_duplicate_tool_result import DuplicateToolResult
from .tp006_reused_tool_call_id import ReusedToolCallId
from .tp007_duplicate_tool_call import DuplicateToolCall

RULES: tuple[Rule, ...] = (
    SystemRoleMessage(),
    BlankSystemText(),
    InvalidContentRole(),
    InvalidItemId(),
    ReasoningWithoutId(),
    ReasoningWithoutSummary(),
    ToolSearchArgumentsNotObject(),
    UnstoredItem(),
    DuplicateItemId(),
    ForeignOutputId(),
    AnswerAfterItsCalls(),
    EmptyToolCalls(),
    FunctionCallWithoutArguments(),
    FunctionMessageWithoutName(),
    LegacyFunctionCall(),
    ToolArgumentsNotString(),
    UnnamedToolCall(),
    InvalidNameCharacters(),
    NullContent(),
    ToolResultWithoutId(),
    DuplicateToolCall(),
    ReusedToolCallId(),
    InvalidToolId(),
    ProviderToolId(),
    ToolInputNotObject(),
    ToolArgumentsNotObject(),
    UnsignedThinking(),
    FunctionResponseNotObject(),
    NestedResponseParts(),
    TrailingOrphanResponse(),
    OrphanToolResult(),
    OrphanServerToolResult(),
    DuplicateToolResult(),
    ToolResultNotFirst(),
    ToolUseNotLast(),
    InterposedMessage(),
    MisplacedToolResult(),
    OrphanToolCall(),
    ToolResultWithoutName(),
    OrphanServerToolUse(),
    DanglingReasoning(),
    CallIdWithoutReasoning(),
    PartWithoutData(),
    BlankTextBlock(),
    ImageMediaType(),
    EmptyMessage(),
    UnsupportedPrefill(),
    MissingReasoningContent(),
    ThinkingOnlyTurn(),
    ReasoningWithoutAnswer(),
    ThinkingNotFirst(),
    FinalThinking(),
    PrefillTrailingWhitespace(),
    ToolsNotDefined(),
    DuplicateToolDefinition(),
    ConsecutiveModelTurns(),
    ToolResultsWithText(),
    ConsecutiveSameRole(),
    ToolUseWithText(),
    EmptyErrorResult(),
    ConversationStartsWithAssistant(),
    ChatRoleRuns(),
    CallTurnWithoutUserTurn(),
    FirstCallOutOfStep(),
    TextBesideFunctionResponse(),
    MissingThoughtSignature(),
    EmptyCallTurnText(),
    UserAfterTool(),
    ReasonerRoleRuns(),
    TemplateRoleOrder(),
    ContentPartsNotString(),
    UnsupportedMessageKey(),
    FinalAssistantMessage(),
    ThinkingWithoutHistory(),
    StrandedSystemMessage(),
    EmptyTranscript(),
)

__all__ = [
    "DOC_HEADINGS",
    "RULES",
    "Context",
    "Rule",
    "reference",
    "rule_reference",
    "summary",
    "violations_reference",
]


def reference() -> str:
    """The rule reference in Markdown, generated from the rules' own docstrings (``suture rules``)."""
    return "\n".join(rule_reference(rule) for rule in RULES)


def rule_reference(rule: Rule) -> str:
    """One rule's section of :func:`reference` (``suture rules CODE``)."""
    heading = f"### {rule.code} {rule.name}\n\n_Applies to: {_applies_to(rule)}._"
    return f"{heading}\n\n```\n{rule.documentation()}\n```\n"


def summary(rule: Rule) -> str:
    """The first clause of the rule's *What it repairs*, on one line (``suture rules --list``)."""
    doc = rule.documentation()
    start = doc.index(f"{DOC_HEADINGS[0]}:") + len(DOC_HEADINGS[0]) + 1
    end = doc.find(f"\n{DOC_HEADINGS[1]}:", start)
    text = " ".join(doc[start : end if end >= 0 else None].split()).replace("``", "`")
    # It ends at the first ". ", ": " or "; " outside code and parentheses (`store: false`, "call_1...").
    code, depth = False, 0
    for i, char in enumerate(text):
        if char == "`":
            code = not code
        elif not code and char in "([":
            depth += 1
        elif not code and char in ")]":
            depth -= 1
        elif not code and depth <= 0 and char in ".:;" and text[i + 1 : i + 2] in (" ", "") and text[i - 1] != ".":
            return text[:i]
    return text


def providers_reference() -> str:
    """The provider table in Markdown: for each format, every provider a body can be bound for
    (``provider:`` of an upstream, ``--provider`` of the CLI, the emulator's path), how it is
    checked, and the rules bound for it beyond the format's own (``suture rules --providers``)."""
    from ..providers import TABLE

    lines = [
        "| Format | Provider | Checked as | Rules of its own |",
        "|---|---|---|---|",
    ]
    for api, bindings in TABLE.items():
        own = {r.code for r in RULES if r.applies_to(api, None)}
        for b in bindings:
            extra = [r.code for r in RULES if r.applies_to(api, b.rules) and r.code not in own]
            checked = b.profile + (" (bridged)" if b.bridged else "")
            names = ", ".join((b.provider, *b.aliases))
            lines.append(f"| {api} | {names} | {checked} | {', '.join(extra) or '-'} |")
    return "\n".join(lines) + "\n"


def _applies_to(rule: Rule) -> str:
    scopes = []
    if rule.apis is None:
        scopes.append("all formats")
    elif rule.apis:
        bound = f" bound for {', '.join(sorted(rule.providers))}" if rule.providers is not None else ""
        scopes.append(", ".join(sorted(rule.apis)) + bound)
    scopes += [f"{api} bound for {provider}" for api, provider in sorted(rule.also_for)]
    return "; ".join(scopes)


def violations_reference() -> str:
    """Every code the validator reports, who reports it, its texts, its source, and the rules that
    clear it or why none can (``suture rules --violations``)."""
    from ..validation._registry import NOT_YET_REPAIRED, REGISTRY, UNREPAIRABLE

    sections = []
    for entry in REGISTRY.values():
        fixers = ", ".join(f"{r.code} {r.name}" for r in RULES if entry.code in r.fixes) or "none"
        lines = [f"### {entry.code}", "", f"- providers: {', '.join(entry.providers)}"]
        lines += [f"- message: {text!r}" for text in entry.templates]
        lines += [f"- source: {entry.source}", f"- fixed by: {fixers}"]
        if entry.code in UNREPAIRABLE:
            lines.append(f"- unrepairable: {UNREPAIRABLE[entry.code]}")
        if entry.code in NOT_YET_REPAIRED:
            lines.append(f"- not yet repaired: {NOT_YET_REPAIRED[entry.code]}")
        sections.append("\n".join(lines) + "\n")
    return "\n".join(sections)
