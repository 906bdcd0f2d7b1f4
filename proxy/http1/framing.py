"""The wire format around the bytes: a request's head; an answer's head (how large it may be, what
its status and framing say, read as httptools reads it); what the connection's end means."""

from __future__ import annotations

from .errors import HTTPError, ReadError, RemoteProtocolError, _StaleConnection

Headers = list[tuple[bytes, bytes]]

# An answer's status line and headers, and again what follows its body (chunk framing with no
# body bytes, trailers); more is not an LLM provider (nor an egress proxy) talking.
MAX_HEAD_BYTES = 64 * 1024


def request_head(method: bytes, target: bytes, host: bytes, headers: Headers, body: bytes | None) -> bytes:
    """A request's head as it goes on the wire; a ``body`` of bytes gets its Content-Length."""
    parts = [method, b" ", target, b" HTTP/1.1\r\nHost: ", host, b"\r\n"]
    for name, value in headers:
        parts += (name, b": ", value, b"\r\n")
    if body is not None:
        parts += (b"Content-Length: ", str(len(body)).encode(), b"\r\n")
    parts.append(b"\r\n")
    head = b"".join(parts)
    # One line per header, the request line and the blank line: any other CR or LF, or a NUL,
    # came from a name or a value (a configured key with a line break would inject headers).
    # Counted on the joined head, in C, rather than searched for in each header.
    lines = len(headers) + 3 + (body is not None)
    if head.count(b"\n") != lines or head.count(b"\r") != lines or b"\0" in head:
        for name, value in headers:
            if any(bad in name or bad in value for bad in (b"\r", b"\n", b"\0")):
                raise RemoteProtocolError(f"header {name[:64]!r} holds a line break or NUL: not sent")
        # The method, the target or the host: checked where they are made, never from a client.
        raise RemoteProtocolError("the request line holds a line break or NUL: not sent")
    return head


def ending_error(
    received: int, close_delimited: bool, clean_end: bool, request_unseen: bool, exc: Exception | None
) -> HTTPError | None:
    """What the end of the connection means for an answer not over yet: None when it ends a body
    the close delimits (``close_delimited``: in such a body now), else the error it is."""
    if received == 0 and request_unseen:
        return _StaleConnection("the reused connection was closed by the upstream")
    if close_delimited and clean_end:
        return None
    if isinstance(exc, OSError):
        return ReadError(str(exc) or type(exc).__name__)
    if received == 0:
        return RemoteProtocolError("the upstream closed the connection before answering")
    if close_delimited:
        # A TCP close without TLS's close_notify may be anyone's (a truncation attack, a
        # middlebox): only close_notify says the upstream ended the body (RFC 8446 §6.1).
        return RemoteProtocolError("the connection ended without TLS close_notify: the body may be cut short")
    return RemoteProtocolError("the upstream closed the connection before the answer was complete")


def status_problem(status: int, headers: Headers) -> str | None:
    """What makes a head's status unusable, or None: an answer to no request here asks for."""
    if status == 101:
        return "the upstream switched protocols (101), which no request here asks for"
    if not 100 <= status <= 599:
        # httptools takes any three digits; the ASGI server refuses to send such a status.
        return f"malformed answer from the upstream: status {status} is outside 100-599"
    if status < 200 and declares_a_body(headers):
        # A 1xx ends with its head (RFC 9110 §15.2), but httptools reads the body declared by
        # most: its bytes would open the final answer's body.
        return "malformed answer from the upstream: an interim (1xx) answer with a body"
    return None


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
