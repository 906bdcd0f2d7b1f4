"""The repair rules, one per module, and the order they run in.

Order matters (pydantic-ai's rationale, extended): first make ids unambiguous, then drop the
results nothing can own, then move what exists to where it belongs, and only then synthesize
what is still missing; cosmetic fixes for empty content come last, since earlier repairs can
leave a message empty.
"""

from ._base import DOC_HEADINGS, Context, Rule
from .an001_tool_result_not_first import ToolResultNotFirst
from .an002_blank_text_block import BlankTextBlock
from .an003_empty_message import EmptyMessage
from .an004_invalid_tool_id import InvalidToolId
from .an005_orphan_server_tool_use import OrphanServerToolUse
from .an006_tools_not_defined import ToolsNotDefined
from .br001_tool_results_with_text import ToolResultsWithText
from .br002_consecutive_same_role import ConsecutiveSameRole
from .gm001_consecutive_model_turns import ConsecutiveModelTurns
from .oa001_empty_tool_calls import EmptyToolCalls
from .pv001_provider_tool_id import ProviderToolId
from .pv002_user_after_tool import UserAfterTool
from .pv003_chat_role_runs import ChatRoleRuns
from .tp001_orphan_tool_call import OrphanToolCall
from .tp002_interposed_message import InterposedMessage
from .tp003_misplaced_tool_result import MisplacedToolResult
from .tp004_orphan_tool_result import OrphanToolResult
from .tp005_duplicate_tool_result import DuplicateToolResult
from .tp006_reused_tool_call_id import ReusedToolCallId
from .tp007_duplicate_tool_call import DuplicateToolCall

RULES: tuple[Rule, ...] = (
    EmptyToolCalls(),
    DuplicateToolCall(),
    ReusedToolCallId(),
    InvalidToolId(),
    ProviderToolId(),
    OrphanToolResult(),
    DuplicateToolResult(),
    ToolResultNotFirst(),
    InterposedMessage(),
    MisplacedToolResult(),
    OrphanToolCall(),
    OrphanServerToolUse(),
    BlankTextBlock(),
    EmptyMessage(),
    ToolsNotDefined(),
    ConsecutiveModelTurns(),
    ToolResultsWithText(),
    ConsecutiveSameRole(),
    ChatRoleRuns(),
    UserAfterTool(),
)

__all__ = ["DOC_HEADINGS", "RULES", "Context", "Rule", "reference"]


def reference() -> str:
    """The rule reference in Markdown, generated from the rules' own docstrings (``suture rules``)."""
    sections = []
    for rule in RULES:
        formats = ", ".join(sorted(rule.apis)) if rule.apis else "all formats"
        heading = f"### {rule.code} {rule.name}\n\n_Applies to: {formats}._"
        sections.append(f"{heading}\n\n```\n{rule.documentation()}\n```\n")
    return "\n".join(sections)
