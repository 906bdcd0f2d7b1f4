from __future__ import annotations

from typing import Any, ClassVar

from .._ir import CALL, Part, Transcript
from ..dialects.gemini import signed, unsigned_calls
from ..validation._gemini import signature_required
from ._base import Context, Rule

DUMMY_SIGNATURE = "skip_thought_signature_validator"
"""Google's stand-in for a signature that was never issued or is lost. The Gemini API documents it
and ``context_engineering_is_the_way_to_go`` for history another model wrote or a client built;
Vertex AI documents only this one, so it is the one that works for both."""


class MissingThoughtSignature(Rule):
    """
    What it repairs:
        A replayed Gemini function call without the thought signature Gemini 3 returned with it:
        history written by another model (a provider switch), compacted or rebuilt by the client,
        or converted by a gateway that does not keep signatures. Native bodies carry it in the
        part's ``thoughtSignature``; Chat bodies sent to Gemini's OpenAI-compatible endpoint in
        the tool call's ``extra_content.google.thought_signature``.

    Why:
        Gemini 3: "Function call is missing a thought_signature in functionCall parts. This is
        required for tools to work correctly, and missing thought_signature may lead to degraded
        model performance. Additional data, function call `default_api:shell` , position 2.
        Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more
        details."

    Example:
        Before (model gemini-3-pro-preview): user "list files" / model functionCall shell
                (no thoughtSignature) / user functionResponse shell
        After:  user "list files" / model functionCall shell, thoughtSignature
                "skip_thought_signature_validator" / user functionResponse shell

    Safety:
        Adds a field; nothing is dropped, and a signature that is there is never touched. Only
        the first call of each model turn gets one (Gemini signs only the first of parallel
        calls), in every turn, not just the ones Gemini checks today, so the history Suture
        sends does not change once a new user turn starts and prompt caches stay valid. The
        model loses whatever reasoning the real signature held; it cannot be recreated. Only for
        models that require signatures (Gemini 3 and later, not the image models), named by a
        Chat body's ``model`` or, for a native body, by its URL; the policy
        ``missing_thought_signature: leave`` turns it off.
    """

    code = "GM003"
    looks_past_format = True
    name = "missing-thought-signature"
    apis = frozenset({"gemini"})
    also_for = frozenset({("openai-chat", "gemini")})
    fixes: ClassVar[tuple[str, ...]] = ("gemini.G4",)

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # A Gemini 3 transcript without thought signatures is a valid Gemini 2 one: only the model,
        # which a native body does not name, tells them apart.
        if ctx.policy.missing_thought_signature != "dummy" or not signature_required(ctx.model):
            return True
        if ctx.api == "gemini":
            return not unsigned_calls(body)
        for m in body["messages"]:
            calls = m.get("tool_calls") if m.get("role") == "assistant" else None
            if calls and _signed_tool_call(calls[0]) is not None:
                return False
        return True

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        if ctx.policy.missing_thought_signature != "dummy" or not signature_required(ctx.model):
            return
        native = ctx.api == "gemini"
        for entry in transcript.entries:
            if entry.role != "assistant":
                continue
            k = next((k for k, p in enumerate(entry.parts) if p.kind == CALL), None)
            if k is None:
                continue
            call = entry.parts[k]
            raw = _signed_part(call.raw) if native else _signed_tool_call(call.raw)
            if raw is None:
                continue
            entry.parts[k] = Part(CALL, raw, call.call_id, call.name)
            entry.dirty = True
            ctx.report(
                self,
                "added",
                entry,
                call.call_id,
                f"gave the call to {call.name!r} the stand-in thought signature {DUMMY_SIGNATURE!r}",
            )


def _signed_part(part: dict[str, Any]) -> dict[str, Any] | None:
    """The native part with the stand-in signature, or None when it has one (or cannot take one)."""
    if signed(part):
        return None
    # Proto JSON takes either spelling: keep an empty field's own, else follow the call's.
    if "thoughtSignature" in part or "thought_signature" in part:
        key = "thoughtSignature" if "thoughtSignature" in part else "thought_signature"
    else:
        key = "thought_signature" if "function_call" in part else "thoughtSignature"
    return {**part, key: DUMMY_SIGNATURE}


def _signed_tool_call(call: dict[str, Any]) -> dict[str, Any] | None:
    """The Chat tool call with the stand-in in ``extra_content.google``, or None as above."""
    extra = call.get("extra_content", {})
    google = extra.get("google", {}) if isinstance(extra, dict) else None
    if not isinstance(google, dict):
        # Not ours to rewrite: the endpoint rejects the body's shape before it looks for signatures.
        return None
    signature = google.get("thought_signature")
    if isinstance(signature, str) and signature:
        return None
    return {**call, "extra_content": {**extra, "google": {**google, "thought_signature": DUMMY_SIGNATURE}}}
