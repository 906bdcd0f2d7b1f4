from __future__ import annotations

from typing import Any, ClassVar

from .._ir import THINKING, Transcript
from ._base import Context, Rule
from ._items import whole

_REASONING = frozenset({THINKING})


class ReasoningWithoutId(Rule):
    """
    What it repairs:
        An OpenAI Responses ``reasoning`` item replayed without its ``id`` to Azure OpenAI: a
        stateless client (``store: false``) that keeps only the item's encrypted content, as
        Codex CLI did, or one whose invalid id was removed.

    Why:
        OpenAI reads such an item from its encrypted content; Azure requires the id. Azure
        OpenAI: "Missing required parameter: 'input[2].id'." (openai/codex#3451), on every turn
        after the first answer.

    Example:
        Before (bound for Azure): user "hi" / reasoning (no id, encrypted_content) /
                assistant "Hey!" / user "hi"
        After:  user "hi" / assistant "Hey!" / user "hi"

    Safety:
        Removes the reasoning item, as the fix in Codex did for Azure (openai/codex PR#3528):
        there is no id to give it back. The model's answers and calls after it stay, and the
        whole item (its summary, its encrypted content) is kept in the repair record. Only for
        Azure: bound for OpenAI the item is valid and untouched.
    """

    code = "RS008"
    name = "reasoning-without-id"
    apis = frozenset({"openai-responses"})
    providers = frozenset({"azure"})
    fixes: ClassVar[tuple[str, ...]] = ("responses.R11",)

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # looks_clean passes no body that holds a reasoning item.
        return True

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        self.drop_parts(
            transcript,
            ctx,
            _REASONING,
            lambda part: part.raw.get("id") is None,
            lambda part: f"removed a reasoning item without an id, which Azure refuses; the item was: {whole(part)}",
        )
