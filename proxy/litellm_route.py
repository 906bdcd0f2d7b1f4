"""The litellm path: a request sent through litellm to a provider without a native route."""

from __future__ import annotations

import logging
import time
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp

from . import gateway
from .capture import MAX_ERROR_BYTES, CaptureDraft
from .client_watch import DISCONNECTED, STALLED
from .context import context_of, state_of, watch_client
from .credentials import request_secrets
from .errors import error_response
from .gateway import LitellmCall
from .logs import log, upstream_log
from .routing import Target
from .settings import RouteName

# Responses fields that name state kept at OpenAI (an earlier response, a stored prompt, a
# background run): a provider reached through litellm's bridge has none of it.
_STORED_STATE = ("previous_response_id", "prompt", "background")


async def via_litellm(
    request: Request,
    route: RouteName,
    api: str,
    target: Target,
    body: dict[str, Any],
    restore: dict[str, str],
    capture: CaptureDraft | None,
) -> ASGIApp:
    """Send ``body`` (a request of ``api``) through litellm to ``target``; the answer (or stream) comes
    back in the client's format, with the ids the provider needed rewritten (``restore``) mapped back."""
    state, ctx = state_of(request), context_of(request)
    if not gateway.is_client_api(api):
        return error_response(route, 400, f"{api} requests cannot be sent through a litellm upstream")
    stored = [key for key in _STORED_STATE if body.get(key)] if api == "openai-responses" else []
    if stored:
        # Dropped silently, the model would answer without the context the client relies on.
        return error_response(
            route,
            400,
            f"{', '.join(stored)} refers to state stored at OpenAI, which upstream {target.name!r} (through litellm) "
            "does not have: send the whole conversation in `input` instead",
        )
    stream = body.get("stream") is True
    call = LitellmCall(
        api=api,
        model=target.litellm_model(str(body["model"])),
        body=body,
        stream=stream,
        api_base=target.api_base,
        api_key=_litellm_key(request, route, target),
    )
    # Suture's keys (and this request's) are never quoted back: providers quote the key they refused.
    secrets = state.secrets.with_values(request_secrets(request, route))
    watch = watch_client(request)
    sent = time.perf_counter()
    try:
        with watch:
            answer = await gateway.call(call)
    except gateway.GatewayError as exc:
        ctx.upstream_status = exc.status if exc.outcome.isdigit() else exc.outcome
        state.metrics.upstream_responses.labels(route, exc.outcome).inc()
        log(
            upstream_log,
            logging.WARNING,
            "provider refused" if exc.outcome.isdigit() else "upstream failed",
            request_id=ctx.request_id,
            upstream=target.name,
            # Not the provider's message: a provider may quote the key it refused.
            outcome=exc.outcome,
        )
        response = error_response(route, exc.status, secrets.redact_text(exc.message))
        if capture is not None and state.capture is not None and capture.wanted(ctx.upstream_status):
            state.capture.submit(capture.finish(ctx.upstream_status, bytes(response.body)[:MAX_ERROR_BYTES]))
        return response
    state.metrics.upstream_seconds.labels(route).observe(time.perf_counter() - sent)
    state.metrics.upstream_responses.labels(route, "200").inc()
    ctx.upstream_status = 200
    if capture is not None and state.capture is not None and capture.wanted(200):
        state.capture.submit(capture.finish(200))
    if not stream:
        return Response(orjson.dumps(gateway.restore_ids(answer, restore)), media_type="application/json")

    def done(result: gateway.StreamOutcome) -> None:
        ctx.outcome = result.outcome
        if result.outcome in (DISCONNECTED, STALLED):
            state.metrics.disconnects.labels(route).inc()
        elif result.outcome == "upstream_error":
            log(
                upstream_log,
                logging.ERROR,
                "provider failed mid-stream; the client got an error event",
                request_id=ctx.request_id,
                upstream=target.name,
                bytes_relayed=result.bytes_sent,
            )

    return gateway.GatewayStream(api, answer, restore, watch=watch, secrets=secrets, on_done=done)


def _litellm_key(request: Request, route: RouteName, target: Target) -> str | None:
    if target.api_key is not None:
        return target.api_key.get_secret_value()
    if not target.passes_client_key or state_of(request).settings.route(route).client_api_key is not None:
        # With client_api_key set, the client's key is Suture's own and goes no further.
        return None
    auth = request.headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip() or None
    return request.headers.get("x-api-key") or None
