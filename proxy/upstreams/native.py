"""Requests to an upstream (URL, signing, retries, error mapping) and the relay of its answer."""

from __future__ import annotations

import asyncio
import email.utils
import logging
import math
import random
import re
import ssl
import urllib.parse
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Set
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from .. import http1
from ..client_watch import ClientWatch
from ..http1 import ConnectionPool, Response
from ..logs import log, upstream_log
from ..redaction import Secrets, StreamMask
from .streamed import Outcome, StreamedAnswer, UpstreamBroke, UpstreamFailure

# RFC 9110 §7.6.1: meaningful for one connection only, never forwarded. `expect` is answered by
# our own server; `host` and `content-length` are set anew for the upstream request.
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
_NOT_FORWARDED = HOP_BY_HOP | {"host", "content-length", "expect"}
# uvicorn writes its own `date`; two would confuse clients.
# Suture stamps its own x-suture-* (an upstream that is another Suture has stamped its own).
_NOT_RELAYED = HOP_BY_HOP | {"date", "x-suture-request-id", "x-suture-repairs", "x-suture-rules"}
_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}
_SSE_HEADER_NAMES = frozenset(k.encode() for k in _SSE_HEADERS)
_SSE_HEADER_PAIRS = [(k.encode(), v.encode()) for k, v in _SSE_HEADERS.items()]
# Seconds of an upstream's Retry-After (or retry-after-ms) that Suture waits out itself before a retry.
_MAX_RETRY_AFTER = 30

Headers = list[tuple[bytes, bytes]]


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Seconds an upstream request may wait: to connect, for the next bytes of an answer, to send
    the next bytes of a request, for a free connection."""

    connect: float = 10.0
    read: float = 600.0
    write: float = 60.0
    pool: float = 10.0


@dataclass(frozen=True, slots=True)
class Retries:
    """A bounded retry of one upstream request: ``attempts`` in all, for what ``when`` names
    (``connect``, ``429``, ``5xx``), ``backoff`` seconds before the second, doubled after."""

    attempts: int = 1
    when: tuple[str, ...] = ("connect", "429", "5xx")
    backoff: float = 0.5


class UpstreamError(UpstreamFailure):
    """The upstream gave no HTTP answer. ``status`` is what Suture answers instead."""

    status = 502
    outcome = "unreachable"

    def __init__(self, base_url: str, cause: Exception) -> None:
        self.base_url = base_url
        self.cause = type(cause).__name__
        # Other causes stay a class name in errors and logs.
        self.detail = str(cause) if isinstance(cause, http1.HTTPError) and cause.shown_to_client else ""
        super().__init__(self.describe())

    def describe(self) -> str:
        detail = f": {self.detail}" if self.detail else ""
        return f"Suture could not reach the upstream {self.base_url} ({self.cause}{detail})"


class UpstreamSigningError(UpstreamError):
    status = 502
    outcome = "signing_failed"

    def describe(self) -> str:
        return f"Suture could not sign the request for {self.base_url} ({self.cause})"


class UpstreamPoolFull(UpstreamError):
    """Suture's own connection limit to the upstream was reached, not the upstream's fault."""

    status = 503
    outcome = "pool_full"

    def __init__(self, base_url: str, cause: Exception, max_connections: int, waited: float | None) -> None:
        self.max_connections = max_connections
        self.waited = waited
        super().__init__(base_url, cause)

    def describe(self) -> str:
        waited = f" for {self.waited:g} s" if self.waited is not None else ""
        return (
            f"Suture's connection limit to the upstream {self.base_url} was reached: all {self.max_connections} "
            f"connections (max_connections) stayed busy{waited}"
        )


class UpstreamTimeout(UpstreamError):
    status = 504
    outcome = "timeout"

    def describe(self) -> str:
        return f"the upstream {self.base_url} did not answer in time ({self.cause})"


# Names compared as bytes: nothing is decoded per header on the request path.
_NOT_FORWARDED_BYTES = frozenset(name.encode() for name in _NOT_FORWARDED)
# Suture's own header, which an upstream must not set for it.
_NOT_RELAYED_BYTES = frozenset(name.encode() for name in _NOT_RELAYED) | {b"x-suture-repairs"}


def _connection_tokens(values: list[bytes]) -> set[bytes]:
    # Headers named in `Connection` are hop-by-hop too (RFC 9110 §7.6.1).
    return {t.strip().lower() for value in values for t in value.split(b",") if t.strip()}


def _kept(
    headers: Iterable[tuple[bytes, bytes]], dropped: Set[bytes]
) -> tuple[list[tuple[bytes, bytes, bytes]], list[bytes]]:
    """The headers whose lowered names are not in ``dropped``, as (lowered, name, value), and the
    values of the ``Connection`` headers; one pass, each name lowered once (this runs twice per
    request, on every header)."""
    kept = []
    connection = []
    for name, value in headers:
        low = name.lower()
        if low == b"connection":
            connection.append(value)
        if low not in dropped:
            kept.append((low, name, value))
    return kept, connection


def forward_headers(
    client: Iterable[tuple[bytes, bytes]], *, drop: Iterable[str] = (), replace: dict[str, str] | None = None
) -> Headers:
    """The client's headers as they go upstream: hop-by-hop and ``drop`` removed, ``replace`` set."""
    replaced = {k.lower().encode("latin-1"): v.encode("latin-1") for k, v in (replace or {}).items()}
    dropped = _NOT_FORWARDED_BYTES | replaced.keys()
    if drop:
        dropped |= {d.lower().encode("latin-1") for d in drop}
    kept, connection = _kept(client, dropped)
    if connection:
        named = _connection_tokens(connection) - dropped
        if named:
            kept = [header for header in kept if header[0] not in named]
    out = [(name, value) for _, name, value in kept]
    out.extend(replaced.items())
    if b"accept-encoding" not in replaced and not any(header[0] == b"accept-encoding" for header in kept):
        # Bytes are relayed as the upstream encodes them: a client that asked for no encoding
        # must get none, and an upstream free to choose might compress anyway.
        out.append((b"accept-encoding", b"identity"))
    return out


def relay_headers(upstream: Response) -> Headers:
    """The upstream's response headers as they go to the client."""
    kept, connection = _kept(upstream.headers, _NOT_RELAYED_BYTES)
    dropped: set[bytes] = _connection_tokens(connection) if connection else set()
    if upstream.status_code in (204, 304):
        # No body follows either (RFC 9110 §6.4.1); a Content-Length there (a 304 may carry
        # the 200's) would have the server wait for, or refuse, a body that never comes.
        dropped.add(b"content-length")
    content_type = b""
    for low, _, value in kept:
        if low == b"content-type":
            content_type = value
            break
    stream = _is_stream_type(content_type)
    if stream:
        dropped |= _SSE_HEADER_NAMES
    out = [(name, value) for low, name, value in kept if low not in dropped]
    return out + _SSE_HEADER_PAIRS if stream else out


def _is_stream_type(content_type: bytes) -> bool:
    # SSE, or Bedrock's binary AWS event stream: either must reach the client unbuffered.
    return content_type.lower().startswith((b"text/event-stream", b"application/vnd.amazon.eventstream"))


def upstream_ssl_context(ca_file: Path | None = None) -> ssl.SSLContext:
    """Verification of HTTPS upstreams: against ``ca_file`` when given, else certifi's CA bundle
    (as httpx's own transport does). Raises ``ValueError`` naming a file it cannot use."""
    if ca_file is None:
        return httpx.create_ssl_context(trust_env=False)
    try:
        return ssl.create_default_context(cafile=str(ca_file))
    except ssl.SSLError as exc:
        raise ValueError(f"{ca_file} holds no usable PEM CA certificate ({exc.reason or exc})") from None
    except OSError as exc:
        raise ValueError(f"cannot read {ca_file}: {exc.strerror or exc}") from None


# Signs a request as it will go on the wire (method, URL, headers, body): returns headers to add.
Signer = Callable[[str, str, Headers, bytes], Awaitable[Headers]]
# Visible ASCII: a request target with a space or a line break would split the request line.
_TARGET = re.compile(rb"[!-~]+")


class Upstream:
    """One provider's base URL and its pooled, cookie-less HTTP/1.1 client (``proxy/http1/``).

    Requests go as the caller built them: the path as encoded (a signed Bedrock path stays
    byte-identical), the headers in order with duplicates, plus Host and Content-Length only.
    """

    def __init__(
        self,
        name: str,
        base_url: str,
        *,
        timeouts: Timeouts,
        max_connections: int = 100,
        sign: Signer | None = None,
        retries: Retries | None = None,
        ssl_context: ssl.SSLContext | None = None,
        proxy: http1.Proxy | None = None,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.name = name
        self.base_url = base_url.rstrip("/")
        self.retries = retries or Retries()
        self.jitter = jitter
        """A draw in [0, 1): how much of each backoff's second half is waited (random)."""
        # Called on each request as built, just before it is sent (Bedrock's SigV4).
        self.sign = sign
        url = urllib.parse.urlsplit(self.base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(f"not an http(s) URL: {base_url!r}")
        secure = url.scheme == "https"
        self.pool = ConnectionPool(
            url.hostname,
            url.port or (443 if secure else 80),
            ssl_context=(ssl_context or upstream_ssl_context()) if secure else None,
            max_connections=max_connections,
            connect_timeout=timeouts.connect,
            read_timeout=timeouts.read,
            write_timeout=timeouts.write,
            pool_timeout=timeouts.pool,
            proxy=proxy,
        )
        self._origin = f"{url.scheme}://{self.pool.host_header.decode()}"
        self._base_path = url.path.encode("ascii")
        self._closed = False
        # Request targets by (path, query): a handful of paths, so each is built and checked
        # once. Bounded, since the query comes from the client.
        self._targets: dict[tuple[str, bytes], bytes] = {}

    @property
    def closed(self) -> bool:
        return self._closed

    async def aclose(self) -> None:
        self._closed = True
        await self.pool.aclose()

    def _target(self, path: str, query: bytes) -> bytes:
        target = self._targets.get((path, query))
        if target is None:
            target = self._base_path + path.encode("ascii") + (b"?" + query if query else b"")
            if not _TARGET.fullmatch(target):
                raise ValueError(f"not a valid request target: {target[:200]!r}")
            if len(self._targets) < 256:
                self._targets[path, query] = target
        return target

    async def open(
        self,
        method: str,
        path: str,
        *,
        query: bytes = b"",
        headers: Headers,
        content: bytes | None = None,
        stream: AsyncIterator[bytes] | None = None,
    ) -> Response:
        """Send a request to ``base_url + path`` and return the response with its body unread.

        The caller must close it (``Relay`` does). Raises :class:`UpstreamError`. A connect error
        or a 429/5xx answer is retried as ``retries`` allows, always before the caller sees a byte.
        A body given as a ``stream`` (an upload too large to hold) is written as it comes, and
        never retried: it cannot be sent twice.
        """
        if self._closed:
            raise RuntimeError(f"the upstream client for {self.base_url} is closed")
        target = self._target(path, query)
        if stream is not None:
            if self.sign is not None:
                raise UpstreamSigningError(self.base_url, ValueError("a signed request needs its whole body"))
            try:
                return await self.pool.stream_request(method.encode("ascii"), target, headers, stream)
            except http1.HTTPError as exc:
                raise self._failure(exc) from None
        if self.sign is not None:
            url = self._origin + target.decode("ascii")
            try:
                headers = [*headers, *await self.sign(method, url, headers, content or b"")]
            except Exception as exc:
                raise UpstreamSigningError(self.base_url, exc) from None
        attempt = 1
        while True:
            try:
                response = await self.pool.request(method.encode("ascii"), target, headers, content)
            except (http1.ConnectError, http1.ConnectTimeout) as exc:
                # Never connected, so the upstream never saw the request: safe to send again.
                if attempt >= self.retries.attempts or "connect" not in self.retries.when:
                    raise (UpstreamTimeout if isinstance(exc, http1.TimeoutException) else UpstreamError)(
                        self.base_url, exc
                    ) from None
                reason, delay = type(exc).__name__, self._backoff(attempt)
            except http1.HTTPError as exc:
                raise self._failure(exc) from None
            else:
                wait = self._retry_delay(response, attempt)
                if wait is None:
                    return response
                reason, delay = str(response.status_code), wait
                response.close()  # unread: nothing of this answer reaches the client
            log(
                upstream_log,
                logging.WARNING,
                "retrying upstream request",
                upstream=self.base_url,
                attempt=attempt,
                reason=reason,
                delay_s=round(delay, 3),
            )
            await asyncio.sleep(delay)
            attempt += 1

    def _failure(self, exc: http1.HTTPError) -> UpstreamError:
        """What a failure of the HTTP client means for the client of Suture (and its status)."""
        if isinstance(exc, http1.PoolTimeout):
            return UpstreamPoolFull(self.base_url, exc, self.pool.max_connections, self.pool.pool_timeout)
        if isinstance(exc, http1.TimeoutException):
            return UpstreamTimeout(self.base_url, exc)
        return UpstreamError(self.base_url, exc)

    def _backoff(self, attempt: int) -> float:
        # Equal jitter: half the doubled backoff, then up to as much again at random, so requests
        # refused together (one 429 to many clients) do not all come back at the same instant.
        full = self.retries.backoff * 2 ** (attempt - 1)
        return float(full / 2 + full / 2 * self.jitter())

    def _retry_delay(self, response: Response, attempt: int) -> float | None:
        """Seconds to wait before retrying this answer, or None to relay it."""
        status = response.status_code
        when = self.retries.when
        wanted = (status == 429 and "429" in when) or (status >= 500 and "5xx" in when)
        if not wanted or attempt >= self.retries.attempts:
            return None
        delay = self._backoff(attempt)
        asked = requested_wait(response.header("retry-after-ms"), response.header("retry-after"))
        if asked is not None:
            if asked > _MAX_RETRY_AFTER:
                return None  # the client is better placed to wait that long, or not
            delay = max(delay, asked)
        return delay


def requested_wait(retry_after_ms: str | None, retry_after: str | None, now: datetime | None = None) -> float | None:
    """Seconds an answer asks to be waited before the next try; None when it asks nothing readable.

    ``retry-after-ms`` first (milliseconds, sent by OpenAI and Anthropic, whose SDKs read it
    first), then ``Retry-After``: seconds or an HTTP-date (RFC 9110 §10.2.3), one already past
    being 0. Seconds may have a fraction, as the SDKs read them.
    """
    if retry_after_ms is not None:
        milliseconds = _non_negative(retry_after_ms)
        if milliseconds is not None:
            return milliseconds / 1000
    if retry_after is None:
        return None
    seconds = _non_negative(retry_after)
    if seconds is not None:
        return seconds
    try:
        moment = email.utils.parsedate_to_datetime(retry_after)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if moment.tzinfo is None:  # "-0000": UTC, of a source that does not say where it is (RFC 5322)
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - (now or datetime.now(UTC))).total_seconds())


def _non_negative(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


class UncheckableEncoding(Exception):
    """An answer in a content-encoding Suture cannot decode, so cannot check for its keys."""


class Relay(StreamedAnswer):
    """An upstream's answer, streamed to the client as its bytes arrive.

    Raw bytes are relayed (``aiter_raw``: de-chunked, never decompressed), so ``content-encoding``
    and ``content-length`` stay true. Closing the upstream response (:meth:`aclose`, always)
    closes its connection when the body was not read to the end, which cancels the upstream
    request (no more tokens generated, nor billed).

    With ``secrets``, every one of them is masked out of the headers and the body (providers quote
    the key they were given). The upstream was asked for ``identity``; a gzip or deflate answer is
    decoded to be checked, and any other encoding raises :class:`UncheckableEncoding`.
    """

    def __init__(
        self,
        upstream: Response,
        *,
        watch: ClientWatch,
        on_done: Callable[[Outcome], None] | None = None,
        keep_head: int = 0,
        secrets: Secrets | None = None,
        read: tuple[bytes, bool] | None = None,
    ) -> None:
        super().__init__(watch=watch, on_done=on_done, keep_head=keep_head)
        self.upstream = upstream
        # The body's first bytes, already read (a refusal Suture looked at), and whether that was all of it.
        self.read = read
        self.status_code = upstream.status_code
        headers = relay_headers(upstream)
        self._mask: StreamMask | None = None
        self._decoder: Any = None
        if secrets is not None and secrets.values:
            headers = secrets.mask_headers(headers)
            self._mask = secrets.stream()
            encoding = (upstream.header("content-encoding") or "").strip().lower()
            if encoding in ("gzip", "x-gzip", "deflate"):
                self._decoder = zlib.decompressobj(47)  # gzip or zlib header, detected
                headers = [(n, v) for n, v in headers if n.lower() not in (b"content-encoding", b"content-length")]
            elif encoding not in ("", "identity"):
                raise UncheckableEncoding(encoding[:64])
        self.headers = headers

    def chunks(self) -> AsyncIterator[bytes]:
        source = self.upstream.aiter_raw() if self.read is None else self._after_read(*self.read)
        if self._mask is None:
            return source
        return self._checked(source, self._mask, self._decoder)

    def whole(self) -> bytes | None:
        if self._decoder is not None:
            return None  # decoded as it streams: a broken encoding is the upstream's error
        read = self.read
        body = self.upstream.take_whole() if read is None else (read[0] if read[1] else None)
        if body is None or self._mask is None:
            return body
        return self._mask.feed(body) + self._mask.flush()

    async def _after_read(self, head: bytes, whole: bool) -> AsyncIterator[bytes]:
        if head:
            yield head
        if not whole:
            async for chunk in self.upstream.aiter_raw():
                yield chunk

    async def _checked(self, source: AsyncIterator[bytes], mask: StreamMask, decoder: Any) -> AsyncIterator[bytes]:
        async for chunk in source:
            checked = mask.feed(decoder.decompress(chunk) if decoder is not None else chunk)
            if checked:
                yield checked
        tail = mask.feed(decoder.flush() if decoder is not None else b"") + mask.flush()
        if tail:
            yield tail

    def broken(self, error: Exception) -> UpstreamBroke | None:
        if isinstance(error, (http1.HTTPError, zlib.error)):
            return UpstreamBroke(type(error).__name__)
        return None

    async def aclose(self) -> None:
        # Never suspends, so no cancellation can cut it short: no shield needed.
        self.upstream.close()
