"""The native path: a request sent to its provider's upstream as built, its answer relayed."""

from __future__ import annotations

import urllib.parse
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import orjson
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp

from .. import provider_table
from ..capture import MAX_ERROR_BYTES
from ..client_watch import ClientGone
from ..exchange import Exchange
from ..http1 import Response
from ..settings import ProviderSettings
from ..upstreams.native import Relay, UncheckableEncoding, UpstreamError, forward_headers
from ..upstreams.streamed import Outcome
from .errors import error_response
from .model_routes import Target
from .rejections import MAX_REFUSAL_BYTES, refusal_text, send_with_retries


async def forward(
    exchange: Exchange,
    cfg: ProviderSettings,
    path: str,
    *,
    content: bytes | None,
    stream: AsyncIterator[bytes] | None = None,
    target: Target | None = None,
) -> ASGIApp:
    """Send the request (``content``: the bytes to forward) to its provider's or the target's upstream
    and return the ``Relay`` of its answer, or Suture's own error in the provider's shape."""
    state, request, provider = exchange.state, exchange.request, exchange.destination.provider
    assert request is not None and provider is not None
    upstream = state.upstreams.get(provider.name) if target is None else state.named_upstreams.get(target.name)
    if upstream is None or upstream.closed:
        return error_response(provider, 503, "Suture is not ready: its upstream clients are not running")
    drop, replace = credential_headers(provider, cfg, request.headers, target)
    if state.secrets.values:
        # Masking a key the provider quotes needs the answer's bytes as they are, not compressed.
        replace["accept-encoding"] = "identity"
    headers = forward_headers(request.headers.raw, drop=drop, replace=replace)
    watch = exchange.watch or exchange.watch_client()
    exchange.destination.upstream = upstream.name
    if state.tracer is not None:
        # The upstream's trace context names Suture's span of the call, not the client's span.
        headers = [(k, v) for k, v in headers if k not in (b"traceparent", b"tracestate")]
        headers += state.tracer.begin(exchange)
    query = _upstream_query(request, provider.key_query if cfg.upstream_api_key is not None else None)
    answer: Response | None = None
    # The refusal read from ``answer``, when one was: the relay sends it on.
    read: tuple[bytes, bool] | None = None

    async def attempt(body: Any) -> tuple[Response, int]:
        nonlocal answer, read
        if answer is not None:
            answer.close()
            read = None
        if body is None:
            answer = await upstream.open(
                request.method, path, query=query, headers=headers, content=content, stream=stream
            )
        else:
            answer = await upstream.open(request.method, path, query=query, headers=headers, content=orjson.dumps(body))
        return answer, answer.status_code

    async def refusal_of(refused: Response, status: int) -> str | None:
        nonlocal read
        read = await _read_refusal(refused)
        return refusal_text(read[0], refused.header("content-encoding") or "") if read[1] else None

    try:
        with watch:
            response, _ = await send_with_retries(exchange, attempt, refusal_of)
    except ClientGone as exc:
        return exchange.client_gone(exc.reason)
    except UpstreamError as exc:
        exchange.no_answer(exc.outcome, error=exc.cause)
        return error_response(provider, exc.status, exc.describe())
    status = response.status_code
    exchange.answered(status)
    # Only a capture reads it: not looked up for every answer.
    encoding = (response.header("content-encoding") or "") if exchange.transcript.draft is not None else ""

    # Only an error answer is copied for the capture: a successful stream is never held.
    keep = MAX_ERROR_BYTES if exchange.wants_error_body(status) else 0
    try:
        relay = Relay(
            response,
            watch=watch,
            on_done=partial(exchange.ended, encoding=encoding),
            keep_head=keep,
            secrets=state.secrets,
            read=read,
        )
        relay.headers += exchange.stamp()
        if exchange.upstream.retries:
            relay.headers.append((b"x-suture-retried", str(exchange.upstream.retries).encode()))
        route = exchange.destination.route
        if status == 404 and route is not None and route.upstream_path is not None:
            # A path Suture built itself: the base URL in the settings is the likely culprit.
            setting = f"{provider.name}.upstream" if target is None else f"upstreams.{target.name}.base_url"
            hint = f"the upstream answered 404 to {upstream.base_url}{path}: check {setting}"
            relay.headers.append((b"x-suture-hint", hint.encode("latin-1", "replace")))
            exchange.upstream.hint = hint
        if state.tracer is not None:
            state.tracer.sample(relay, exchange)  # the answer's token usage, for its span
        return relay
    except UncheckableEncoding as exc:
        response.close()
        exchange.ended(Outcome("upstream_error", error="UncheckableEncoding"))
        return error_response(
            provider,
            502,
            f"the upstream {upstream.base_url} answered in content-encoding {exc}, although Suture asked for identity; "
            "Suture relays only what it can check for its keys",
        )


async def _read_refusal(response: Response) -> tuple[bytes, bool]:
    """An error answer's body, if short enough to be a refusal worth reading, and whether that was all."""
    length = response.header("content-length")
    if length is not None and length.isdigit() and int(length) > MAX_REFUSAL_BYTES:
        return b"", False
    data = b""
    async for chunk in response.aiter_raw():
        data += chunk
        if len(data) > MAX_REFUSAL_BYTES:
            return data, False
    return data, True


# How Suture's own key is sent for each kind of provider: the client's credential headers it
# replaces, and the header it sets (with the value's prefix).
_SENT_AS: dict[str, tuple[frozenset[str], str, str]] = {
    "bearer": (frozenset({"x-api-key"}), "authorization", "Bearer "),
    "x-api-key": (frozenset({"authorization"}), "x-api-key", ""),
    "x-goog-api-key": (frozenset({"authorization", "x-api-key"}), "x-goog-api-key", ""),
}


def credential_headers(
    provider: provider_table.Provider, cfg: ProviderSettings, client: Headers, target: Target | None = None
) -> tuple[set[str], dict[str, str]]:
    """Headers to drop and to set when Suture holds its own upstream credentials; none otherwise."""
    if provider.upstream_key == "sigv4":
        # Suture signs these requests itself (proxy/aws.py): the client's signature, its
        # X-Amz-* headers and its key for Suture never leave.
        return {"authorization", "x-api-key", *(n for n in client if n.startswith("x-amz-"))}, {}
    own = cfg.upstream_api_key if target is None else target.api_key
    if own is None:
        if target is not None and cfg.client_api_key is not None:
            # The client's key is Suture's own: it must not reach a routed upstream either.
            return {"authorization", "x-api-key"}, {}
        return set(), {}
    # A routed target speaks the protocol of the path the request came by (checked before).
    replaced, header, prefix = _SENT_AS[provider.upstream_key]
    return set(replaced), {header: prefix + own.get_secret_value()}


def _upstream_query(request: Request, stripped: str | None) -> bytes:
    query: bytes = request.scope.get("query_string", b"")
    if stripped is not None and query:
        # Google's SDKs may send the key as ?key=; Suture's own key replaces it (as x-goog-api-key).
        # Names compared decoded, as the client-key check reads them: ?%6Bey= is ?key= too.
        query = b"&".join(p for p in query.split(b"&") if _query_name(p) != stripped)
    return query


def raw_path(request: Request) -> str:
    raw: bytes | None = request.scope.get("raw_path")
    return raw.decode("ascii") if raw else request.url.path


def _query_name(parameter: bytes) -> str:
    return urllib.parse.unquote_plus(parameter.partition(b"=")[0].decode("latin-1"))
