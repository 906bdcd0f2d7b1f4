from __future__ import annotations

from typing import Any, ClassVar

from .._ir import RESULT, Entry, Part, Transcript
from ..rules._base import Context
from ._reading import DUPLICATE_DOCUMENT_NAMES
from ._strategy import Lesson, Strategy
from ._target import Named

# Bedrock's limit on a document's name (API_runtime_DocumentBlock): 1 to 200 characters.
_MAX_NAME = 200


class RenameDuplicateDocuments(Strategy):
    """
    What it repairs:
        Bedrock Converse document blocks that share a name anywhere in ``messages``: the same
        file attached twice in a conversation, two files whose names a client cut down to the
        same stem (``report.pdf`` and ``report.docx`` both ``report``), or an adapter that names
        every untitled document ``document``. Converse is stateless, so the two need not be in
        one turn: once a second one is sent, every later turn replays both.

    Why:
        Bedrock: "ValidationException: Messages can't contain duplicate document names. Rename
        the document and retry your request." (maximhq/bifrost#7003, ag-ui-protocol/ag-ui#2425;
        aws-samples/generative-ai-use-cases#1685 counts 824 of them in 60 days). The refusal
        names no document: every later one with a name already taken is renamed.

    Example:
        Before: user [document "report" (pdf), text "Summarize."] / assistant "..." /
                user [document "report" (docx), text "And this one?"]; refused: "Messages can't
                contain duplicate document names. ..."
        After:  the same, the second document named "report (2)"

    Safety:
        Only names change, never a document's content or format, and the first document with a
        name keeps it. A later one gets the next free "name (n)" (names compared without regard
        to case, ``n`` counting from 2), which keeps to Bedrock's characters (letters, digits,
        single spaces, hyphens, parentheses, brackets) and its 200-character limit; the same
        transcript always gets the same names. Documents in tool results are renamed as those in
        messages are. Each rename is in the repair record.

        Learnt for an upstream (applied before any refusal of later requests to it), it renames
        the same way every body that repeats a name.
    """

    code = "RJ014"
    name = "rename-duplicate-documents"
    apis = frozenset({"bedrock-converse"})
    learnable: ClassVar[bool] = True

    def repair(self, transcript: Transcript, ctx: Context, target: Named) -> None:
        if ctx.api in self.apis and DUPLICATE_DOCUMENT_NAMES.search(target.message):
            self._rename(transcript, ctx)

    def everywhere(self, transcript: Transcript, ctx: Context, lesson: Lesson) -> None:
        if ctx.api in self.apis:
            self._rename(transcript, ctx)

    def _rename(self, transcript: Transcript, ctx: Context) -> None:
        taken = {_folded(name) for _, _, _, name in _documents(transcript)}
        seen: set[str] = set()
        for entry, at, nth, name in _documents(transcript):
            if _folded(name) not in seen:
                seen.add(_folded(name))
                continue
            new = _free_name(name, taken)
            taken.add(_folded(new))
            seen.add(_folded(new))
            part = entry.parts[at]
            entry.parts[at] = Part(part.kind, _renamed(part.raw, nth, new), part.call_id, part.name)
            entry.dirty = True
            call_id = part.call_id if part.kind == RESULT else None
            detail = f"renamed a document {name!r} to {new!r}: an earlier document in messages has that name"
            ctx.report(self, "renamed", entry, call_id, detail)


def _documents(transcript: Transcript) -> list[tuple[Entry, int, int, str]]:
    """Each named document, in order: its entry, its part's index there, which of the part's
    documents it is (a tool result may hold several), its name."""
    found = []
    for entry in transcript.entries:
        for at, part in enumerate(entry.parts):
            found += [(entry, at, nth, name) for nth, name in enumerate(_names_in(part.raw))]
    return found


def _names_in(block: Any) -> list[str]:
    if not isinstance(block, dict):
        return []
    document = block.get("document")
    if isinstance(document, dict) and isinstance(document.get("name"), str):
        return [document["name"]]
    result = block.get("toolResult")
    content = result.get("content") if isinstance(result, dict) else None
    return [n for item in content for n in _names_in(item)] if isinstance(content, list) else []


def _renamed(block: dict[str, Any], nth: int, new: str) -> dict[str, Any]:
    """``block`` with its ``nth`` named document named ``new`` (copied, not changed)."""
    document = block.get("document")
    if isinstance(document, dict):
        return {**block, "document": {**document, "name": new}}
    result = block["toolResult"]
    content = list(result["content"])
    documents = [i for i, item in enumerate(content) if _names_in(item)]
    content[documents[nth]] = _renamed(content[documents[nth]], 0, new)
    return {**block, "toolResult": {**result, "content": content}}


def _free_name(name: str, taken: set[str]) -> str:
    n = 2
    while True:
        suffix = f" ({n})"
        candidate = name[: _MAX_NAME - len(suffix)].rstrip() + suffix
        if _folded(candidate) not in taken:
            return candidate
        n += 1


def _folded(name: str) -> str:
    return " ".join(name.split()).casefold()
