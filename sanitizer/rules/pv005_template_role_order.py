from __future__ import annotations

from typing import Any, ClassVar

from .._ir import Entry, Transcript
from ..validation._openai_chat import vllm_template
from ._base import Context, Rule
from ._runs import merge_runs
from .an009_unsupported_prefill import CONTINUE_TEXT

_SYSTEM = frozenset({"system", "developer"})


class TemplateRoleOrder(Rule):
    """
    What it repairs:
        A role order the model's chat template refuses, in a body bound for vLLM or llama.cpp's
        server (llama-server), which render it with the model's Jinja template: two user
        (or assistant) messages in a row, a system message that is not the first message (or,
        for the first Mistral templates, any system message), a user message right after the
        tool results, a conversation whose first turn is the assistant's.

    Why:
        vLLM (Mistral-7B-Instruct-v0.3's template): "After the optional system message,
        conversation roles must alternate user/assistant/user/assistant/..."
        vLLM (Gemma, Llama-2, Mistral-7B-Instruct-v0.2): "Conversation roles must alternate
        user/assistant/user/assistant/..."
        vLLM (Mistral models on the mistral-common tokenizer): "Unexpected role 'user' after
        role 'tool'"
        llama.cpp (Gemma 3, as an HTTP 500): "Error: Jinja Exception: Conversation roles must
        alternate user/assistant/user/assistant/..." (nextai-translator/raycast-openai-translator#34)
        llama.cpp (Devstral Small 2, 500): "After the optional system message, conversation roles
        must alternate user and assistant roles except for tool calls and results."
        (ggml-org/llama.cpp#19851)

    Example:
        Before: system "you are wikipedia agent." / user "capital of ontario?" /
                user "and tell me about its history."
        After:  system "you are wikipedia agent." /
                user "capital of ontario?\\n\\nand tell me about its history."

    Safety:
        Nothing is dropped. Leading system messages merge into one; a later system message (and,
        for Mistral-7B-Instruct v0.1 / v0.2 and Mixtral-8x7B-Instruct v0.1, whose templates take
        no system message, the first one too) becomes user text, joined to the user turn next
        to it. Runs of user or assistant messages merge in order (a message carrying more than
        text and calls, such as reasoning_content, is bridged instead, never merged). A short
        assistant message (the policy's bridge_text) goes between tool results and the user's
        next message, and a user message "Continue." before an assistant message that opens the
        conversation. Applied to every model served by vLLM or llama.cpp: the shape every chat template
        takes, so a template Suture does not know by name is covered too.
    """

    code = "PV005"
    name = "template-role-order"
    apis = frozenset({"openai-chat"})
    providers = frozenset({"vllm", "llamacpp"})
    fixes: ClassVar[tuple[str, ...]] = ("vllm.V1", "mistral.M3", "llamacpp.template-role-order")

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # Only the plainest order is judged here: one system message at most, first.
        takes_system = vllm_template(body.get("model")) != "mistral-no-system"
        previous = None
        for index, m in enumerate(body["messages"]):
            role = m.get("role")
            if role in _SYSTEM:
                if not takes_system or index:
                    return False
            elif (
                (role in ("user", "assistant") and role == previous)
                or (role == "user" and previous == "tool")
                or (role == "assistant" and (previous is None or previous in _SYSTEM))
            ):
                return False
            previous = role
        return True

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        takes_system = vllm_template(transcript.body.get("model")) != "mistral-no-system"
        entries = merge_runs(self._systems(transcript.entries, takes_system, ctx), ctx, self)
        bridged: list[Entry] = []
        for entry in entries:
            previous = bridged[-1] if bridged else None
            if entry.role == "user" and previous is not None and previous.role == "tool":
                ctx.report(
                    self,
                    "bridged",
                    entry,
                    None,
                    "put a short assistant message between the tool results and this user message",
                )
                bridged.append(ctx.dialect.text_entry("assistant", ctx.policy.bridge_text))
            elif entry.role == "assistant" and all(e.role in _SYSTEM for e in bridged[-1:]):
                ctx.report(
                    self,
                    "bridged",
                    entry,
                    None,
                    f"put a user message {CONTINUE_TEXT!r} before this "
                    "assistant message, which opened the conversation",
                )
                bridged.append(ctx.dialect.text_entry("user", CONTINUE_TEXT))
            bridged.append(entry)
        transcript.entries = bridged

    def _systems(self, entries: list[Entry], takes_system: bool, ctx: Context) -> list[Entry]:
        """One system message, first; every other one as user text."""
        out: list[Entry] = []
        grown = False
        for entry in entries:
            if entry.role not in _SYSTEM:
                out.append(entry)
                continue
            # Only the messages before any turn are "the" system message; they merge into one.
            if takes_system and (not out or (len(out) == 1 and out[0].role in _SYSTEM)):
                if not out:
                    out.append(entry)
                    continue
                head = out[0]
                ctx.report(self, "merged", entry, None, "merged into the system message before it")
                if grown:
                    head.parts.extend(entry.parts)
                else:
                    head.parts = head.parts + entry.parts
                    grown = True
                head.dirty = True
                continue
            why = "it is not the first message" if takes_system else "the model's template takes no system message"
            ctx.report(self, "converted", entry, None, f"turned a {entry.role} message into user text ({why})")
            out.append(Entry("user", entry.parts, {**entry.source, "role": "user"}, entry.origin, dirty=True))
        return out
