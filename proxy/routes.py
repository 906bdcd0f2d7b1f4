"""The endpoints, thin: read and parse the body, sanitize it, forward it, relay the answer."""

from __future__ import annotations

import hmac
import logging
import re
import time
from typing import Any

import orjson
from starlette.datastructures import Headers
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

from sanitizer import PROVIDERS, Repair, SanitizeError, SanitizeResult, sanitize
from sanitizer.validation import validate

from . import gateway
from .capture import MAX_ERROR_BYTES, STRICT_REJECTED, CaptureDraft, safe_headers
from .context import ProxyState, RequestContext
from .errors import API_OF_ROUTE, error_response
from .gateway import ClientAPI, LitellmCall
from .logs import log, repair_log, upstream_log
from .routing import Target
from .settings import RouteName, RouteSettings
from .upstream import Relay, RelayOutcome, UpstreamError, forward_headers

# Paths on the upstream, after its base URL. OpenAI's conventional base URL ends in /v1,
# Anthropic's does not (the SDKs' own conventions, so a base URL can be copied from either).
_UPSTREAM_PATHS: dict[str, dict[RouteName, str]] = {
    "chat": {"openai": "/chat/completions"},
    "responses": {"openai": "/responses"},
    "messages": {"anthropic": "/v1/messages"},
    "count_tokens": {"anthropic": "/v1/messages/count_tokens"},
    "models": {"openai": "/models", "anthropic": "/v1/models"},
}

ROUTE_PATHS = frozenset(
    {
        "/v1/chat/completions",
        "/v1/responses",
        "/v1/messages",
        "/v1/messages/count_tokens",
        "/v1/models",
        "/healthz",
        "/readyz",
        "/metrics",
    }
)


class _BodyTooLarge(Exception):
    pass


def _state(request: Request) -> ProxyState:
    state: ProxyState = request.app.state.suture
    return state


def _ctx(request: Request) -> RequestContext:
    ctx: RequestContext = request.scope["suture"]
    return ctx


async def chat_completions(request: Request) -> ASGIApp:
    return await _proxy_transcript(request, "openai", _UPSTREAM_PATHS["chat"]["openai"], routed=True)


async def responses(request: Request) -> ASGIApp:
    return await _proxy_transcript(request, "openai", _UPSTREAM_PATHS["responses"]["openai"], api="openai-responses")


# Gemini names the model and the method in one path segment: /v1beta/models/{model}:{method}
# (or /v1/...).
GEMINI_METHODS = frozenset({"generateContent", "streamGenerateContent"})
# Model ids are checked (decoded) before the raw path is appended to the upstream's URL, so no
# '..' or '/' can walk the request to another upstream path.
_GEMINI_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_BEDROCK_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/+-]{0,2047}")


async def gemini_models(request: Request) -> ASGIApp:
    model, _, method = request.path_params["rest"].rpartition(":")
    if method not in GEMINI_METHODS or not _GEMINI_MODEL.fullmatch(model):
        return error_response(
            "gemini", 404, "Suture serves models/{model}:generateContent and :streamGenerateContent only"
        )
    # The path as the client sent it (Gemini's own paths), after the upstream's bare host.
    return await _proxy_transcript(request, "gemini", _raw_path(request))


async def bedrock_converse(request: Request) -> ASGIApp:
    if not _state(request).settings.bedrock.enabled:
        return error_response("bedrock", 404, "the Bedrock route is not enabled on this Suture (bedrock.enabled)")
    model_id: str = request.path_params["model_id"]
    if not _BEDROCK_MODEL.fullmatch(model_id) or ".." in model_id.split("/"):
        return error_response("bedrock", 404, "not a Bedrock model id")
    # Raw, so a model id's ':' stays %3A as boto3 escaped it: the path is part of the signature.
    return await _proxy_transcript(request, "bedrock", _raw_path(request))


async def messages(request: Request) -> ASGIApp:
    return await _proxy_transcript(request, "anthropic", _UPSTREAM_PATHS["messages"]["anthropic"], routed=True)


async def count_tokens(request: Request) -> ASGIApp:
    return await _proxy_transcript(request, "anthropic", _UPSTREAM_PATHS["count_tokens"]["anthropic"])


async def models(request: Request) -> ASGIApp:
    # Both SDKs call GET /v1/models; only Anthropic's sends its own headers.
    headers = request.headers
    route: RouteName = "anthropic" if "x-api-key" in headers or "anthropic-version" in headers else "openai"
    denied = _check_client_key(request, route)
    if denied is not None:
        return denied
    return await _forward(request, route, _UPSTREAM_PATHS["models"][route], content=None)


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def readyz(request: Request) -> Response:
    state = _state(request)
    ready = state.ready and bool(state.upstreams) and not any(u.closed for u in state.upstreams.values())
    return JSONResponse({"status": "ready" if ready else "not ready"}, status_code=200 if ready else 503)


async def metrics(request: Request) -> Response:
    state = _state(request)
    return Response(state.metrics.render(), headers={"content-type": state.metrics.content_type})


def routes() -> list[BaseRoute]:
    return [
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/responses", responses, methods=["POST"]),
        # google-genai calls /v1 by default, /v1beta when asked (and the REST docs use v1beta).
        Route("/v1/models/{rest:path}", gemini_models, methods=["POST"]),
        Route("/v1beta/models/{rest:path}", gemini_models, methods=["POST"]),
        Route("/model/{model_id:path}/converse", bedrock_converse, methods=["POST"]),
        Route("/model/{model_id:path}/converse-stream", bedrock_converse, methods=["POST"]),
        Route("/v1/messages", messages, methods=["POST"]),
        Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
    ]


async def _proxy_transcript(
    request: Request, route: RouteName, upstream_path: str, *, api: str = "", routed: bool = False
) -> ASGIApp:
    state, ctx = _state(request), _ctx(request)
    denied = _check_client_key(request, route)
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
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return error_response(route, 400, f"the request body is not valid JSON: {exc}")

    mode = state.settings.mode_for(route)
    ctx.mode = mode
    api = api or API_OF_ROUTE[route]
    # The route table (`routes:`) applies to Chat and Messages requests, by their model.
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
        result = sanitize(body, api=api, policy=state.policy, provider=provider)
    except SanitizeError as exc:
        return error_response(route, 400, str(exc))
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
            checked = provider if provider in PROVIDERS.get(api, ()) else route
            problems += [f"{v.rule}: {v.message}" for v in validate(body, api=api, provider=checked)]
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
            content = orjson.dumps(result.body)
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
        return await _via_litellm(request, route, target, sent, result.restore_ids, capture)
    return await _forward(request, route, upstream_path, content=content, capture=capture, target=target)


async def _via_litellm(
    request: Request,
    route: RouteName,
    target: Target,
    body: dict[str, Any],
    restore: dict[str, str],
    capture: CaptureDraft | None,
) -> ASGIApp:
    state, ctx = _state(request), _ctx(request)
    api: ClientAPI = "openai-chat" if route == "openai" else "anthropic-messages"
    stream = body.get("stream") is True
    call = LitellmCall(
        api=api,
        model=target.litellm_model(str(body["model"])),
        body=body,
        stream=stream,
        api_base=target.api_base,
        api_key=_litellm_key(request, route, target),
    )
    sent = time.perf_counter()
    try:
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
        message = exc.message
        # A provider may quote the key it refused; Suture never writes a key into a body.
        keys = [*_secrets(request, route), *([target.api_key.get_secret_value()] if target.api_key else [])]
        for key in sorted((k for k in keys if len(k) >= 8), key=len, reverse=True):
            message = message.replace(key, "[redacted]")
        response = error_response(route, exc.status, message)
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
        if result.outcome == "client_disconnected":
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

    return gateway.GatewayStream(api, answer, restore, on_done=done)


def _capture_draft(
    request: Request, route: RouteName, api: str, mode: str, body: Any, forwarded: Any, repairs: list[Repair]
) -> CaptureDraft:
    return CaptureDraft(
        request_id=_ctx(request).request_id,
        route=route,
        path=request.url.path,
        api=api,
        mode=mode,
        original=body,
        forwarded=forwarded,
        repairs=repairs,
        headers=safe_headers(request.headers.raw),
        secrets=_secrets(request, route),
    )


def _litellm_key(request: Request, route: RouteName, target: Target) -> str | None:
    if target.api_key is not None:
        return target.api_key.get_secret_value()
    if not target.passes_client_key or _state(request).settings.route(route).client_api_key is not None:
        # With client_api_key set, the client's key is Suture's own and goes no further.
        return None
    auth = request.headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip() or None
    return request.headers.get("x-api-key") or None


async def _forward(
    request: Request,
    route: RouteName,
    path: str,
    *,
    content: bytes | None,
    capture: CaptureDraft | None = None,
    target: Target | None = None,
) -> ASGIApp:
    state, ctx = _state(request), _ctx(request)
    upstream = state.upstreams.get(route) if target is None else state.named_upstreams.get(target.name)
    if upstream is None or upstream.closed:
        return error_response(route, 503, "Suture is not ready: its upstream clients are not running")
    drop, replace = _credential_headers(route, state.settings.route(route), request.headers, target)
    headers = forward_headers(request.headers.raw, drop=drop, replace=replace)
    sent = time.perf_counter()
    try:
        response = await upstream.open(
            request.method, path, query=_upstream_query(request, route), headers=headers, content=content
        )
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
        if result.outcome == "client_disconnected":
            state.metrics.disconnects.labels(route).inc()
            log(
                upstream_log,
                logging.WARNING,
                "client disconnected; upstream request cancelled",
                request_id=ctx.request_id,
                upstream=upstream.base_url,
                bytes_relayed=result.bytes_sent,
            )
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
    return Relay(response, on_done=done, keep_head=keep)


def _credential_headers(
    route: RouteName, cfg: RouteSettings, client: Headers, target: Target | None = None
) -> tuple[set[str], dict[str, str]]:
    """Headers to drop and to set when the route holds its own upstream credentials; none otherwise."""
    if route == "bedrock":
        # Suture signs Bedrock requests itself (proxy/aws.py): the client's signature, its
        # X-Amz-* headers and its key for Suture never leave.
        return {"authorization", "x-api-key", *(n for n in client if n.startswith("x-amz-"))}, {}
    own = cfg.upstream_api_key if target is None else target.api_key
    if own is None:
        if target is not None and cfg.client_api_key is not None:
            # The client's key is Suture's own: it must not reach a routed upstream either.
            return {"authorization", "x-api-key"}, {}
        return set(), {}
    key = own.get_secret_value()
    if route == "openai":
        return {"x-api-key"}, {"authorization": f"Bearer {key}"}
    if route == "gemini":
        return {"authorization", "x-api-key"}, {"x-goog-api-key": key}
    return {"authorization"}, {"x-api-key": key}


def _upstream_query(request: Request, route: RouteName) -> bytes:
    query: bytes = request.scope.get("query_string", b"")
    if route == "gemini" and query and _state(request).settings.gemini.upstream_api_key is not None:
        # Google's SDKs may send the key as ?key=; Suture's own key replaces it (as x-goog-api-key).
        query = b"&".join(p for p in query.split(b"&") if p.partition(b"=")[0] != b"key")
    return query


def _raw_path(request: Request) -> str:
    raw: bytes | None = request.scope.get("raw_path")
    return raw.decode("ascii") if raw else request.url.path


def _secrets(request: Request, route: RouteName) -> tuple[str, ...]:
    """This request's credential values, so a capture can blank them out of an echoed error."""
    values = [v for k, v in request.headers.items() if k in ("x-api-key", "api-key", "x-goog-api-key")]
    values += request.query_params.getlist("key")  # Google's SDKs may send the key as ?key=
    auth = request.headers.get("authorization", "")
    if auth:
        values += [auth, auth.partition(" ")[2].strip()]
    own = _state(request).settings.route(route).upstream_api_key
    if own is not None:
        values.append(own.get_secret_value())
    return tuple(v for v in values if v)


def _check_client_key(request: Request, route: RouteName) -> Response | None:
    cfg = _state(request).settings.route(route)
    if cfg.client_api_key is None:
        return None
    presented = request.headers.get("x-api-key")
    if presented is None and route == "gemini":
        # Google's SDKs send their key as x-goog-api-key, or as ?key= in the URL.
        presented = request.headers.get("x-goog-api-key") or request.query_params.get("key")
    auth = request.headers.get("authorization", "")
    if presented is None and auth[:7].lower() == "bearer ":
        presented = auth[7:].strip()
    expected = cfg.client_api_key.get_secret_value().encode()
    if presented is not None and hmac.compare_digest(presented.encode(), expected):
        return None
    what = "missing" if presented is None else "invalid"
    return error_response(route, 401, f"{what} API key for this Suture proxy")


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
