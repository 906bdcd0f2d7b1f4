"""An answer's head: how large it may be, and what it says of its body's framing, read as
httptools reads it."""

from __future__ import annotations

Headers = list[tuple[bytes, bytes]]

# An answer's status line and headers, and again what follows its body (chunk framing with no
# body bytes, trailers); more is not an LLM provider (nor an egress proxy) talking.
MAX_HEAD_BYTES = 64 * 1024


def declares_a_body(headers: Headers) -> bool:
    """Whether a head declares a body: a Transfer-Encoding, or a Content-Length other than 0."""
    return any(
        key.lower() == b"transfer-encoding" or (key.lower() == b"content-length" and int(value) != 0)
        for key, value in headers
    )


def length_is_declared(headers: Headers) -> bool:
    """Whether the body's end is in its framing, not the connection's (RFC 9112 §6.3): a
    Content-Length, or a Transfer-Encoding whose final coding is chunked, as httptools reads it."""
    codings = []
    for key, value in headers:
        key = key.lower()
        if key == b"content-length":
            return True  # httptools refuses one alongside a Transfer-Encoding
        if key == b"transfer-encoding":
            codings.append(value)
    if not codings:
        return False
    final = b",".join(codings).rsplit(b",", 1)[-1]
    # httptools skips spaces and tabs before a coding, and only spaces after one.
    return final.lstrip(b" \t").rstrip(b" ").lower() == b"chunked"
