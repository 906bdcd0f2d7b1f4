"""The litellm path: a request sent through litellm to a provider without a native route."""

from __future__ import annotations

import time
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp

from . import gateway
from .capture import MAX_ERROR_BYTES, CaptureDraft
from .context import context_of, state_of, watch_client
from .credentials import request_secrets
from .errors import error_response
from .exchange import Exchange
from .gateway import LitellmCall
from .relay import Outcome
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
    state = state_of(request)
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
    watch = watch_client(request, state)
    exchange = Exchange(state, context_of(request), route, target.name, capture)
    sent = time.perf_counter()
    try:
        with watch:
            answer = await gateway.call(call)
    except gateway.GatewayError as exc:
        response = error_response(route, exc.status, secrets.redact_text(exc.message))
        refused = exc.status if exc.outcome.isdigit() else None
        # No error field: a provider may quote the key it refused.
        exchange.no_answer(exc.outcome, status=refused, body=bytes(response.body)[:MAX_ERROR_BYTES])
        return response
    exchange.answered(200, sent)
    if not stream:
        exchange.finish(Outcome(), 200)
        return Response(orjson.dumps(gateway.restore_ids(answer, restore)), media_type="application/json")

    def done(result: Outcome) -> None:
        exchange.finish(result, 200)

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
