from __future__ import annotations

from typing import Any, ClassVar

from .._ir import RESULT, TEXT, Entry, Transcript
from ..dialects.gemini import text_beside_responses
from ..validation._gemini import responses_stand_alone
from ._base import Context, Rule


class TextBesideFunctionResponse(Rule):
    """
    What it repairs:
        For Gemini 3, a last user content that holds text next to its function responses: an
        agent that adds a notice to the tool results of a failed call (Vellum's
        ``<system_notice>``), a compaction that merges context text into the tool-result
        message, or an orphan response kept as text beside the real answers.

    Why:
        Gemini 3 reads a content of function responses as a turn of its own and answers, for the
        text beside them: "Requests ending with a model turn are not supported."
        (vellum-ai/vellum-assistant PR#39495)

    Example:
        Before (model gemini-3-flash-preview): user "Run the task" / model functionCall
                mcp_tool / user [functionResponse mcp_tool, "<system_notice>denied</system_notice>"]
        After:  user "Run the task" / model functionCall mcp_tool / user functionResponse
                mcp_tool / user "<system_notice>denied</system_notice>"

    Safety:
        Nothing is dropped: the text parts move, in order, into a user content of their own
        right after the responses, which stay right after their call. Anything else beside the
        responses (a file) stays with them. Only the last content, and only for Gemini 3 and
        later, named by the URL: Gemini 2.5 takes text beside the responses.
    """

    code = "GM009"
    name = "text-beside-function-response"
    looks_past_format = True
    apis = frozenset({"gemini"})
    fixes: ClassVar[tuple[str, ...]] = ("gemini.response-beside-text",)

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # A valid Gemini 2 request; only the model says whether Gemini reads the text as a turn.
        last = body["contents"][-1]
        return not responses_stand_alone(ctx.model) or last.get("role") == "model" or not text_beside_responses(last)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        if not responses_stand_alone(ctx.model) or not transcript.entries:
            return
        last = transcript.entries[-1]
        texts = [p for p in last.parts if p.kind == TEXT]
        if last.role != "user" or not texts or not last.has(RESULT):
            return
        last.parts = [p for p in last.parts if p.kind != TEXT]
        last.dirty = True
        transcript.entries.append(Entry("user", texts, {"role": "user"}, None, dirty=True))
        ctx.report(
            self, "split", last, None, "moved the text beside the function responses into a user content after them"
        )
