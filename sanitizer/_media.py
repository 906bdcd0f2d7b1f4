"""What an image block's base64 data is, read from its first bytes, against what the block says.

Anthropic decodes every base64 image and refuses one whose bytes are not the declared media
type; a client that labels a screenshot by its file name, or converts images without relabelling
them, kills the session on that turn and every later one. The four types Anthropic takes each
open with a fixed signature, so a dozen bytes say which one an image is.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any


def image_type(data: str) -> str | None:
    """The media type the base64 ``data`` starts like (PNG, JPEG, GIF, WebP), or None."""
    try:
        head = base64.b64decode(data[:16], validate=True)
    except (binascii.Error, ValueError):
        return None
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def mislabelled(block: Any) -> tuple[str, str] | None:
    """(declared, actual) for an image block whose base64 data is another type than it declares."""
    if type(block) is not dict or block.get("type") != "image":
        return None
    source = block.get("source")
    if type(source) is not dict or source.get("type") != "base64":
        return None
    declared, data = source.get("media_type"), source.get("data")
    if type(declared) is not str or type(data) is not str:
        return None
    actual = image_type(data)
    return (declared, actual) if actual is not None and actual != declared else None
