"""AWS event-stream framing (``application/vnd.amazon.eventstream``), as Bedrock's ConverseStream sends it.

botocore can parse these messages but not write them, so the emulator encodes them itself:

    prelude   total length (u32), headers length (u32), CRC32 of those 8 bytes (u32)
    headers   per header: name length (u8), name, value type (u8, 7 = string), length (u16), value
    payload   the event's JSON
    trailer   CRC32 of everything before it (u32)

All integers are big-endian.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Mapping
from typing import Any

_STRING = 7
_PRELUDE = 12  # two lengths and their CRC
_TRAILER = 4


def _header(name: str, value: str) -> bytes:
    raw_name, raw_value = name.encode(), value.encode()
    return struct.pack(">B", len(raw_name)) + raw_name + struct.pack(">BH", _STRING, len(raw_value)) + raw_value


def message(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One event-stream message with string ``headers`` and ``payload`` bytes."""
    encoded = b"".join(_header(k, v) for k, v in headers.items())
    total = _PRELUDE + len(encoded) + len(payload) + _TRAILER
    lengths = struct.pack(">II", total, len(encoded))
    head = lengths + struct.pack(">I", zlib.crc32(lengths)) + encoded + payload
    return head + struct.pack(">I", zlib.crc32(head))


def event(event_type: str, body: Mapping[str, Any]) -> bytes:
    """A Converse stream event (``messageStart``, ``contentBlockDelta``...) with its JSON body."""
    payload = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    return message({":event-type": event_type, ":content-type": "application/json", ":message-type": "event"}, payload)
