from __future__ import annotations

import json
from typing import ClassVar

from .._ir import Transcript
from ..dialects.gemini import without_data
from ._base import Context, Rule


class PartWithoutData(Rule):
    """
    What it repairs:
        A Gemini part that sets none of its data: an empty text (``{"text": ""}``) a client
        serialises next to a function response or before a call, an empty text that only
        carries a thought signature, or an empty object a translator left for an empty block.

    Why:
        A part's data is a oneof, and proto3 JSON reads an empty string as unset. Gemini:
        "* GenerateContentRequest.contents[2].parts[1].data: required oneof field 'data' must
        have one initialized field" (54xzh/FLIT#69, router-for-me/CLIProxyAPI#3485)

    Example:
        Before: user "search" / model functionCall web_search / user [functionResponse
                web_search, text ""] / model "found it" / user "thanks"
        After:  user "search" / model functionCall web_search / user functionResponse
                web_search / model "found it" / user "thanks"

    Safety:
        Drops only parts that hold nothing the model reads; the repair record keeps each part
        as it was (a thought signature it carried included). Whitespace is text and stays. A
        content left with no part at all is then handled by empty-message, as any empty content.
    """

    code = "GM010"
    name = "part-without-data"
    apis = frozenset({"gemini"})
    fixes: ClassVar[tuple[str, ...]] = ("gemini.part-without-data",)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        for entry in transcript.entries:
            empty = [p for p in entry.parts if isinstance(p.raw, dict) and without_data(p.raw)]
            if not empty:
                continue
            dropped = json.dumps([p.raw for p in empty], ensure_ascii=False, separators=(",", ":"))
            ctx.report(self, "dropped", entry, None, f"dropped {len(empty)} part(s) without data: {dropped}")
            entry.parts = [p for p in entry.parts if not any(p is e for e in empty)]
            entry.dirty = True
