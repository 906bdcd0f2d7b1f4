"""uvicorn's httptools protocol, with a bound on the request head and a way to drop a client.

uvicorn's httptools protocol keeps every header line a client sends, and llhttp sets no limit of
its own: one unauthenticated connection sending header lines without end grew the process by
2.2 GB in 10 s. Here a head past ``MAX_HEAD_BYTES`` (request line and headers) or
``MAX_HEADERS`` header fields is answered 431 and the connection closed, before any of Suture
runs. nginx and Node.js refuse heads of 8 to 32 KiB; LLM SDKs send about 1 KiB.
"""

from __future__ import annotations

import logging

import orjson
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .client_watch import ABORT_SCOPE_KEY

MAX_HEAD_BYTES = 64 * 1024
MAX_HEADERS = 100

_log = logging.getLogger("suture.access")


class _HeadTooLarge(Exception):
    pass


class SutureHttpProtocol(HttpToolsProtocol):
    """``uvicorn.Config(http=SutureHttpProtocol)``: what ``suture serve`` runs.

    Two counts: the bytes of a head still incomplete after a read (one header line sent without
    end never reaches a callback), and the parsed request line and headers (a read may hold a
    whole head and the start of a large body: only the head's bytes count).
    """

    _head_open = True
    _arrived = 0
    _parsed = 0
    _header_count = 0

    def data_received(self, data: bytes) -> None:
        if self._head_open:
            self._arrived += len(data)
        # A callback's _HeadTooLarge reaches uvicorn as a parser error: it calls send_400_response.
        super().data_received(data)
        if self._head_open and self._arrived > MAX_HEAD_BYTES:
            self._refuse()

    def send_400_response(self, msg: str) -> None:
        if self._head_open and (self._parsed > MAX_HEAD_BYTES or self._header_count > MAX_HEADERS):
            self._refuse()
        else:
            super().send_400_response(msg)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._head_open = True
        self._parsed = self._header_count = 0
        self.scope[ABORT_SCOPE_KEY] = self.transport.abort  # type: ignore[literal-required]

    def on_url(self, url: bytes) -> None:
        self._parsed += len(url)
        if self._parsed > MAX_HEAD_BYTES:
            raise _HeadTooLarge
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_count += 1
        self._parsed += len(name) + len(value) + 4
        if self._header_count > MAX_HEADERS or self._parsed > MAX_HEAD_BYTES:
            raise _HeadTooLarge
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._head_open = False
        self._arrived = 0
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._head_open = True
        self._arrived = 0

    def _refuse(self) -> None:
        if self.transport.is_closing():
            return
        what = f"more than {MAX_HEADERS} header fields" if self._header_count > MAX_HEADERS else (
            f"a request line and headers over {MAX_HEAD_BYTES} bytes"
        )
        message = f"Suture refused the request: {what}"
        body = orjson.dumps({"error": {"message": message, "type": "request_header_fields_too_large"}})
        self.transport.write(
            b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\n"
            b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )
        self.transport.close()
        client = f"{self.client[0]}:{self.client[1]}" if self.client else None
        _log.warning("request refused", extra={"fields": {"status": 431, "reason": what, "client": client}})
