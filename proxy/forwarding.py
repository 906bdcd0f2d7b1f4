"""The native path: a request sent to the route's upstream as built, its answer relayed."""

from __future__ import annotations

import logging
import time
import urllib.parse

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp

from .capture import MAX_ERROR_BYTES, CaptureDraft
from .client_watch import DISCONNECTED, STALLED, ClientGone
from .context import RequestContext, context_of, state_of, watch_client
from .credentials import credential_headers
from .errors import error_response
from .logs import log, repair_log, upstream_log
from .metrics import Metrics
from .routing import Target
from .settings import RouteName
from .upstream import Relay, RelayOutcome, UncheckableEncoding, UpstreamError, forward_headers


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
    state, ctx = state_of(request), context_of(request)
    upstream = state.upstreams.get(route) if target is None else state.named_upstreams.get(target.name)
    if upstream is None or upstream.closed:
        return error_response(route, 503, "Suture is not ready: its upstream clients are not running")
    drop, replace = credential_headers(route, state.settings.route(route), request.headers, target)
    if state.secrets:
        # Masking a key the provider quotes needs the answer's bytes as they are, not compressed.
        replace["accept-encoding"] = "identity"
    headers = forward_headers(request.headers.raw, drop=drop, replace=replace)
    watch = watch_client(request)
    sent = time.perf_counter()
    try:
        with watch:
            response = await upstream.open(
                request.method, path, query=_upstream_query(request, route), headers=headers, content=content
            )
    except ClientGone as exc:
        return client_gone(ctx, route, upstream.base_url, exc.reason, state.metrics)
    except UpstreamError as exc:
        ctx.upstream_status = exc.outcome
        state.metrics.upstream_responses.labels(route, exc.outcome).inc()
        log(
            upstream_log,
            logging.WARNING,
            "upstream failed",
            request_id=ctx.request_id,
            upstream=upstream.base_url,
            outcome=exc.outcome,
            error=exc.cause,
        )
        if capture is not None and state.capture is not None and capture.wanted(exc.outcome):
            state.capture.submit(capture.finish(exc.outcome))
        return error_response(route, exc.status, exc.describe())
    state.metrics.upstream_seconds.labels(route).observe(time.perf_counter() - sent)
    state.metrics.upstream_responses.labels(route, str(response.status_code)).inc()
    ctx.upstream_status = response.status_code
    if response.status_code == 400 and ctx.repairs_applied:
        # The signal for a new rule: Suture repaired what it knows and the provider still said no.
        log(
            repair_log,
            logging.WARNING,
            "provider still rejected the repaired transcript: a rule Suture does not know yet",
            request_id=ctx.request_id,
            upstream=upstream.base_url,
            repairs_applied=ctx.repairs_applied,
            captured=capture is not None,
        )
    wants_capture = capture is not None and capture.wanted(response.status_code)

    def done(result: RelayOutcome) -> None:
        ctx.outcome = result.outcome
        if wants_capture and capture is not None and state.capture is not None:
            encoding = response.header("content-encoding") or ""
            state.capture.submit(capture.finish(response.status_code, result.head, encoding))
        if result.outcome in (DISCONNECTED, STALLED):
            _log_client_gone(ctx, route, upstream.base_url, result.outcome, state.metrics, result.bytes_sent)
        elif result.outcome == "upstream_error":
            log(
                upstream_log,
                logging.ERROR,
                "upstream failed mid-response; client connection dropped",
                request_id=ctx.request_id,
                upstream=upstream.base_url,
                error=result.error,
                bytes_relayed=result.bytes_sent,
            )

    # Only an error answer is copied for the capture: a successful stream is never held.
    keep = MAX_ERROR_BYTES if wants_capture and response.status_code >= 400 else 0
    try:
        return Relay(response, watch=watch, on_done=done, keep_head=keep, secrets=state.secrets)
    except UncheckableEncoding as exc:
        response.close()
        ctx.outcome = "upstream_error"
        return error_response(
            route,
            502,
            f"the upstream {upstream.base_url} answered in content-encoding {exc}, although Suture asked for identity; "
            "Suture relays only what it can check for its keys",
        )


def client_gone(ctx: RequestContext, route: RouteName, upstream: str, reason: str, metrics: Metrics) -> Response:
    """What is left to do when the client left before the answer's first byte: log it, count it."""
    _log_client_gone(ctx, route, upstream, reason, metrics, 0)
    # Nobody reads this answer; its status (nginx's "client closed request") is for the access log.
    return Response(status_code=499)


def _log_client_gone(
    ctx: RequestContext, route: RouteName, upstream: str, reason: str, metrics: Metrics, relayed: int
) -> None:
    ctx.outcome = reason
    metrics.disconnects.labels(route).inc()
    log(
        upstream_log,
        logging.WARNING,
        "client disconnected; upstream request cancelled"
        if reason == DISCONNECTED
        else "client stopped reading; both connections closed",
        request_id=ctx.request_id,
        upstream=upstream,
        bytes_relayed=relayed,
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
