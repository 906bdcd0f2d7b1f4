"""What every repair rule is: a permanent code, a defect name, docs, and ``apply``."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .._ir import Entry, Part, Transcript
from .._model import Repair
from .._policy import Policy
from ..capabilities import Capabilities, model_capabilities
from ..dialects import Dialect
from ..providers import binding

DOC_HEADINGS = ("What it repairs", "Why", "Example", "Safety")


@dataclass(slots=True)
class Context:
    api: str
    dialect: Dialect
    policy: Policy
    provider: str | None = None
    model: str | None = None
    """The model the request is for: the caller's, else the body's ``model`` (None if neither says)."""
    repairs: list[Repair] = field(default_factory=list)
    restore_ids: dict[str, str] = field(default_factory=dict)
    """Ids rewritten for the provider, mapped back to the client's own (for the response)."""
    betas: frozenset[str] = frozenset()
    """What the request declares of itself: its ``anthropic-beta`` values."""
    known: Capabilities | None = None
    """What the model takes, where the caller knows better than the capability table (a refusal
    does); None looks it up in the table on first use (:attr:`capabilities`)."""

    @property
    def capabilities(self) -> Capabilities:
        """What the request's model takes beyond what every model of its provider does, from the
        capability table (``sanitizer.capabilities``): rules read it here, never on their own."""
        if self.known is None:
            provider = self.provider or binding(self.api, None).provider
            self.known = model_capabilities(provider, self.model, self.betas)
        return self.known

    def report(
        self,
        rule: Repairer,
        action: str,
        where: Entry | int | None,
        call_id: str | None,
        detail: str,
    ) -> None:
        index = where.origin if isinstance(where, Entry) else where
        self.repairs.append(Repair(rule.code, rule.name, action, index, self.dialect.public_id(call_id), detail))

    def describe(self, part: Part) -> str:
        """A part's payload as compact text, so a dropped result's content survives in the record."""
        return _compact(self.dialect.payload(part))


class Repairer:
    """What every repair of a transcript is, a rule or a strategy: a named unit with a permanent
    code, the formats and providers it is for, and a docstring that says what breaks and what the
    fix does. Subclasses set ``code``, ``name`` and ``apis`` and document themselves."""

    code: ClassVar[str]
    name: ClassVar[str]
    apis: ClassVar[frozenset[str] | None] = None
    """The wire formats it applies to; ``None`` means every format."""
    providers: ClassVar[frozenset[str] | None] = None
    """The providers it applies to; ``None`` means whatever provider the format reaches."""
    fixes: ClassVar[tuple[str, ...]] = ()
    """The validator codes (``Violation.rule``) it clears, each in the violation registry."""
    also_for: ClassVar[frozenset[tuple[str, str]]] = frozenset()
    """Other (format, provider) pairs it is for: a body a gateway (LiteLLM) translates for a
    provider meets that provider's rules, e.g. ``("openai-chat", "bedrock")``."""

    def applies_to(self, api: str, provider: str | None = None) -> bool:
        if (api, provider) in self.also_for:
            return True
        if self.apis is not None and api not in self.apis:
            return False
        return self.providers is None or provider in self.providers

    def drop_parts(
        self,
        transcript: Transcript,
        ctx: Context,
        kinds: frozenset[str],
        doomed: Callable[[Part], bool],
        detail: Callable[[Part], str],
    ) -> None:
        """Remove every part of ``kinds`` that ``doomed`` picks, each reported as dropped with
        ``detail(part)``; a message left empty goes too."""
        removals: list[tuple[Entry, list[Part]]] = []
        for entry in transcript.entries:
            parts = None
            for part in entry.parts:
                if part.kind in kinds and doomed(part):
                    ctx.report(self, "dropped", entry, None, detail(part))
                    if parts is None:
                        parts = []
                    parts.append(part)
            if parts is not None:
                removals.append((entry, parts))
        transcript.remove_parts(removals)

    @classmethod
    def documentation(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")


class Rule(Repairer):
    """A repair ``sanitize()`` runs on every transcript of its formats: :meth:`apply` finds and
    fixes what a provider would refuse."""

    looks_past_format: ClassVar[bool] = False
    """A rule of the format's own whose action turns on what the body does not say (the model, the
    policy), which ``looks_clean`` cannot vouch for: the fast path asks its :meth:`clean` too."""

    judges_suspicion: ClassVar[bool] = False
    """The format's check suspects this rule wherever the body holds what it may repair, but
    whether it must turns on what the body does not say (the model, the request's betas): the fast
    path asks :meth:`clean` of a suspected body, and drops the suspicion when it answers True. Its
    ``clean`` must read any body the check suspected it in without failing."""

    def looks_past(self, api: str, provider: str | None) -> bool:
        """Whether the fast path asks :meth:`clean` of this rule of the format's own for a body of
        ``api`` bound for ``provider`` (the provider's rules name; None for the format's own)."""
        return self.looks_past_format

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        raise NotImplementedError

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        """Whether :meth:`apply` would leave ``body`` as it is, told by a quick look at a body the
        format's own check (``looks_clean``) passed: a valid request bound for a provider with rules
        of its own then skips the full pass. False, the default, means "run the rule"; a rule that
        answers True where ``apply`` would repair is a defect (tests/sanitizer/test_clean_checks.py)."""
        return False


def quoted_content(entry: Entry) -> str:
    """A removed message's content for the repair record: a text quoted (so its spaces show), else
    its parts as compact JSON."""
    if not entry.parts:
        return "nothing (it was empty)"
    if len(entry.parts) == 1 and isinstance(entry.parts[0].raw, str):
        return json.dumps(entry.parts[0].raw, ensure_ascii=False)
    return _compact([p.raw for p in entry.parts])


def _compact(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
