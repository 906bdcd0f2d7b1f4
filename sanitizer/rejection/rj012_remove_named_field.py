from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .._ir import CALL, Entry, Part, Transcript
from ..rules._base import Context, _compact
from ._fields import ANYWHERE, Segment, fields_in, parse_path, refused_fields, render_path, strip, strip_anywhere
from ._strategy import Lesson, Strategy
from ._target import Named

# Where each format keeps a message's blocks, which the IR holds as parts of its entry.
_BLOCK_LISTS = {"gemini": ("parts",), "openai-chat": ("content", "tool_calls")}


class RemoveNamedField(Strategy):
    """
    What it repairs:
        A key of a message, or of one of its blocks, that the provider says it does not accept:
        a client's own bookkeeping stored with each message (``metadata``, ``timestamp``, an
        ``id``), another provider's field replayed with the history (``reasoning_content``,
        ``cache_control``), what an SDK's streamed answer left on a tool call (``index``), a
        Gemini ``functionCall.id`` sent to an endpoint that has no such field. The refusal names
        the key, by its path in the body (``messages[2].cot_id``, ``messages.65.content.1.tool_use.text``,
        a pydantic ``loc`` tuple, Gemini's ``at 'contents[3].parts[1].function_call'``) or alone.

    Why:
        Servers whose schema forbids unknown keys refuse every later turn that replays one.
        vLLM: "1 validation error for ChatCompletionRequest messages.0.user.name Extra inputs are
        not permitted [type=extra_forbidden, ...]" (vllm-project/vllm#12864), and earlier "[{'type':
        'extra_forbidden', 'loc': ('body', 'messages', 0, 'typed-dict', 'id'), 'msg': 'Extra inputs
        are not permitted', ...}]" (vllm-project/vllm#10463). Mistral: {"type":"extra_forbidden",
        "loc":["body","messages",X,"assistant","reasoning_content"],"msg":"Extra inputs are not
        permitted"} (charmbracelet/crush#1590, BerriAI/litellm#30835). Anthropic:
        "messages.65.content.1.tool_use.text: Extra inputs are not permitted"
        (anthropics/claude-code#4378); through Vertex, "*.cache_control: Extra inputs are not
        permitted" (cg-dot/vertexai-cf-workers#21). OpenAI: "Unknown parameter:
        'messages[1].tool_calls[0].index'." (songquanpeng/one-api#1319). Gemini: "Invalid JSON
        payload received. Unknown name "id" at 'contents[3].parts[1].function_call': Cannot find
        field." (musistudio/claude-code-router#1262, livekit/agents#2883). The same reading takes
        serde's "unknown field `x`" and "property 'x' is unsupported"; Azure's "Unrecognized
        request argument supplied: x" names a request parameter in every report found
        (songquanpeng/one-api#1978, nashsu/llm_wiki#336), and is left alone when the body has
        that parameter. Groq's, Cerebras's and Fireworks's texts are the registry's: the rule
        for them (unsupported-message-key) removes what their schemas lack first, and this
        strategy only a named key that rule left.

    Example:
        Before: user "hi" / assistant {"content": "4", "reasoning_content": "2+2..."} / user "and 3+3?";
                refused: {"type":"extra_forbidden","loc":["body","messages",1,"assistant",
                "reasoning_content"],"msg":"Extra inputs are not permitted"}
        After:  user "hi" / assistant {"content": "4"} / user "and 3+3?"

    Safety:
        Only the keys the refusal names go, at the level it names them: a schema that refuses a
        key at ``messages[1].tool_calls[0]`` refuses it on every tool call, so it goes from every
        tool call (a provider that stops at its first error, as OpenAI does, would otherwise
        cost one retry per message). A path that names a role or a block type on the way, as
        pydantic's and Anthropic's do, matches only messages of that role or blocks of that
        type. A key named alone, or as ``*.key``, goes wherever the messages hold it, but never
        from a tool's own arguments or output, and not at all when the body holds it as a
        request parameter (that is outside the transcript). What carries the conversation is
        never removed, whatever the refusal says: a message's role, content, tool calls and
        tool_call_id, a block's type, text and media, a call's id, name and arguments, a
        result's id and output. Each removed key and its value are kept in the repair record.

        Learnt for an upstream (applied before any refusal of later requests to it), it removes
        the same keys at the same levels from every body.
    """

    code = "RJ012"
    name = "remove-named-field"
    learnable: ClassVar[bool] = True

    def repair(self, transcript: Transcript, ctx: Context, target: Named) -> None:
        fields = fields_in(target.message, transcript.body, transcript.key)
        self._remove_all(transcript, ctx, [k for f in fields if (k := f.lesson_key()) is not None])

    def lesson(self, target: Named) -> Lesson | None:
        keys = {k: None for f in refused_fields(target.message) if (k := f.lesson_key()) is not None}
        return Lesson(self.code, keys=tuple(keys)) if keys else None

    def everywhere(self, transcript: Transcript, ctx: Context, lesson: Lesson) -> None:
        self._remove_all(transcript, ctx, lesson.keys)

    def _remove_all(self, transcript: Transcript, ctx: Context, paths: Iterable[str]) -> None:
        """Take each key out wherever its path from a message leads. An index in a path (a lesson
        written by hand) names no place: every element of that list."""
        for path in dict.fromkeys(paths):
            *steps, key = parse_path(path)
            if isinstance(key, str):
                steps = [None if isinstance(s, int) else s for s in steps]
                for unit in _units(transcript, ctx.api):
                    self._remove(unit, steps, key, ctx)

    def _remove(self, unit: _Unit, steps: Sequence[Segment], key: str, ctx: Context) -> None:
        removed = unit.strip(steps, key, ctx.api)
        if removed:
            where = render_path([*(s for s in steps if s != ANYWHERE), key])
            detail = f"removed the key {where!r}, which the provider does not accept; it held: {_compact(removed)}"
            ctx.report(self, "removed", unit.entry, unit.call_id(), detail)


@dataclass(slots=True)
class _Unit:
    """One message of the body as the IR holds it: an entry whose blocks are its parts, or a part
    that is a whole message (an OpenAI tool message, a Responses item)."""

    entry: Entry
    whole: Part | None = None

    def call_id(self) -> str | None:
        return self.whole.call_id if self.whole is not None else None

    def strip(self, steps: Sequence[Segment], key: str, api: str) -> list[Any]:
        """Take ``key`` out where ``steps`` lead from this message; the values removed."""
        anywhere = bool(steps) and steps[0] == ANYWHERE
        if self.whole is not None:
            return self._strip_whole(steps, key, anywhere=anywhere)
        lists = _BLOCK_LISTS.get(api, ("content",))
        if anywhere:
            return self._strip_own(lambda own: strip_anywhere(own, key), lists) + self._strip_blocks(
                _blocks_of(self.entry, api, None), (), key, anywhere=True
            )
        if len(steps) > 1 and steps[0] in lists and steps[1] is None:
            assert isinstance(steps[0], str)
            return self._strip_blocks(_blocks_of(self.entry, api, steps[0]), steps[2:], key, anywhere=False)
        return self._strip_own(lambda own: strip(own, steps, key), lists)

    def _strip_own(self, change: Callable[[dict[str, Any]], tuple[Any, list[Any]]], lists: Sequence[str]) -> list[Any]:
        """The change on the message's own keys. Its blocks are parts, which the dialects render
        the entry's from: the source's copy of them is left as it is."""
        source = self.entry.source
        blocks = {k: v for k, v in source.items() if k in lists}
        new, removed = change({k: v for k, v in source.items() if k not in lists})
        if removed:
            self.entry.source = {k: blocks[k] if k in blocks else new[k] for k in source if k in blocks or k in new}
        return removed

    def _strip_whole(self, steps: Sequence[Segment], key: str, *, anywhere: bool) -> list[Any]:
        part = self.whole
        assert part is not None
        new, removed = strip_anywhere(part.raw, key) if anywhere else strip(part.raw, steps, key)
        if removed:
            replacement = Part(part.kind, new, part.call_id, part.name)
            self.entry.parts = [replacement if p is part else p for p in self.entry.parts]
            if self.entry.source is part.raw:
                self.entry.source = new
            self.entry.dirty = True
            self.whole = replacement
        return removed

    def _strip_blocks(self, blocks: list[Part], steps: Sequence[Segment], key: str, *, anywhere: bool) -> list[Any]:
        removed: list[Any] = []
        for part in blocks:
            new, inner = strip_anywhere(part.raw, key) if anywhere else strip(part.raw, steps, key)
            if inner:
                at = next(i for i, p in enumerate(self.entry.parts) if p is part)
                self.entry.parts[at] = Part(part.kind, new, part.call_id, part.name)
                self.entry.dirty = True
                removed += inner
        return removed


def _blocks_of(entry: Entry, api: str, list_name: str | None) -> list[Part]:
    """The entry's parts that are blocks of ``list_name`` (of any list when None)."""
    blocks = [p for p in entry.parts if isinstance(p.raw, dict)]
    if api == "openai-chat" and list_name is not None:
        # OpenAI keeps a message's calls apart from its content.
        blocks = [p for p in blocks if (p.kind == CALL) == (list_name == "tool_calls")]
    return blocks


def _units(transcript: Transcript, api: str) -> Iterator[_Unit]:
    """The messages of the transcript, each as a unit."""
    if api == "openai-responses":
        for entry, part in list(transcript.parts()):
            yield _Unit(entry, part)
        return
    for entry in list(transcript.entries):
        if api == "openai-chat" and entry.role == "tool" and entry.parts:
            yield _Unit(entry, entry.parts[0])
        else:
            yield _Unit(entry)
