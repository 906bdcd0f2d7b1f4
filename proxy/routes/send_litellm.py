"""The litellm path: a request sent through litellm to a provider without a native route."""

from __future__ import annotations

import dataclasses
from typing import Any

import httpx
import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp

from sanitizer.rejection import refusal_message

from ..capture import MAX_ERROR_BYTES
from ..exchange import Exchange
from ..settings import ProviderSettings, TimeoutSettings
from ..upstreams import via_litellm
from ..upstreams.streamed import Outcome
from .credentials import request_secrets
from .errors import error_response
from .model_routes import Target
from .rejections import send_with_retries

# Responses fields that name state kept at OpenAI (an earlier response, a stored prompt, a
# background run): a provider reached through litellm's bridge has none of it.
_STORED_STATE = ("previous_response_id", "prompt", "background")


async def send_via_litellm(
    exchange: Exchange,
    cfg: ProviderSettings,
    api: str,
    target: Target,
    body: dict[str, Any],
    restore: dict[str, str],
) -> ASGIApp:
    """Send ``body`` (a request of ``api``) through litellm to ``target``; the answer (or stream) comes
    back in the client's format, with the ids the provider needed rewritten (``restore``) mapped back."""
    state, request, provider = exchange.state, exchange.request, exchange.destination.provider
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
        read_message=refusal_message,
    )
    # Suture's keys (and this request's) are never quoted back: providers quote the key they refused.
    secrets = state.secrets.with_values(request_secrets(request, cfg))
    watch = exchange.watch_client()
    exchange.destination.upstream = target.name

    async def attempt(body: Any) -> tuple[Any, int]:
        nonlocal call
        if body is not None:
            call = dataclasses.replace(call, body=body)
        try:
            return await via_litellm.call(call), 200
        except via_litellm.GatewayError as exc:
            if not exc.outcome.isdigit():
                raise
            return exc, exc.status  # a provider's refusal: its message may say what to repair

    async def refusal_of(refusal: via_litellm.GatewayError, status: int) -> str | None:
        return refusal.message

    try:
        with watch:
            answer, retrier = await send_with_retries(exchange, attempt, refusal_of)
    except via_litellm.GatewayError as exc:
        answer, retrier = exc, None
    retried = {"x-suture-retried": str(exchange.upstream.retries)} if exchange.upstream.retries else {}
    if isinstance(answer, via_litellm.GatewayError):
        response = error_response(provider, answer.status, secrets.redact_text(answer.message))
        response.headers.update(retried)
        refused = answer.status if answer.outcome.isdigit() else None
        # No error field: a provider may quote the key it refused.
        exchange.no_answer(answer.outcome, status=refused, body=bytes(response.body)[:MAX_ERROR_BYTES])
        return response
    if retrier is not None:
        restore = {**restore, **retrier.restore_ids}
    exchange.answered(200)
    if not stream:
        exchange.ended(Outcome())
        content = orjson.dumps(via_litellm.restore_ids(answer, restore))
        return Response(content, media_type="application/json", headers=retried)
    relay = via_litellm.GatewayStream(
        api, answer, restore, watch=watch, secrets=secrets, on_done=exchange.ended, read_message=refusal_message
    )
    relay.headers = [*relay.headers, *((k.encode(), v.encode()) for k, v in retried.items())]
    return relay


def _timeout(timeouts: TimeoutSettings) -> httpx.Timeout:
    # The same limits as the native routes' client: litellm hands them to its HTTP client.
    return httpx.Timeout(connect=timeouts.connect, read=timeouts.read, write=timeouts.write, pool=timeouts.pool)


def _litellm_key(request: Request, cfg: ProviderSettings, target: Target) -> str | None:
    if target.api_key is not None:
        return target.api_key.get_secret_value()
    if not target.passes_client_key or cfg.client_api_key is not None:
        # With client_api_key set, the client's key is Suture's own and goes no further.
        return None
    auth = request.headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip() or None
    return request.headers.get("x-api-key") or None
