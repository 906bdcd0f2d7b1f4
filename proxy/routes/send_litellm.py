"""The litellm path: a request sent through litellm to a provider without a native route."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import httpx
import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp

from ..capture import MAX_ERROR_BYTES
from ..settings import RouteSettings, TimeoutSettings
from ..upstreams import via_litellm
from ..upstreams.streamed import Outcome
from .credentials import request_secrets
from .errors import error_response
from .exchange import Exchange
from .model_routes import Target

# Responses fields that name state kept at OpenAI (an earlier response, a stored prompt, a
# background run): a provider reached through litellm's bridge has none of it.
_STORED_STATE = ("previous_response_id", "prompt", "background")


async def send_via_litellm(
    exchange: Exchange,
    cfg: RouteSettings,
    api: str,
    target: Target,
    body: dict[str, Any],
    restore: dict[str, str],
) -> ASGIApp:
    """Send ``body`` (a request of ``api``) through litellm to ``target``; the answer (or stream) comes
    back in the client's format, with the ids the provider needed rewritten (``restore``) mapped back."""
    state, request, provider = exchange.state, exchange.request, exchange.provider
    assert request is not None and provider is not None
    if not via_litellm.is_client_api(api):
        return error_response(provider, 400, f"{api} requests cannot be sent through a litellm upstream")
    stored = [key for key in _STORED_STATE if body.get(key)] if api == "openai-responses" else []
    if stored:
        # Dropped silently, the model would answer without the context the client relies on.
        return error_response(
            provider,
            400,
            f"{', '.join(stored)} refers to state stored at OpenAI, which upstream {target.name!r} (through litellm) "
            "does not have: send the whole conversation in `input` instead",
        )
    stream = body.get("stream") is True
    call = via_litellm.LitellmCall(
        api=api,
        model=target.litellm_model(str(body["model"])),
        body=body,
        stream=stream,
        api_base=target.api_base,
        api_key=_litellm_key(request, cfg, target),
        timeout=_timeout(state.settings.timeouts),
    )
    # Suture's keys (and this request's) are never quoted back: providers quote the key they refused.
    secrets = state.secrets.with_values(request_secrets(request, cfg))
    watch = exchange.watch_client()
    exchange.upstream = target.name
    sent = time.perf_counter()
    retrier = None
    try:
        with watch:
            while True:
                try:
                    answer = await via_litellm.call(call)
                    break
                except via_litellm.GatewayError as exc:
                    retrier = exchange.retrier_for(exc.status) if exc.outcome.isdigit() else exchange.retrier
                    if retrier is None or not exc.outcome.isdigit():
                        raise
                    retrier.settled(exc.status)
                    # A provider's refusal of the transcript may say what to repair: once more, repaired.
                    again = await retrier.repaired(exc.status, exc.message) if retrier.wants(exc.status) else None
                    if again is None:
                        raise
                    call = dataclasses.replace(call, body=again)
                    restore = {**restore, **retrier.restore_ids}
                    sent = time.perf_counter()
    except via_litellm.GatewayError as exc:
        if retrier is not None:
            retrier.settled(exc.status if exc.outcome.isdigit() else exc.outcome)
        response = error_response(provider, exc.status, secrets.redact_text(exc.message))
        if retrier is not None and retrier.attempts:
            response.headers["x-suture-retried"] = str(retrier.attempts)
        refused = exc.status if exc.outcome.isdigit() else None
        # No error field: a provider may quote the key it refused.
        exchange.no_answer(exc.outcome, status=refused, body=bytes(response.body)[:MAX_ERROR_BYTES])
        return response
    exchange.answered(200, sent)
    retried = {}
    if retrier is not None:
        retrier.settled(200)
        if retrier.attempts:
            retried["x-suture-retried"] = str(retrier.attempts)
    if not stream:
        exchange.ended(Outcome())
        content = orjson.dumps(via_litellm.restore_ids(answer, restore))
        return Response(content, media_type="application/json", headers=retried)
    relay = via_litellm.GatewayStream(api, answer, restore, watch=watch, secrets=secrets, on_done=exchange.ended)
    relay.headers = [*relay.headers, *((k.encode(), v.encode()) for k, v in retried.items())]
    return relay


def _timeout(timeouts: TimeoutSettings) -> httpx.Timeout:
    # The same limits as the native routes' client: litellm hands them to its HTTP client.
    return httpx.Timeout(connect=timeouts.connect, read=timeouts.read, write=timeouts.write, pool=timeouts.pool)


def _litellm_key(request: Request, cfg: RouteSettings, target: Target) -> str | None:
    if target.api_key is not None:
        return target.api_key.get_secret_value()
    if not target.passes_client_key or cfg.client_api_key is not None:
        # With client_api_key set, the client's key is Suture's own and goes no further.
        return None
    auth = request.headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip() or None
    return request.headers.get("x-api-key") or None
