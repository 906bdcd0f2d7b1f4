"""OpenAI's embeddings: ``POST /v1/embeddings``, one deterministic vector per input.

No transcript here, so nothing for Suture to repair: the route exists so that its pass-through
(``passthrough: true``) can be tried offline. The same model and input always give the same small
vector; ``dimensions`` picks its length (8 unless asked) and ``encoding_format: base64`` (what the
openai SDK asks for by default) packs it as little-endian float32, as OpenAI does.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from typing import Any

from .script import count_tokens

DEFAULT_DIMENSIONS = 8
# text-embedding-3-large's length; a larger ``dimensions`` is refused.
MAX_DIMENSIONS = 3072
# OpenAI's texts for a missing model and an input of the wrong shape.
MISSING_MODEL = "you must provide a model parameter"
INVALID = "'$.{field}' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference."
# Not captured from the live API; the wording is the emulator's.
MISSING_INPUT = "Missing required parameter: 'input'."


def refusal(body: dict[str, Any]) -> str | None:
    """OpenAI's 400 text for a body it would refuse, else None."""
    if not isinstance(body.get("model"), str) or not body["model"]:
        return MISSING_MODEL
    if "input" not in body:
        return MISSING_INPUT
    if _inputs(body["input"]) is None:
        return INVALID.format(field="input")
    dimensions = body.get("dimensions", DEFAULT_DIMENSIONS)
    if type(dimensions) is not int or not 1 <= dimensions <= MAX_DIMENSIONS:
        return INVALID.format(field="dimensions")
    if body.get("encoding_format", "float") not in ("float", "base64"):
        return INVALID.format(field="encoding_format")
    return None


def render(body: dict[str, Any]) -> dict[str, Any]:
    """The embeddings response for a body :func:`refusal` accepted."""
    inputs = _inputs(body["input"]) or []
    model: str = body["model"]
    dimensions: int = body.get("dimensions", DEFAULT_DIMENSIONS)
    as_base64 = body.get("encoding_format") == "base64"
    data = []
    for index, item in enumerate(inputs):
        vector = _vector(model, item, dimensions)
        packed = base64.b64encode(struct.pack(f"<{dimensions}f", *vector)).decode("ascii")
        data.append({"object": "embedding", "index": index, "embedding": packed if as_base64 else vector})
    tokens = sum(len(item) if isinstance(item, list) else count_tokens(item) for item in inputs)
    return {"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


def _inputs(value: Any) -> list[str | list[int]] | None:
    """Each input to embed: a string or an array of token ids (what LangChain sends), or None
    when ``value`` is neither one of them nor a non-empty list of them."""
    if isinstance(value, str):
        return [value] if value else None
    if not isinstance(value, list) or not value:
        return None
    if all(type(v) is int for v in value):
        return [value]
    if all(isinstance(v, str) and v for v in value):
        return list(value)
    if all(isinstance(v, list) and v and all(type(t) is int for t in v) for v in value):
        return list(value)
    return None


def _vector(model: str, item: str | list[int], dimensions: int) -> list[float]:
    # Each byte b of a SHA-256 stream becomes (2b - 255) / 256: in (-1, 1) and exact in float32,
    # so the float and base64 encodings of one vector are the same numbers.
    seed = json.dumps([model, item]).encode()
    stream = b"".join(hashlib.sha256(seed + block.to_bytes(4, "big")).digest() for block in range(-(-dimensions // 32)))
    return [(2 * b - 255) / 256 for b in stream[:dimensions]]
