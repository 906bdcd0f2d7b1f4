"""The native path: a request sent to the route's upstream as built, its answer relayed."""

from __future__ import annotations

import time
import urllib.parse

from starlette.requests import Request
from starlette.types import ASGIApp

from .capture import MAX_ERROR_BYTES, CaptureDraft
from .client_watch import ClientGone
from .context import context_of, state_of, watch_client
from .credentials import credential_headers
from .errors import error_response
from .exchange import Exchange
from .relay import Outcome
from .routing import Target
from .settings import RouteName
from .upstream import Relay, UncheckableEncoding, UpstreamError, forward_headers


async def forward(
    request: Request,
    route: RouteName,
    path: str,
    *,
    content: bytes | None,
    capture: CaptureDraft | None = None,
    target: Target | None = None,
) -> ASGIApp:
    """Send the request (``content``: the bytes to forward) to the route's or the target's upstream and
    return the ``Relay`` of its answer, or Suture's own error in the route's shape."""
    state = state_of(request)
    upstream = state.upstreams.get(route) if target is None else state.named_upstreams.get(target.name)
    if upstream is None or upstream.closed:
        return error_response(route, 503, "Suture is not ready: its upstream clients are not running")
    drop, replace = credential_headers(route, state.settings.route(route), request.headers, target)
    if state.secrets.values:
        # Masking a key the provider quotes needs the answer's bytes as they are, not compressed.
        replace["accept-encoding"] = "identity"
    headers = forward_headers(request.headers.raw, drop=drop, replace=replace)
    watch = watch_client(request, state)
    exchange = Exchange(state, context_of(request), route, upstream.base_url, capture)
    sent = time.perf_counter()
    try:
        with watch:
            response = await upstream.open(
                request.method, path, query=_upstream_query(request, route), headers=headers, content=content
            )
    except ClientGone as exc:
        return exchange.client_gone(exc.reason)
    except UpstreamError as exc:
        exchange.no_answer(exc.outcome, error=exc.cause)
        return error_response(route, exc.status, exc.describe())
    status = response.status_code
    exchange.answered(status, sent)
    # Only a capture reads it: not looked up for every answer.
    encoding = (response.header("content-encoding") or "") if capture is not None else ""

    def done(result: Outcome) -> None:
        exchange.finish(result, status, encoding)

    # Only an error answer is copied for the capture: a successful stream is never held.
    keep = MAX_ERROR_BYTES if exchange.wants_error_body(status) else 0
    try:
        return Relay(response, watch=watch, on_done=done, keep_head=keep, secrets=state.secrets)
    except UncheckableEncoding as exc:
        response.close()
        exchange.finish(Outcome("upstream_error", error="UncheckableEncoding"), status)
        return error_response(
            route,
            502,
            f"the upstream {upstream.base_url} answered in content-encoding {exc}, although Suture asked for identity; "
            "Suture relays only what it can check for its keys",
        )


def _upstream_query(request: Request, route: RouteName) -> bytes:
    query: bytes = request.scope.get("query_string", b"")
    if route == "gemini" and query and state_of(request).settings.gemini.upstream_api_key is not None:
        # Google's SDKs may send the key as ?key=; Suture's own key replaces it (as x-goog-api-key).
        # Names compared decoded, as the client-key check reads them: ?%6Bey= is ?key= too.
        query = b"&".join(p for p in query.split(b"&") if _query_name(p) != "key")
    return query


def raw_path(request: Request) -> str:
    raw: bytes | None = request.scope.get("raw_path")
    return raw.decode("ascii") if raw else request.url.path


def _query_name(parameter: bytes) -> str:
    return urllib.parse.unquote_plus(parameter.partition(b"=")[0].decode("latin-1"))
