"""A transcript request, from body to upstream: read, parse, sanitize, judge (strict mode),
capture, then the native or the litellm path."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

import anyio.to_thread
import orjson
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import ASGIApp

from sanitizer import Repair, SanitizeError, SanitizeResult, sanitize
from sanitizer.validation import validate

from .capture import STRICT_REJECTED, CaptureDraft, safe_headers
from .client_watch import ClientGone
from .context import ProxyState, RequestContext, context_of, state_of, watch_client
from .credentials import check_client_key, request_secrets
from .errors import API_OF_ROUTE, error_response
from .exchange import Exchange
from .forwarding import forward
from .litellm_route import via_litellm
from .logs import log, repair_log
from .settings import RouteName


class _BodyTooLarge(Exception):
    pass


# Bodies past this size are parsed, repaired and serialised in a worker thread: a coding agent's
# multi-megabyte transcript takes tens of milliseconds to repair, which on the event loop would
# stall every other stream of the worker (and /healthz) for as long.
OFF_LOOP_BYTES = 256 * 1024
_T = TypeVar("_T")


async def proxy_transcript(
    request: Request,
    route: RouteName,
    upstream_path: str,
    *,
    api: str = "",
    routed: bool = False,
    model: str | None = None,
) -> ASGIApp:
    """The request path of every transcript endpoint, from the client's bytes to the upstream's answer.

    ``model`` is the model the path names (Gemini's native API), which the body does not."""
    state, ctx = state_of(request), context_of(request)
    denied = check_client_key(request, route)
    if denied is not None:
        return denied
    content_type = request.headers.get("content-type")
    if content_type is not None and not _is_json(content_type):
        return error_response(
            route, 415, f"the request body must be JSON (Content-Type: application/json), not {content_type[:100]}"
        )
    limit = state.settings.max_body_bytes
    try:
        raw = await _read_body(request, limit)
    except _BodyTooLarge:
        return error_response(route, 413, f"the request body is larger than Suture's limit of {limit} bytes")
    except ClientDisconnect:
        ctx.outcome = "client_disconnected"
        return Response(status_code=400)
    # From here on, a client that leaves cancels whatever its request is waiting on.
    watch_client(request, state)
    try:
        return await _repair_and_send(request, state, ctx, route, upstream_path, api, routed, raw, model)
    except ClientGone as exc:
        return Exchange.of(request, route, "", None).client_gone(exc.reason)


async def _repair_and_send(
    request: Request,
    state: ProxyState,
    ctx: RequestContext,
    route: RouteName,
    upstream_path: str,
    api: str,
    routed: bool,
    raw: bytes,
    model: str | None,
) -> ASGIApp:
    large = len(raw) > OFF_LOOP_BYTES

    try:
        body = await _off_loop(request, orjson.loads, raw) if large else orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return error_response(route, 400, f"the request body is not valid JSON: {exc}")

    mode = state.settings.mode_for(route)
    ctx.mode = mode
    api = api or API_OF_ROUTE[route]
    # The route table (`routes:`) applies to Chat, Responses and Messages requests, by their model.
    target = state.router.resolve(body.get("model")) if routed and isinstance(body, dict) else None
    if target is not None and target.protocol != "litellm" and target.protocol != route:
        return error_response(
            route,
            400,
            f"model {body['model']!r} routes to upstream {target.name!r}, which speaks the {target.protocol} API; "
            "this client's format reaches it only through a litellm upstream",
        )
    if target is not None and target.builtin:
        target = None
    provider = target.repair_provider(api) if target is not None else None
    try:
        result = (
            await _off_loop(request, _sanitize, body, api, state.policy, provider, model)
            if large
            else _sanitize(body, api, state.policy, provider, model)
        )
    except SanitizeError as exc:
        return error_response(route, 400, str(exc))
    except ClientGone:
        raise
    except Exception:
        # A fault in the sanitizer must not take the agent down: forward as if Suture were absent.
        repair_log.exception(
            "sanitizer failed; forwarding the request unchanged", extra={"fields": {"request_id": ctx.request_id}}
        )
        result = SanitizeResult(body=body, repairs=[])

    ctx.repairs_found = len(result.repairs)
    for repair in result.repairs:
        _log_repair(ctx, repair, mode)
        state.metrics.repairs.labels(repair.code, repair.rule, mode).inc()

    if mode == "strict":
        problems = [_describe_repair(r) for r in result.repairs]
        try:
            # validate() resolves the provider through the table as sanitize() and `suture check` do:
            # a Chat body bound for Anthropic through litellm is judged by Anthropic's OpenAI-compatible rules.
            found = (
                await _off_loop(request, _validate, body, api, provider, model)
                if large
                else _validate(body, api, provider, model)
            )
            problems += [f"{v.rule}: {v.message}" for v in found]
        except SanitizeError as exc:
            problems.append(str(exc))
        if problems:
            state.metrics.rejections.labels(route).inc()
            listing = "; ".join(f"({i}) {p}" for i, p in enumerate(problems, 1))
            message = f"Suture (strict mode) rejected the transcript, {len(problems)} problem(s): {listing}"
            if state.capture is not None:
                draft = _capture_draft(request, route, api, mode, body, None, result.repairs)
                state.capture.submit(draft.finish(STRICT_REJECTED, rejection=message))
            return error_response(route, 400, message)

    if mode == "repair" and result.repairs:
        try:
            content = await _off_loop(request, orjson.dumps, result.body) if large else orjson.dumps(result.body)
            ctx.repairs_applied = len(result.repairs)
        except orjson.JSONEncodeError:
            # orjson reads 1024 levels of nesting but writes only 254: a body nested between the
            # two goes on as the client sent it, as on a sanitizer fault.
            repair_log.warning(
                "repaired body nested too deeply to serialise; forwarding the request unchanged",
                extra={"fields": {"request_id": ctx.request_id}},
            )
            content = raw
    else:
        # Nothing changed (or report mode): the client's own bytes, so prompt caches and
        # thinking signatures upstream see exactly what the client sent.
        content = raw
    capture = None
    if state.capture is not None:
        forwarded = result.body if content is not raw else None
        capture = _capture_draft(request, route, api, mode, body, forwarded, result.repairs)
    if target is not None and target.protocol == "litellm":
        sent = result.body if mode == "repair" else body
        return await via_litellm(request, route, api, target, sent, result.restore_ids, capture)
    return await forward(request, route, upstream_path, content=content, capture=capture, target=target)


async def _off_loop(request: Request, work: Callable[..., _T], *args: Any) -> _T:
    """``work(*args)`` in a worker thread; the client's leaving stops the wait (not the thread)."""
    with watch_client(request):
        return await anyio.to_thread.run_sync(work, *args)


def _sanitize(body: Any, api: str, policy: Any, provider: str | None, model: str | None) -> SanitizeResult:
    return sanitize(body, api=api, policy=policy, provider=provider, model=model)


def _validate(body: Any, api: str, provider: str | None, model: str | None) -> list[Any]:
    return validate(body, api=api, provider=provider, model=model)


def _capture_draft(
    request: Request, route: RouteName, api: str, mode: str, body: Any, forwarded: Any, repairs: list[Repair]
) -> CaptureDraft:
    return CaptureDraft(
        request_id=context_of(request).request_id,
        route=route,
        path=request.url.path,
        api=api,
        mode=mode,
        original=body,
        forwarded=forwarded,
        repairs=repairs,
        headers=safe_headers(request.headers.raw),
        secrets=(*request_secrets(request, route), *state_of(request).secrets.values),
    )


def _is_json(content_type: str) -> bool:
    # No Content-Type at all is taken as JSON; any other type is a mistake (curl -d sends a form type).
    media = content_type.partition(";")[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _BodyTooLarge
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise _BodyTooLarge
    return bytes(body)


def _describe_repair(repair: Repair) -> str:
    where = []
    if repair.message_index is not None:
        where.append(f"message {repair.message_index}")
    if repair.tool_call_id is not None:
        where.append(f"tool call {repair.tool_call_id}")
    place = f" ({', '.join(where)})" if where else ""
    return f"{repair.code} {repair.rule}{place}: {repair.detail}"


def _log_repair(ctx: RequestContext, repair: Repair, mode: str) -> None:
    log(
        repair_log,
        logging.INFO,
        "repair" if mode == "repair" else "repair not applied",
        request_id=ctx.request_id,
        mode=mode,
        code=repair.code,
        rule=repair.rule,
        action=repair.action,
        message_index=repair.message_index,
        tool_call_id=repair.tool_call_id,
        detail=repair.detail,
    )
