from __future__ import annotations

from typing import Any, ClassVar

from .._ir import OTHER, RESULT, Part, Transcript
from ..dialects.gemini import nested_response_parts
from ..validation._gemini import response_parts_refused
from ._base import Context, Rule

_FILE_KEYS = ("inlineData", "inline_data", "fileData", "file_data")
_DISPLAY_NAME_KEYS = ("displayName", "display_name")


class NestedResponseParts(Rule):
    """
    What it repairs:
        For a model before Gemini 3, files nested in a function response
        (``functionResponse.parts``, Gemini 3's multimodal function responses): a client that
        decided the model was a Gemini 3 one, or history written for Gemini 3 and sent on to an
        earlier model.

    Why:
        Gemini 2.5: "Unable to submit request because `function_response.parts` is not supported
        for this model. Learn more:
        https://cloud.google.com/vertex-ai/generative-ai/docs/multimodal/function-calling"
        (google-gemini/gemini-cli#19436)

    Example:
        Before (model gemini-2.5-flash): user "look at it" / model functionCall read_file /
                user functionResponse read_file {response, parts [inlineData image/png]}
        After:  user "look at it" / model functionCall read_file / user [functionResponse
                read_file {response}, inlineData image/png]

    Safety:
        No file is lost: each moves, in order, out of its response into a part of the same
        content, after the function responses, which is how Gemini CLI sends a tool's files to
        a model before Gemini 3 (and how those models read them). The model then reads the files
        as part of the turn rather than of the response. A file's ``displayName``, which only a
        function response's file takes, is removed and kept in the repair record (a ``$ref`` to
        it in the response then names nothing). Only for models known to be before Gemini 3,
        named by the URL, and not the Computer Use ones, which take nested parts.
    """

    code = "GM011"
    name = "nested-response-parts"
    looks_past_format = True
    apis = frozenset({"gemini"})
    fixes: ClassVar[tuple[str, ...]] = ("gemini.response-parts-unsupported",)

    def clean(self, body: dict[str, Any], ctx: Context) -> bool:
        # Valid for Gemini 3; only the model, which a native body does not name, says otherwise.
        return not response_parts_refused(ctx.model) or not nested_response_parts(body)

    def apply(self, transcript: Transcript, ctx: Context) -> None:
        if not response_parts_refused(ctx.model):
            return
        for entry in transcript.entries:
            moved: list[Any] = []
            for k, part in enumerate(entry.parts):
                split = _split(part.raw) if part.kind == RESULT else None
                if split is None:
                    continue
                raw, files, names = split
                entry.parts[k] = Part(RESULT, raw, part.call_id, part.name)
                moved += files
                detail = f"moved {len(files)} file(s) out of the response to {part.name!r}, beside it"
                if names:
                    detail += f"; removed their display names: {', '.join(names)}"
                ctx.report(self, "moved", entry, part.call_id, detail)
            if moved:
                after = max(k for k, p in enumerate(entry.parts) if p.kind == RESULT) + 1
                entry.parts[after:after] = [Part(OTHER, raw) for raw in moved]
                entry.dirty = True


def _split(raw: dict[str, Any]) -> tuple[dict[str, Any], list[Any], list[str]] | None:
    """The response part without its nested parts, those parts as parts of the content, and the
    display names they lose; None when the response nests none."""
    key = "functionResponse" if "functionResponse" in raw else "function_response"
    answer = raw.get(key)
    if not isinstance(answer, dict) or not isinstance(answer.get("parts"), list) or not answer["parts"]:
        return None
    files, names = [], []
    for item in answer["parts"]:
        file, name = _without_display_name(item)
        files.append(file)
        names += name
    kept = {k: v for k, v in answer.items() if k != "parts"}
    return {**raw, key: kept}, files, names


def _without_display_name(item: Any) -> tuple[Any, list[str]]:
    if not isinstance(item, dict):
        return item, []
    out, names = dict(item), []
    for key in _FILE_KEYS:
        blob = out.get(key)
        if isinstance(blob, dict) and any(k in blob for k in _DISPLAY_NAME_KEYS):
            names += [repr(blob[k]) for k in _DISPLAY_NAME_KEYS if k in blob]
            out[key] = {k: v for k, v in blob.items() if k not in _DISPLAY_NAME_KEYS}
    return out, names
