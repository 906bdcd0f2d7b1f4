"""JSON bytes for whatever a client sent, however deeply nested.

orjson reads 1,024 levels of nesting but writes only 254: a body a client sent, parsed by orjson,
may be one orjson cannot write back. Python's own encoder writes it instead (compact, a few times
slower, only on that rare body), so a repaired body, a capture or ``suture fix``'s output is
never lost to the nesting alone.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import orjson

# orjson reads 1,024 levels; Python's encoder counts one recursion per level on top of the caller's.
_DEPTH_NEEDED = 1024 + 1000


def dumps(obj: Any, *, indent: bool = False, non_str_keys: bool = False) -> bytes:
    """``obj`` as UTF-8 JSON: orjson's (indented by two spaces, keys that are not strings written as
    strings, if asked: the latter costs orjson 8% on a 2 MB body, and a parsed body has none), or
    Python's encoder's, compact, past the nesting orjson writes."""
    option = (orjson.OPT_NON_STR_KEYS if non_str_keys else 0) | (orjson.OPT_INDENT_2 if indent else 0)
    try:
        return orjson.dumps(obj, option=option)
    except orjson.JSONEncodeError as exc:
        if "recursion" not in str(exc).lower():
            raise
    if sys.getrecursionlimit() < _DEPTH_NEEDED:
        # Raised once and left raised: lowering it again could cut short another thread's call.
        sys.setrecursionlimit(_DEPTH_NEEDED)
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
