"""The only module that talks HTTP upstream: httpx's interface on aiohttp's pool, send, relay, error mapping."""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass

import aiohttp
import anyio
import httpx
import yarl
from starlette.types import Message, Receive, Scope, Send

from .logs import log, upstream_log
from .settings import RetrySettings, TimeoutSettings

# RFC 9110 §7.6.1: meaningful for one connection only, never forwarded. `expect` is answered by
# our own server; `host` and `content-length` are set anew by httpx for the upstream request.
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
_NOT_RELAYED = HOP_BY_HOP | {"date"}
_SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}
# Seconds of an upstream's Retry-After that Suture waits out itself before a retry.
_MAX_RETRY_AFTER = 30
_AIOHTTP_LARGE_BODY = 2**20

Headers = list[tuple[bytes, bytes]]


class UpstreamError(Exception):
    """The upstream gave no HTTP answer. ``status`` is what Suture answers instead."""

    status = 502
    outcome = "unreachable"

    def __init__(self, base_url: str, cause: Exception) -> None:
        self.base_url = base_url
        self.cause = type(cause).__name__
        super().__init__(self.describe())

    def describe(self) -> str:
        return f"Suture could not reach the upstream {self.base_url} ({self.cause})"


class UpstreamSigningError(UpstreamError):
    status = 502
    outcome = "signing_failed"

    def describe(self) -> str:
        return f"Suture could not sign the request for {self.base_url} ({self.cause})"


class UpstreamTimeout(UpstreamError):
    status = 504
    outcome = "timeout"

    def describe(self) -> str:
        return f"the upstream {self.base_url} did not answer in time ({self.cause})"


# Names compared as bytes: nothing is decoded per header on the request path.
_NOT_FORWARDED_BYTES = frozenset(name.encode() for name in _NOT_FORWARDED)
_NOT_RELAYED_BYTES = frozenset(name.encode() for name in _NOT_RELAYED)


def _connection_tokens(headers: Iterable[tuple[bytes, bytes]]) -> set[bytes]:
    # Headers named in `Connection` are hop-by-hop too (RFC 9110 §7.6.1).
    tokens: set[bytes] = set()
    for name, value in headers:
        if name.lower() == b"connection":
            tokens.update(t.strip().lower() for t in value.split(b",") if t.strip())
    return tokens


def forward_headers(
    client: Iterable[tuple[bytes, bytes]], *, drop: Iterable[str] = (), replace: dict[str, str] | None = None
) -> Headers:
    """The client's headers as they go upstream: hop-by-hop and ``drop`` removed, ``replace`` set."""
    client = list(client)
    replaced = {k.lower().encode("latin-1"): v.encode("latin-1") for k, v in (replace or {}).items()}
    dropped = _NOT_FORWARDED_BYTES | _connection_tokens(client) | set(replaced)
    dropped |= {d.lower().encode("latin-1") for d in drop}
    out = [(n, v) for n, v in client if n.lower() not in dropped]
    out.extend(replaced.items())
    if not any(n.lower() == b"accept-encoding" for n, _ in out):
        # Bytes are relayed as the upstream encodes them: a client that asked for no encoding
        # must get none, so httpx's own default (gzip...) may not stand in for it.
        out.append((b"accept-encoding", b"identity"))
    return out


def relay_headers(upstream: httpx.Response) -> Headers:
    """The upstream's response headers as they go to the client."""
    raw = upstream.headers.raw
    dropped = _NOT_RELAYED_BYTES | _connection_tokens(raw)
    out = [(n, v) for n, v in raw if n.lower() not in dropped]
    if is_event_stream(upstream):
        out = [(n, v) for n, v in out if n.decode("latin-1").lower() not in _SSE_HEADERS]
        out.extend((k.encode(), v.encode()) for k, v in _SSE_HEADERS.items())
    return out


def is_event_stream(response: httpx.Response) -> bool:
    """SSE, or Bedrock's binary AWS event stream: either must reach the client unbuffered."""
    content_type: str = response.headers.get("content-type", "")
    return content_type.lower().startswith(("text/event-stream", "application/vnd.amazon.eventstream"))


def _httpx_error(exc: BaseException, request: httpx.Request) -> BaseException:
    """aiohttp's exception as the httpx exception httpx's own transport raises for that fault."""
    kind: type[httpx.TransportError]
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        kind = httpx.ConnectTimeout
    elif isinstance(exc, aiohttp.ServerTimeoutError):
        kind = httpx.ReadTimeout
    elif isinstance(exc, aiohttp.ClientConnectorError):  # refused, unresolvable, TLS handshake
        kind = httpx.ConnectError
    elif isinstance(exc, asyncio.TimeoutError):
        kind = httpx.PoolTimeout
    elif isinstance(exc, aiohttp.ClientOSError):
        kind = httpx.ReadError
    elif isinstance(exc, aiohttp.ClientError):  # cut bodies, malformed answers, early closes
        kind = httpx.RemoteProtocolError
    else:
        return exc
    return kind(str(exc) or type(exc).__name__, request=request)


class _AiohttpStream(httpx.AsyncByteStream):
    def __init__(self, response: aiohttp.ClientResponse, request: httpx.Request) -> None:
        self._response = response
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.content.iter_any():  # as the bytes arrive
                yield chunk
        except Exception as exc:
            mapped = _httpx_error(exc, self._request)
            if mapped is exc:
                raise
            raise mapped from exc

    async def aclose(self) -> None:
        if self._response.content.at_eof():
            self._response.release()  # back to the pool
        else:
            # Mid-message: closing the connection is what cancels the upstream request.
            self._response.close()


def _payload(content: bytes) -> bytes | io.BytesIO | None:
    # aiohttp warns (ResourceWarning) on raw bytes over 1 MiB and wants a file object for those;
    # agent transcripts of several MiB are common.
    if len(content) > _AIOHTTP_LARGE_BODY:
        return io.BytesIO(content)
    return content or None


class AiohttpTransport(httpx.AsyncBaseTransport):
    """httpx's interface over aiohttp's connection pool, which costs a fraction of httpcore's.

    httpcore scans every pooled connection on each request; behind Suture that was most of the
    proxy's cost (bench/run.py; README, Benchmarks). Requests go as httpx built them: the URL as
    encoded (a signed Bedrock path stays byte-identical), headers in order with duplicates, and
    none of aiohttp's own defaults. Bodies are not decompressed. aiohttp has no write timeout.
    """

    def __init__(self, timeouts: TimeoutSettings, max_connections: int) -> None:
        self._timeout = aiohttp.ClientTimeout(
            total=None,
            # aiohttp's `connect` spans the wait for a pooled connection and the connect itself.
            connect=timeouts.pool + timeouts.connect,
            sock_connect=timeouts.connect,
            sock_read=timeouts.read,
        )
        self._max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        # Made on first use: an aiohttp session belongs to the event loop that runs it.
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(
                    limit=self._max_connections,
                    limit_per_host=0,
                    # Verified against certifi's CA bundle, as httpx's own transport does.
                    ssl=httpx.create_ssl_context(trust_env=False),
                ),
                timeout=self._timeout,
                # Stores nothing: a shared pool must not carry one user's cookies to another.
                cookie_jar=aiohttp.DummyCookieJar(),
                skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
                auto_decompress=False,
                # Proxies or netrc credentials from the environment must not redirect or decorate traffic.
                trust_env=False,
            )
        return self._session

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        headers = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in request.headers.raw]
        try:
            response = await self._client().request(
                request.method,
                yarl.URL(str(request.url), encoded=True),
                headers=headers,
                data=_payload(request.content),
                allow_redirects=False,
            )
        except Exception as exc:
            mapped = _httpx_error(exc, request)
            if mapped is exc:
                raise
            raise mapped from exc
        return httpx.Response(
            response.status,
            headers=response.raw_headers,
            stream=_AiohttpStream(response, request),
            request=request,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": (response.reason or "").encode()},
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


class Upstream:
    """One provider's base URL and its shared, pooled, cookie-less transport.

    Requests are built as ``httpx.Request`` and handed to the transport directly: Suture follows
    no redirects, keeps no cookies and adds no auth, so httpx's client layer would only add its
    cost (about a sixth of the proxy's CPU per request; bench/run.py).
    """

    def __init__(
        self,
        name: str,
        base_url: str,
        *,
        timeouts: TimeoutSettings,
        max_connections: int = 100,
        transport: httpx.AsyncBaseTransport | None = None,
        sign: Callable[[httpx.Request], Awaitable[None]] | None = None,
        retries: RetrySettings | None = None,
    ) -> None:
        self.name = name
        self.base_url = base_url.rstrip("/")
        self.retries = retries or RetrySettings()
        # Called on each request as built, just before it is sent (Bedrock's SigV4).
        self.sign = sign
        self.transport = transport or AiohttpTransport(timeouts, max_connections)
        self._extensions = {
            "timeout": httpx.Timeout(
                connect=timeouts.connect, read=timeouts.read, write=timeouts.write, pool=timeouts.pool
            ).as_dict()
        }
        self._closed = False
        # Parsed URLs by (path, query): a handful of paths, so parsing each once saves a URL
        # parse per request. Bounded, since the query comes from the client.
        self._urls: dict[tuple[str, bytes], httpx.URL] = {}

    @property
    def closed(self) -> bool:
        return self._closed

    async def aclose(self) -> None:
        self._closed = True
        await self.transport.aclose()

    async def _send(self, request: httpx.Request) -> httpx.Response:
        if self._closed:
            raise RuntimeError(f"the upstream client for {self.base_url} is closed")
        response = await self.transport.handle_async_request(request)
        response.request = request
        return response

    async def open(
        self, method: str, path: str, *, query: bytes = b"", headers: Headers, content: bytes | None = None
    ) -> httpx.Response:
        """Send a request to ``base_url + path`` and return the response with its body unread.

        The caller must close it (``Relay`` does). Raises :class:`UpstreamError`. A connect error
        or a 429/5xx answer is retried as ``retries`` allows, always before the caller sees a byte.
        """
        url = self._urls.get((path, query))
        if url is None:
            url = httpx.URL(self.base_url + path + ("?" + query.decode("latin-1") if query else ""))
            if len(self._urls) < 256:
                self._urls[path, query] = url
        # Only Host and Content-Length are added: the client's headers otherwise go as they are.
        request = httpx.Request(method, url, headers=headers, content=content, extensions=self._extensions)
        if self.sign is not None:
            try:
                await self.sign(request)
            except Exception as exc:
                raise UpstreamSigningError(self.base_url, exc) from None
        attempt = 1
        while True:
            try:
                response = await self._send(request)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                # Never connected, so the upstream never saw the request: safe to send again.
                if attempt >= self.retries.attempts or "connect" not in self.retries.when:
                    raise (UpstreamTimeout if isinstance(exc, httpx.TimeoutException) else UpstreamError)(
                        self.base_url, exc
                    ) from None
                reason, delay = type(exc).__name__, self._backoff(attempt)
            except httpx.TimeoutException as exc:
                raise UpstreamTimeout(self.base_url, exc) from None
            except httpx.TransportError as exc:
                raise UpstreamError(self.base_url, exc) from None
            else:
                wait = self._retry_delay(response, attempt)
                if wait is None:
                    return response
                reason, delay = str(response.status_code), wait
                await response.aclose()  # unread: nothing of this answer reaches the client
            log(
                upstream_log,
                logging.WARNING,
                "retrying upstream request",
                upstream=self.base_url,
                attempt=attempt,
                reason=reason,
                delay_s=delay,
            )
            await anyio.sleep(delay)
            attempt += 1

    def _backoff(self, attempt: int) -> float:
        return float(self.retries.backoff * 2 ** (attempt - 1))

    def _retry_delay(self, response: httpx.Response, attempt: int) -> float | None:
        """Seconds to wait before retrying this answer, or None to relay it."""
        status = response.status_code
        when = self.retries.when
        wanted = (status == 429 and "429" in when) or (status >= 500 and "5xx" in when)
        if not wanted or attempt >= self.retries.attempts:
            return None
        delay = self._backoff(attempt)
        retry_after = response.headers.get("retry-after", "")
        if retry_after.isdigit():
            if int(retry_after) > _MAX_RETRY_AFTER:
                return None  # the client is better placed to wait that long, or not
            delay = max(delay, float(retry_after))
        return delay


@dataclass
class RelayOutcome:
    """How a relayed response ended: ``complete``, ``client_disconnected`` or ``upstream_error``."""

    outcome: str
    bytes_sent: int
    error: str | None = None
    head: bytes = b""
    """The first ``keep_head`` bytes relayed, as the upstream encoded them (for captures)."""


class Relay:
    """An ASGI response that streams an upstream response to the client as its bytes arrive.

    Raw bytes are relayed (``aiter_raw``), so ``content-encoding`` and ``content-length`` stay
    true. A task watches for the client's disconnect and cancels the relay at once; the upstream
    response is closed in ``finally``, which closes its connection and so cancels the upstream
    request (no more tokens generated, nor billed).
    """

    def __init__(
        self,
        upstream: httpx.Response,
        *,
        on_done: Callable[[RelayOutcome], None] | None = None,
        keep_head: int = 0,
    ) -> None:
        self.upstream = upstream
        # A copy of the first bytes, taken as they are relayed (never delaying them). Callers ask
        # for it on error responses only, which are small JSON, never a successful stream.
        self.keep_head = keep_head
        self.status_code = upstream.status_code
        self.headers = relay_headers(upstream)
        self.on_done = on_done

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        result = RelayOutcome("complete", 0)
        relaying = False
        relay_task = asyncio.current_task()
        assert relay_task is not None

        async def watch() -> None:
            while True:
                message: Message = await receive()
                # uvicorn also reports a disconnect once the response is complete.
                if message["type"] == "http.disconnect":
                    if relaying:
                        result.outcome = "client_disconnected"
                        relay_task.cancel()
                    return

        watcher: asyncio.Task[None] | None = None
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.headers})
            # A bare asyncio task, cancelled in `finally`: an anyio task group here (its scopes and
            # cancellation delivery) cost a quarter of the proxy's CPU per request (bench/run.py).
            watcher = asyncio.get_running_loop().create_task(watch())
            relaying = True
            try:
                async for chunk in self.upstream.aiter_raw():
                    if len(result.head) < self.keep_head:
                        result.head += chunk[: self.keep_head - len(result.head)]
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    result.bytes_sent += len(chunk)
            except httpx.HTTPError as exc:
                # Headers are gone already: the only honest signal left is an unfinished body,
                # so the connection is dropped rather than ended cleanly.
                relaying = False
                result.outcome, result.error = "upstream_error", type(exc).__name__
            else:
                relaying = False
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        except asyncio.CancelledError:
            if result.outcome != "client_disconnected":
                raise
            relay_task.uncancel()  # the watcher's own cancel, handled: the task goes on to clean up
        except OSError as exc:  # the client's socket failed under us
            result.outcome, result.error = "client_disconnected", type(exc).__name__
        finally:
            relaying = False
            if watcher is not None:
                watcher.cancel()
            with anyio.CancelScope(shield=True):
                await self.upstream.aclose()
            if self.on_done is not None:
                self.on_done(result)
