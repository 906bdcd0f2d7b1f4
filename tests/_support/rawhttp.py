"""A minimal HTTP/1.1 client on raw asyncio streams, for load: keep-alive, Content-Length and chunked
bodies, nothing else. An SDK or httpx would spend the test's CPU on itself rather than on Suture."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


def request_bytes(method: str, path: str, body: bytes, headers: dict[str, str] | None = None) -> bytes:
    lines = [
        f"{method} {path} HTTP/1.1",
        "host: 127.0.0.1",
        "content-type: application/json",
        f"content-length: {len(body)}",
        *(f"{k}: {v}" for k, v in (headers or {}).items()),
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        if line:
            key, _, value = line.partition(":")
            headers[key.strip().lower()] = value.strip()
    return int(lines[0].split(" ", 2)[1]), headers


async def read_answer(reader: asyncio.StreamReader) -> Answer:
    status, headers = await read_head(reader)
    if "content-length" in headers:
        return Answer(status, headers, await reader.readexactly(int(headers["content-length"])))
    body = bytearray()
    while True:  # chunked
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return Answer(status, headers, bytes(body))
        body += (await reader.readexactly(size + 2))[:-2]


class Connection:
    """One keep-alive connection, reopened when the server closes it."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def send(self, raw: bytes) -> Answer:
        if self.writer is None or self.reader is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writer.write(raw)
        answer = await read_answer(self.reader)
        if answer.headers.get("connection", "").lower() == "close":
            await self.close()
        return answer

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(ConnectionError):
                await self.writer.wait_closed()
        self.reader = self.writer = None
