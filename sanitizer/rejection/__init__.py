"""Repair from a provider's own refusal: what its message names, fixed, for one more try.

However complete the rules, providers add new ones. A refusal usually says what is wrong and
where (``messages.3.content.1``, ``messages[5]``, a tool-call id, an item id). :func:`repair_rejection`
reads it (``_reading``) and repairs that: first with the rules that clear the violation the
message is (its text matches a registry template), else with the first of :data:`STRATEGIES`
that changes the body. A refusal of the transcript that names nothing, or nothing a strategy
changes, escalates once to :data:`PORTABLE_PROFILE`: the whole body in the shape every
OpenAI-compatible server takes. Pure, like the rest of the sanitizer: the proxy decides whether
to retry.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from .._model import Repair, SanitizeResult
from .._policy import Policy
from ..capabilities import NONE
from ..dialects import DIALECTS
from ..rules import RULES, Context
from ..rules._base import Rule
from ..validation._registry import REGISTRY
from ._reading import REJECTION_STATUSES, Reading, read
from ._strategy import Lesson, Strategy
from ._target import named
from .rj001_answer_named_call import AnswerNamedCall
from .rj002_fold_named_result import FoldNamedResult
from .rj003_drop_named_scaffolding import DropNamedScaffolding
from .rj004_convert_named_block import ConvertNamedBlock
from .rj005_merge_named_message import MergeNamedMessage
from .rj006_drop_empty_named_message import DropEmptyNamedMessage
from .rj007_answer_stored_call import AnswerStoredCall
from .rj008_drop_stored_duplicate import DropStoredDuplicate
from .rj009_reset_named_arguments import ResetNamedArguments
from .rj010_move_named_tool_image import MoveNamedToolImage
from .rj011_portable_profile import PortableProfile
from .rj012_remove_named_field import RemoveNamedField
from .rj013_flatten_named_content import FlattenNamedContent
from .rj014_rename_duplicate_documents import RenameDuplicateDocuments
from .rj015_rekey_empty_tool_ids import RekeyEmptyToolIds

__all__ = [
    "PORTABLE_PROFILE",
    "REJECTION_STATUSES",
    "STRATEGIES",
    "Lesson",
    "RejectionRepair",
    "Strategy",
    "apply_lessons",
    "known_lesson_problem",
    "refusal_message",
    "repair_rejection",
    "strategy_named",
]

STRATEGIES: tuple[Strategy, ...] = (
    # Before answer-named-call: a call named for its arguments is not named as unanswered.
    ResetNamedArguments(),
    # Each names what it does in words of its own; before the strategies that act on whatever
    # block or message a refusal names (drop-named-scaffolding would drop a thinking block whose
    # cache_control was refused, merge-named-message merge a message whose key was).
    RemoveNamedField(),
    FlattenNamedContent(),
    RekeyEmptyToolIds(),
    RenameDuplicateDocuments(),
    AnswerNamedCall(),
    AnswerStoredCall(),
    DropStoredDuplicate(),
    FoldNamedResult(),
    DropNamedScaffolding(),
    ConvertNamedBlock(),
    MoveNamedToolImage(),
    MergeNamedMessage(),
    DropEmptyNamedMessage(),
)
PORTABLE_PROFILE = PortableProfile()
"""The escalation: not one of :data:`STRATEGIES`, which repair what a refusal names; this one the
whole body, when a refusal names nothing they change."""
_DEFAULT_POLICY = Policy()


@dataclass(frozen=True, slots=True)
class RejectionRepair:
    """What :func:`repair_rejection` made of a refusal.

    ``body`` is None when nothing should be retried; ``why`` then says why. Otherwise
    ``strategy`` names what repaired it: ``rules`` (the registry named the violation) or a
    strategy's name, and ``repairs`` lists each change.
    """

    body: dict[str, Any] | None
    why: str
    strategy: str | None = None
    codes: tuple[str, ...] = ()
    repairs: list[Repair] = field(default_factory=list)
    restore_ids: dict[str, str] = field(default_factory=dict)
    lesson: Lesson | None = None
    """What to remember of the fix for later bodies to the same upstream (:func:`apply_lessons`);
    None when the fix only made sense where the refusal pointed."""


def repair_rejection(
    body: Any,
    *,
    api: str,
    status: int,
    message: str,
    provider: str | None = None,
    policy: Policy | None = None,
    model: str | None = None,
    escalate: bool = True,
) -> RejectionRepair:
    """Repair what ``message`` (a provider's refusal, with ``status``, of ``body`` as sent) names.

    The input is never mutated. A refusal that is not about the transcript (context length,
    model, credentials, quota, content policy, another parameter) or names a place the body does
    not have gives ``body=None``. One about the transcript that names nothing a strategy changes
    gets :data:`PORTABLE_PROFILE` when ``escalate`` (the caller's once per request) and it
    changes the body; else ``body=None``.
    """
    dialect = DIALECTS.get(api)
    if dialect is None or not isinstance(body, dict):
        return RejectionRepair(None, f"not a transcript of a known format ({api})")
    reading = read(body, api, status, message)
    if not reading.about_transcript and not (escalate and reading.vague):
        return RejectionRepair(None, reading.why)
    if api == "openai-responses" and isinstance(body.get("input"), str):
        # A text input is one user message (OpenAI's reference says so): as a list, a repair can
        # put items before it.
        body = {**body, "input": [{"role": "user", "content": body["input"]}]}
    try:
        transcript = dialect.parse(body)
    except Exception as exc:  # a body the sanitizer cannot read is the provider's to refuse
        return RejectionRepair(None, f"the body cannot be parsed: {exc}")
    # The refusal is the provider's word over the capability table: a model that refused what the
    # table says it takes (a system message inside messages) is repaired as one that takes nothing.
    ctx = Context(api, dialect, policy or _DEFAULT_POLICY, provider, model or _model(body), known=NONE)
    target = named(transcript, api, reading)
    fixed = _repair(transcript, ctx, api, reading, target) if reading.about_transcript else None
    if fixed is None and escalate:
        PORTABLE_PROFILE.repair(transcript, ctx, target)
        fixed = (PORTABLE_PROFILE.name, PORTABLE_PROFILE.lesson(target)) if ctx.repairs else None
    if fixed is None:
        why = reading.why if not reading.about_transcript else "nothing the refusal names can be changed"
        return RejectionRepair(None, why, codes=reading.codes)
    sent = {p.call_id for _, p in transcript.parts()}
    restore = {new: old for new, old in ctx.restore_ids.items() if new in sent}
    strategy, lesson = fixed
    return RejectionRepair(dialect.render(transcript), "", strategy, reading.codes, ctx.repairs, restore, lesson)


def _repair(transcript: Any, ctx: Context, api: str, reading: Reading, target: Any) -> tuple[str, Lesson | None] | None:
    if reading.codes:
        # The provider's text is a violation the registry knows: the rules that clear it apply,
        # whether or not the route's provider binds them (an OpenAI-compatible upstream may be vLLM).
        used = _apply_rules_fixing(transcript, ctx, api, reading.codes)
        if ctx.repairs:
            return "rules", Lesson("rules", codes=used)
    for strategy in STRATEGIES:
        strategy.repair(transcript, ctx, target)
        if ctx.repairs:
            return strategy.name, strategy.lesson(target)
    return None


def _apply_rules_fixing(transcript: Any, ctx: Context, api: str, codes: tuple[str, ...]) -> tuple[str, ...]:
    """Apply every rule that clears one of the violations ``codes``; the codes whose rules changed something."""
    used: dict[str, None] = {}
    for rule in RULES:
        named_codes = set(rule.fixes) & set(codes)
        if named_codes and (rule.apis is None or api in rule.apis):
            before = len(ctx.repairs)
            rule.apply(transcript, _bound_for(rule, ctx, named_codes))
            if len(ctx.repairs) > before:
                used.update(dict.fromkeys(sorted(named_codes)))
    return tuple(used)


def strategy_named(code: str) -> Strategy | None:
    """The strategy (the escalation included) whose code or name is ``code``."""
    return next((s for s in (*STRATEGIES, PORTABLE_PROFILE) if code in (s.code, s.name)), None)


def known_lesson_problem(data: Any) -> str | None:
    """Why ``data`` (a lesson as ``Lesson.as_dict`` writes it, from a file or a config) cannot be
    applied, or None when it can."""
    try:
        lesson = Lesson.from_dict(data)
    except ValueError as exc:
        return str(exc)
    if lesson.fix == "rules":
        unknown = [code for code in lesson.codes if code not in REGISTRY]
        if not lesson.codes:
            return "a 'rules' fix names the violation codes it clears in 'codes'"
        if unknown:
            return f"no violation has the code(s) {', '.join(unknown)}"
        return None
    strategy = strategy_named(lesson.fix)
    if strategy is None:
        return f"no strategy has the code {lesson.fix!r} (`suture rules` lists them)"
    if not strategy.learnable:
        learnable = ", ".join(s.code for s in (*STRATEGIES, PORTABLE_PROFILE) if s.learnable) or "none"
        return f"{strategy.code} {strategy.name} repairs only where a refusal points (learnable: {learnable})"
    return None


def apply_lessons(
    body: Any,
    *,
    api: str,
    lessons: tuple[Lesson, ...],
    provider: str | None = None,
    policy: Policy | None = None,
    model: str | None = None,
) -> SanitizeResult:
    """Apply, before any refusal, the fixes that earlier refusals of the same upstream needed.

    Each lesson is what :func:`repair_rejection` returned once (``RejectionRepair.lesson``): the
    rules for the violations it names, or a learnable strategy's whole-transcript form. Like
    ``sanitize``: the input is never mutated, and with nothing to change ``result.body`` is
    ``body`` itself. A lesson this version does not know (a file written by another) is skipped.
    """
    dialect = DIALECTS.get(api)
    if dialect is None or not isinstance(body, dict) or not lessons:
        return SanitizeResult(body)
    transcript = dialect.parse(body)
    ctx = Context(api, dialect, policy or _DEFAULT_POLICY, provider, model or _model(body))
    for lesson in lessons:
        if lesson.fix == "rules":
            _apply_rules_fixing(transcript, ctx, api, lesson.codes)
            continue
        strategy = strategy_named(lesson.fix)
        if strategy is not None and strategy.learnable and (strategy.apis is None or api in strategy.apis):
            strategy.everywhere(transcript, ctx, lesson)
    if not ctx.repairs:
        return SanitizeResult(body)
    sent = {p.call_id for _, p in transcript.parts()}
    restore = {new: old for new, old in ctx.restore_ids.items() if new in sent}
    return SanitizeResult(dialect.render(transcript), ctx.repairs, restore)


def _bound_for(rule: Rule, ctx: Context, codes: set[str]) -> Context:
    """``ctx``, its provider one the rule is for when the route's is not: the one whose text it was."""
    if rule.providers is None or ctx.provider in rule.providers:
        return ctx
    reporting = [p for code in sorted(codes) for p in REGISTRY[code].providers if p in rule.providers]
    provider = reporting[0] if reporting else sorted(rule.providers)[0]
    # The same record of repairs: only the provider differs.
    return dataclasses.replace(ctx, provider=provider)


def _model(body: dict[str, Any]) -> str | None:
    model = body.get("model")
    return model if isinstance(model, str) else None


def refusal_message(payload: Any) -> str | None:
    """The provider's message in an error body, whatever its envelope: ``{"error": {"message"}}``
    (OpenAI, Anthropic, Gemini), ``{"message"}`` (Bedrock, Mistral), ``{"error": "..."}``, or a
    list of those (Gemini's streaming endpoint)."""
    if isinstance(payload, list) and payload:
        payload = payload[0]
    if not isinstance(payload, dict):
        return None
    error = payload.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(payload.get("message"), str):
        return str(payload["message"])
    if isinstance(error, str):
        return error
    detail = payload.get("detail")  # FastAPI-based servers (vLLM...)
    if isinstance(detail, str):
        return detail
    return None
