"""Differential fuzzing of ``proxy/http1``'s answer parsing against h11, the reference sans-I/O
HTTP/1.1 implementation.

Hypothesis builds answers byte by byte: odd statuses, interim answers, Content-Length variants
(duplicate, conflicting, negative, non-numeric), chunked bodies with extensions and odd sizes,
trailers, Transfer-Encoding variants, obs-fold, bare LF, answers cut short or delimited by the
close, bytes after the end; and splits each at arbitrary positions, as reads would. h11 reads it
as a client that sent ``POST /``; Suture's Response reads the same pieces through its real code
path (``_feed`` for each read, the upstream's clean close, then ``aiter_raw``). Both must reach
the same verdict: complete, with the same status, headers and body, or an error. Where Suture
differs from h11 on purpose, ``expected`` says so, and why.

The suite runs a bounded number of examples; run more by hand::

    FUZZ_EXAMPLES=20000 .venv/bin/pytest tests/proxy/test_http1_h11_differential.py -q -p no:cacheprovider
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, cast

import h11
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from proxy.http1 import HTTPError, Response

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "300"))

# What Suture refuses on purpose where h11 reads on. httptools (llhttp) is strict where RFC 9112
# lets a recipient be lenient: each leniency is a way for two parsers to disagree on where an
# answer ends (response splitting), and no LLM provider needs one.
STRICTER = {
    # RFC 9112 §5.2: obs-fold is deprecated; h11 unfolds it.
    "obs-fold",
    # RFC 9112 §2.2: a recipient MAY take a lone LF for a line end; h11 does.
    "bare-lf",
    # RFC 9110 §8.6: a recipient MAY merge identical Content-Length values (repeated, or as a
    # list); h11 does.
    "repeated-content-length",
    # RFC 9112 §6.3: Transfer-Encoding overrides Content-Length, and the pair "ought to be handled
    # as an error" (a smuggling attempt); h11 lets Transfer-Encoding win.
    "content-length-with-transfer-encoding",
    # RFC 9112 §7.1.1 allows whitespace (BWS) around a chunk extension's ";" and "="; h11 reads it.
    "whitespace-in-chunk-framing",
    # httptools knows HTTP/0.9, 1.0, 1.1 and 2.0 alone; h11 reads any digit.digit (RFC 9112 §2.3
    # reads 1.2 as 1.1, but no server sends it).
    "unknown-version",
    # An interim answer that would close the connection (an HTTP/1.0 one, though RFC 9110 §15.2
    # has no 1xx for HTTP/1.0, or one with Connection: close): httptools takes the connection as
    # closed there and refuses the final answer after it; h11 reads on.
    "closing-interim",
    # An interim answer whose head declares a body (Transfer-Encoding, a Content-Length but 0):
    # RFC 9110 §15.2 has a 1xx end with its head, as h11 reads it, but httptools reads the body
    # for most; Suture refuses the answer rather than take those bytes for the final one's.
    "framed-interim",
}


# Fields RFC 9110 §6.5.1 keeps out of trailers, one at most per answer: h11 reads (and validates)
# them as it does header fields; Suture drops them, and neither takes them for the body's framing.
FORBIDDEN_TRAILERS = [
    b"Content-Length: 5",
    b"Content-Length: 0",
    b"Content-Length: five",
    b"Transfer-Encoding: chunked",
    b"Host: elsewhere",
    b"Content-Type: text/plain",
]


@dataclass(frozen=True)
class Answer:
    wire: bytes
    """What the upstream sends."""
    for_h11: bytes
    """The same answer with its Transfer-Encoding as h11 supports it (see ``answers``)."""
    stricter: frozenset[str]
    """What in it Suture refuses on purpose (STRICTER)."""
    reads: tuple[int, ...]
    """Where the reads split it."""


@dataclass(frozen=True)
class Complete:
    status: int
    headers: tuple[tuple[bytes, bytes], ...]
    """Lower-case names and values without trailing whitespace, Transfer-Encoding left out."""
    body: bytes


ERROR = "error"
Verdict = Complete | str


class _Lines:
    """Line ends for one answer: CRLF; in one answer out of eight, now and then a lone LF."""

    def __init__(self, draw: st.DrawFn, stricter: set[str]) -> None:
        self.draw = draw
        self.stricter = stricter
        self.odd = draw(st.integers(0, 7)) == 0

    def end(self) -> bytes:
        if self.odd and self.draw(st.booleans()):
            self.stricter.add("bare-lf")
            return b"\n"
        return b"\r\n"


def _status_line(draw: st.DrawFn, lines: _Lines, interim: bool) -> tuple[bytes, bytes, bytes]:
    """A status line, its version and its status code."""
    if interim:
        code = b"%d" % draw(st.sampled_from([100, 102, 103, 199]))
    elif draw(st.integers(0, 29)) == 0:
        code = draw(st.sampled_from([b"20", b"2000", b"2x0", b" 200"]))
    else:
        usual = st.sampled_from([200] * 8 + [201, 204, 304, 400, 404, 429, 500, 503, 599])
        odd = st.one_of(st.sampled_from([600, 999, 0, 99, 101, 150]), st.integers(0, 999))
        code = b"%03d" % draw(odd if draw(st.integers(0, 7)) == 0 else usual)
    if interim:
        version = draw(st.sampled_from([b"HTTP/1.1"] * 9 + [b"HTTP/1.0"]))
    else:
        version = draw(
            st.sampled_from(
                [b"HTTP/1.1"] * 12 + [b"HTTP/1.0"] * 4 + [b"HTTP/0.9", b"HTTP/2.0", b"HTTP/1.2", b"HTTP/3.0"]
            )
        )
        if version in (b"HTTP/1.2", b"HTTP/3.0"):
            lines.stricter.add("unknown-version")
    reason = draw(st.sampled_from([b" OK", b"", b" ", b" Odd \t reason"]))
    return version + b" " + code + reason + lines.end(), version, code


def _other_headers(draw: st.DrawFn, lines: _Lines) -> list[bytes]:
    headers = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(
            st.sampled_from(
                ["plain"] * 12
                + ["empty", "odd-value", "folded", "connection", "connection", "no-colon", "space-before-colon"]
            )
        )
        if kind == "plain":
            headers.append(b"Content-Type: text/event-stream")
        elif kind == "empty":
            headers.append(b"X-Empty:")
        elif kind == "odd-value":
            headers.append(b"X-Odd: a\tb \x80\xff")
        elif kind == "folded":
            lines.stricter.add("obs-fold")
            headers.append(b"X-Folded: first" + lines.end() + draw(st.sampled_from([b" ", b"\t"])) + b"second")
        elif kind == "connection":
            headers.append(b"Connection: " + draw(st.sampled_from([b"close", b"keep-alive"])))
        elif kind == "no-colon":
            headers.append(b"Bad Header")
        else:
            headers.append(b"X-Space : a")
    return headers


def _content_length(draw: st.DrawFn, body: bytes, stricter: set[str]) -> list[bytes]:
    right = len(body)
    variant = draw(
        st.sampled_from(
            ["exact"] * 8
            + [
                "short",
                "long",
                "repeated",
                "list",
                "conflicting",
                "negative",
                "non-numeric",
                "plus",
                "padded",
                "zeros",
                "huge",
            ]
        )
    )
    if variant in ("repeated", "list"):
        stricter.add("repeated-content-length")
    values = {
        "exact": [b"%d" % right],
        "short": [b"%d" % max(0, right - draw(st.integers(1, 3)))],
        "long": [b"%d" % (right + draw(st.integers(1, 3)))],
        "repeated": [b"%d" % right, b"%d" % right],
        "list": [b"%d, %d" % (right, right)],
        "conflicting": [b"%d" % right, b"%d" % (right + 1)],
        "negative": [b"-1"],
        "non-numeric": [b"five"],
        "plus": [b"+%d" % right],
        "padded": [b" %d " % right],
        "zeros": [b"00%d" % right],
        "huge": [b"9" * 25],
    }[variant]
    return [b"Content-Length: " + value for value in values]


def _chunked(draw: st.DrawFn, body: bytes, lines: _Lines) -> bytes:
    encoded = b""
    rest = body
    while rest:
        size = draw(st.integers(1, len(rest)))
        piece, rest = rest[:size], rest[size:]
        if draw(st.integers(0, 19)) == 0:
            # A size that is not the data's; never 0, which would be the last chunk and make the
            # data after it a trailer section (where a lone LF is Suture's stricter "bare-lf").
            size += draw(st.sampled_from([-1, 1])) if size > 1 else 1
        encoded += _chunk_size(draw, size, lines) + lines.end() + piece + lines.end()
    encoded += _chunk_size(draw, 0, lines) + lines.end()
    trailers = []
    for _ in range(draw(st.integers(0, 2))):
        if draw(st.integers(0, 9)) == 0:
            lines.stricter.add("obs-fold")
            trailers.append(b"X-Trailer: first" + lines.end() + b" second" + lines.end())
        else:
            trailers.append(b"X-Trailer: " + draw(st.sampled_from([b"1", b"checksum=abc", b""])) + lines.end())
    forbidden = draw(st.sampled_from([None] * 6 + FORBIDDEN_TRAILERS))
    if forbidden is not None:
        trailers.insert(draw(st.integers(0, len(trailers))), forbidden + lines.end())
    return encoded + b"".join(trailers) + lines.end()


def _chunk_size(draw: st.DrawFn, size: int, lines: _Lines) -> bytes:
    text = draw(st.sampled_from([b"%x", b"%X", b"00%x"])) % size
    extension = draw(st.sampled_from([b""] * 12 + [b";a=b", b";a", b';a="q s"', b";a=b;c", b"; a=b", b";a = b", b" "]))
    if b" " in extension and b'"' not in extension:
        lines.stricter.add("whitespace-in-chunk-framing")
    return text + extension


@st.composite
def answers(draw: st.DrawFn) -> Answer:
    stricter: set[str] = set()
    lines = _Lines(draw, stricter)
    wire = b""
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        status_line, version, _ = _status_line(draw, lines, interim=True)
        header = draw(st.sampled_from([b"", b"", b"", b"Link: </style.css>; rel=preload", b"Connection: close"]))
        if version == b"HTTP/1.0" or header == b"Connection: close":
            stricter.add("closing-interim")
        wire += status_line + (header + lines.end() if header else b"") + lines.end()
    status_line, version, code = _status_line(draw, lines, interim=False)
    headers = _other_headers(draw, lines)
    # Drawn as the final answer, read as an interim one.
    interim = len(code) == 3 and code.startswith(b"1")
    if interim and (version != b"HTTP/1.1" or b"Connection: close" in headers):
        stricter.add("closing-interim")
    body = draw(st.binary(max_size=40))
    framing = draw(
        st.sampled_from(["length"] * 3 + ["chunked"] * 3 + ["close"] * 2 + ["length-and-chunked", "other-coding"])
    )
    # h11 supports Transfer-Encoding: chunked alone. RFC 9112 §6.3: a response whose final coding
    # is chunked is chunked (for h11, the header becomes just that); one whose final coding is
    # another is read until the close (for h11, the header goes, leaving the close as the end).
    coding_headers: list[bytes] = []
    coding_headers_for_h11: list[bytes] = []
    if framing == "length":
        headers += _content_length(draw, body, stricter)
        payload = body
    elif framing == "close":
        payload = body
    else:
        if framing == "other-coding":
            codings = draw(st.sampled_from([[b"identity"], [b"gzip"], [b"chunked, identity"], [b"chunked", b"gzip"]]))
            payload = body
        else:
            codings = draw(
                st.sampled_from([[b"chunked"], [b"chunked"], [b"Chunked"], [b"gzip, chunked"], [b"gzip", b"chunked"]])
            )
            in_body: set[str] = set()
            payload = _chunked(draw, body, _Lines(draw, in_body))
            if code not in (b"204", b"304"):
                stricter |= in_body  # what follows a 204 or 304's head is no part of it
            coding_headers_for_h11 = [b"Transfer-Encoding: chunked"]
        coding_headers = [b"Transfer-Encoding: " + coding for coding in codings]
        if framing == "length-and-chunked":
            stricter.add("content-length-with-transfer-encoding")
            headers += _content_length(draw, body, set())
    if interim and (coding_headers or any(_declares_content(field) for field in headers)):
        stricter.add("framed-interim")
    position = draw(st.integers(0, len(headers)))  # where the Transfer-Encoding lines go
    before, after = headers[:position], headers[position:]
    before_ends = [lines.end() for _ in before]
    coding_ends = [lines.end() for _ in coding_headers]
    after_ends = [lines.end() for _ in after]
    last_end = lines.end()

    def head(coding_lines: bytes) -> bytes:
        return status_line + _joined(before, before_ends) + coding_lines + _joined(after, after_ends) + last_end

    # h11's coding line ends in CRLF: a lone LF in the line it stands for is noted already.
    wire_head = head(_joined(coding_headers, coding_ends))
    h11_head = head(_joined(coding_headers_for_h11, [b"\r\n"] * len(coding_headers_for_h11)))
    extra = draw(st.sampled_from([b"", b"", b"garbage", b"\r\n", b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nextra"]))
    wire, for_h11 = wire + wire_head + payload + extra, wire + h11_head + payload + extra
    if draw(st.integers(0, 4)) == 0:
        # The same bytes off the end of both: cut short, mostly near the end.
        cut = draw(st.integers(1, min(len(wire), 8)) if draw(st.booleans()) else st.integers(1, len(wire)))
        wire, for_h11 = wire[:-cut], for_h11[: max(0, len(for_h11) - cut)]
    reads = tuple(sorted(set(draw(st.lists(st.integers(1, max(1, len(wire) - 1)), max_size=6)))))
    return Answer(wire, for_h11, frozenset(stricter), reads)


def _declares_content(field: bytes) -> bool:
    name, _, value = field.partition(b":")
    if name.lower() != b"content-length":
        return False
    return not value.strip().isdigit() or int(value) != 0


def _joined(fields: list[bytes], ends: list[bytes]) -> bytes:
    return b"".join(field + end for field, end in zip(fields, ends, strict=True))


def _pieces(data: bytes, reads: tuple[int, ...]) -> list[bytes]:
    bounds = [0, *(read for read in reads if read < len(data)), len(data)]
    return [data[start:end] for start, end in itertools.pairwise(bounds) if end > start]


def h11_verdict(answer: Answer) -> Verdict:
    client = h11.Connection(h11.CLIENT)
    client.send(h11.Request(method="POST", target="/", headers=[("Host", "upstream"), ("Content-Length", "2")]))
    client.send(h11.Data(data=b"{}"))
    client.send(h11.EndOfMessage())
    final: h11.Response | None = None
    body = bytearray()
    try:
        for piece in [*_pieces(answer.for_h11, answer.reads), b""]:  # b"": the upstream's close
            client.receive_data(piece)
            while (read := client.next_event()) not in (h11.NEED_DATA, h11.PAUSED):
                if isinstance(read, h11.Response):
                    final = read
                elif isinstance(read, h11.Data):
                    body += read.data
                elif isinstance(read, h11.EndOfMessage):
                    assert final is not None
                    headers = tuple((name.lower(), value.rstrip(b" \t")) for name, value in final.headers.raw_items())
                    return Complete(final.status_code, _without_coding(headers), bytes(body))
                elif isinstance(read, h11.ConnectionClosed):
                    return ERROR
    except h11.RemoteProtocolError:
        return ERROR
    raise AssertionError("h11 neither finished the answer nor failed at the close")


class _Wire:
    """The connection, as far as a Response calls it."""

    def abort(self) -> None:
        pass

    def pause(self) -> None:
        pass

    def resume(self) -> None:
        pass

    def finished(self, response: Response, *, reusable: bool) -> None:
        pass


def suture_verdict(answer: Answer) -> Verdict:
    response = Response(_Wire(), None)  # type: ignore[arg-type]
    for piece in _pieces(answer.wire, answer.reads):
        response._feed(piece)
    response._lost(None, clean_end=True, request_unseen=False)
    try:
        body = _drained(response)
    except HTTPError:
        return ERROR
    headers = tuple((name.lower(), value.rstrip(b" \t")) for name, value in response.headers)
    return Complete(response.status_code, _without_coding(headers), body)


def _drained(response: Response) -> bytes:
    """``aiter_raw`` to its end, stepped by hand: after the close it has nothing to wait for."""
    body = b""
    chunks = response.aiter_raw()
    while True:
        step = cast("Coroutine[Any, Any, bytes]", chunks.__anext__())
        try:
            step.send(None)
        except StopIteration as chunk:
            body += chunk.value
        except StopAsyncIteration:
            return body
        else:
            raise AssertionError("the body waits for bytes after the connection closed")


def _without_coding(headers: tuple[tuple[bytes, bytes], ...]) -> tuple[tuple[bytes, bytes], ...]:
    # h11 sees the Transfer-Encoding it supports (see answers), so that header cannot compare.
    return tuple((name, value) for name, value in headers if name != b"transfer-encoding")


def expected(answer: Answer, h11_saw: Verdict) -> Verdict:
    """Suture's verdict: h11's, but where Suture differs on purpose."""
    assert answer.stricter <= STRICTER
    if answer.stricter:
        return ERROR
    if isinstance(h11_saw, Complete) and not 100 <= h11_saw.status <= 599:
        # Relayed, a status outside 100-599 makes the ASGI server raise: Suture answers 502.
        return ERROR
    return h11_saw


_CONTENT_LENGTH_TRAILER = (
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nContent-Length: 5\r\n\r\n"
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answers())
@example(Answer(_CONTENT_LENGTH_TRAILER, _CONTENT_LENGTH_TRAILER, frozenset(), (60,)))
def test_suture_reads_an_answer_as_h11_does(answer: Answer) -> None:
    h11_saw = h11_verdict(answer)
    # What the examples cover (pytest --hypothesis-show-statistics).
    event("h11: " + ("complete" if isinstance(h11_saw, Complete) else "error"))
    for reason in answer.stricter:
        event("stricter: " + reason)
    assert suture_verdict(answer) == expected(answer, h11_saw)
