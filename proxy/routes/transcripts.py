"""A transcript, from the body's bytes to the upstream: parse, route by model, sanitize, judge
(strict mode), capture, then the native or the litellm path."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.types import ASGIApp

from sanitizer import Repair, SanitizeError, SanitizeResult, looks_clean, sanitize
from sanitizer.rejection import Lesson, apply_lessons
from sanitizer.validation import validate

from .. import json_bytes
from ..capture import CaptureDraft, safe_headers
from ..exchange import Exchange, ProxyState, RetryPlan
from ..learnt import School
from ..logs import log, repair_log
from ..provider_table import Route
from ..settings import ProviderSettings
from .credentials import request_secrets
from .errors import error_response
from .lessons import after_lessons, school_of
from .model_routes import PROTOCOL_APIS, Target
from .off_loop import long_transcript
from .send_litellm import send_via_litellm
from .send_native import forward


async def proxy_transcript(
    exchange: Exchange, cfg: ProviderSettings, raw: bytes, upstream_path: str, model: str | None
) -> ASGIApp:
    """A transcript's way from the client's bytes (``raw``, read whole) to the upstream's answer:
    parse, route by model, repair, judge (strict mode), capture, send. Raises ClientGone when the
    client leaves while its body is repaired off the event loop.

    ``model`` is the model the path names (Gemini's native API), which the body does not."""
    destination, record = exchange.destination, exchange.transcript
    route, provider = destination.route, destination.provider
    assert route is not None and provider is not None
    state = exchange.state
    mode = cfg.mode or state.settings.mode
    record.mode = mode
    betas = _betas(exchange) if route.api == "anthropic-messages" else NO_BETAS
    prepared = _prepare(raw, route, state, cfg, mode, model, betas, exchange.request_id)
    if prepared.error is None and prepared.deferred:
        # One trip to a worker thread for the repair and the serialisation (each trip costs a
        # thread handoff, which profiles of 500 KB bodies showed as a third of Suture's time).
        prepared = await exchange.off_loop(run_repair, prepared, route.api, state, mode, model, exchange.request_id)
    if prepared.error is not None:
        return error_response(provider, 400, prepared.error)
    body, target, rules_for, result, content = (
        prepared.body,
        prepared.target,
        prepared.rules_for,
        prepared.result,
        prepared.content,
    )
    named = body.get("model") if model is None and isinstance(body, dict) else model
    record.model = named if isinstance(named, str) else None
    upstream = destination.upstream = target.name if target is not None else provider.name
    destination.school = prepared.school
    api = route.api
    if prepared.lesson_codes:
        for code in prepared.lesson_codes:
            state.metrics.lessons_applied.labels(upstream, code).inc()

    record.found = len(result.repairs)
    record.repairs = result.repairs  # counted (and traced) when the exchange finishes
    if result.repairs and repair_log.isEnabledFor(logging.INFO):
        for repair in result.repairs:
            log_repair(exchange.request_id, repair, mode)

    if mode == "strict":
        off_loop = exchange.off_loop if prepared.long else None
        message = await strict_refusal(result.repairs, body, api, rules_for, model, prepared.betas, off_loop)
        if message is not None:
            state.metrics.rejections.labels(upstream).inc()
            if state.drafts:
                record.draft = _capture_draft(exchange, cfg, api, mode, body, None, result.repairs)
                record.strict_refusal = message
            return error_response(provider, 400, message)

    if content is not raw:
        record.applied = len(result.repairs)
    if state.drafts:
        forwarded = result.body if content is not raw else None
        record.draft = _capture_draft(exchange, cfg, api, mode, body, forwarded, result.repairs)
    allowance = target.rejection_repair if target is not None else cfg.rejection_repair
    if mode == "repair" and allowance.enabled and isinstance(result.body, dict):
        record.retry_plan = RetryPlan(api, rules_for, model, allowance, result.body)
    if target is not None and target.protocol == "litellm":
        sent = result.body if mode == "repair" else body
        return await send_via_litellm(exchange, cfg, api, target, sent, result.restore_ids)
    return await forward(exchange, cfg, upstream_path, content=content, target=target)


@dataclass(slots=True)
class Prepared:
    """A transcript's bytes made ready to send: parsed, routed, repaired, serialised."""

    error: str | None = None
    """Why the request is refused (400), instead."""
    body: Any = None
    target: Target | None = None
    rules_for: str | None = None
    result: SanitizeResult = field(default_factory=lambda: SanitizeResult(body={}))
    content: bytes = b""
    """What goes upstream: the client's own bytes unless the body was repaired (repair mode)."""
    deferred: bool = False
    """A long transcript the quick check could not vouch for: the full pass is still to run (run_repair)."""
    long: bool = False
    """A transcript whose Python work goes to a worker thread (off_loop.long_transcript)."""
    betas: frozenset[str] = frozenset()
    """What the request declares of itself: its ``anthropic-beta`` values (sanitize's ``betas``)."""
    school: School | None = None
    """Where what this request's refusals teach is kept, and what earlier ones taught."""
    lessons: tuple[Lesson, ...] = ()
    """Fixes to apply before the first attempt: stated in the config, or learnt from refusals."""
    lessons_from: str = ""
    """Where ``lessons`` come from, for the repair record."""
    lesson_codes: tuple[str, ...] = ()
    """The codes of the repairs those fixes made, for the metric."""


def _prepare(
    raw: bytes,
    route: Route,
    state: ProxyState,
    cfg: ProviderSettings,
    mode: str,
    model: str | None,
    betas: frozenset[str],
    request_id: str,
) -> Prepared:
    """Parse, route by model, then repair and serialise, except for a long transcript the quick
    check cannot vouch for, which comes back ``deferred`` for :func:`run_repair` in a worker thread."""
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return Prepared(f"the request body is not valid JSON: {exc}")
    api = route.api
    # The route table (`routes:`) applies to Chat, Responses and Messages requests, by their model.
    target = state.router.resolve(body.get("model")) if route.routed and isinstance(body, dict) else None
    if target is not None and target.protocol != "litellm" and api not in PROTOCOL_APIS[target.protocol]:
        return Prepared(
            f"model {body['model']!r} routes to upstream {target.name!r}, which speaks the {target.protocol} API; "
            "this client's format reaches it only through a litellm upstream"
        )
    if target is not None and target.builtin:
        target = None
    # The core's provider table says which rules bind the body: the route's provider's, or the
    # routed upstream's (a Chat body bound for Mistral gets Mistral's rules too).
    rules_for = target.repair_provider(api) if target is not None else route.rules_provider
    prepared = Prepared(None, body, target, rules_for, SanitizeResult(body), raw, betas=betas)
    if mode == "repair":
        give_lessons(prepared, state, route.provider.name, cfg, model)
    prepared.long = long_transcript(body)
    if not prepared.long:
        return run_repair(prepared, api, state, mode, model, request_id)
    try:
        clean = looks_clean(body, api=api, policy=state.policy, provider=rules_for, model=model, betas=betas)
    except Exception:
        clean = False  # for the full pass to report or survive, as for any body
    prepared.deferred = not clean or bool(prepared.lessons)
    return prepared


def give_lessons(
    prepared: Prepared, state: ProxyState, provider: str, cfg: ProviderSettings, model: str | None
) -> None:
    """Find the fixes the config states or earlier refusals taught for where ``prepared`` goes."""
    prepared.school = school_of(state, provider, cfg, prepared.target)
    body = prepared.body
    named = model if model is not None else body.get("model") if isinstance(body, dict) else None
    prepared.lessons, prepared.lessons_from = prepared.school.lessons(
        state.learnt, named if isinstance(named, str) else None
    )


def run_repair(
    prepared: Prepared, api: str, state: ProxyState, mode: str, model: str | None, request_id: str
) -> Prepared:
    """The full pass on a parsed, routed body, and its serialisation when it was repaired."""
    body = prepared.body
    prepared.deferred = False
    try:
        taught = _apply_lessons(prepared, api, state, model, request_id)
        result = sanitize(
            taught.body, api=api, policy=state.policy, provider=prepared.rules_for, model=model, betas=prepared.betas
        )
        if taught.repairs:
            result = after_lessons(taught, result)
    except SanitizeError as exc:
        return Prepared(str(exc))
    except Exception:
        # A fault in the sanitizer must not take the agent down: forward as if Suture were absent.
        repair_log.exception(
            "sanitizer failed; forwarding the request unchanged", extra={"fields": {"request_id": request_id}}
        )
        result = SanitizeResult(body=body, repairs=[])
    prepared.result = result
    # Nothing changed (or report mode): the client's own bytes, so prompt caches and thinking
    # signatures upstream see exactly what the client sent.
    if mode == "repair" and result.repairs:
        try:
            prepared.content = json_bytes.dumps(result.body)
        except (TypeError, ValueError, RecursionError):
            # Never seen: orjson read the body, and json_bytes writes whatever it reads. Should it
            # happen, the request goes on as the client sent it, as on a sanitizer fault.
            repair_log.exception(
                "repaired body could not be serialised; forwarding the request unchanged",
                extra={"fields": {"request_id": request_id}},
            )
    return prepared


def _apply_lessons(
    prepared: Prepared, api: str, state: ProxyState, model: str | None, request_id: str
) -> SanitizeResult:
    """The body with the fixes earlier refusals of its upstream taught (or the config states)."""
    body = prepared.body
    if not prepared.lessons or prepared.school is None:
        return SanitizeResult(body)
    try:
        taught = apply_lessons(
            body, api=api, lessons=prepared.lessons, provider=prepared.rules_for, policy=state.policy, model=model
        )
    except Exception:
        # A lesson is the sanitizer's code too: its fault costs the request that fix, nothing more.
        repair_log.exception("learnt fixes failed; not applied", extra={"fields": {"request_id": request_id}})
        return SanitizeResult(body)
    prepared.lesson_codes = tuple(dict.fromkeys(r.code for r in taught.repairs))
    source = prepared.lessons_from
    taught.repairs = [dataclasses.replace(r, detail=f"{r.detail} ({source})") for r in taught.repairs]
    return taught


async def strict_refusal(
    repairs: list[Repair],
    body: Any,
    api: str,
    provider: str | None,
    model: str | None,
    betas: frozenset[str],
    off_loop: Callable[..., Awaitable[Any]] | None,
) -> str | None:
    """Strict mode's answer to a transcript: the message listing each repair it would need and each
    rule it breaks, or None when it has no problem. ``off_loop`` runs the validation in a worker
    thread (a long transcript); None runs it here."""
    problems = [describe_repair(r) for r in repairs]
    try:
        # validate() resolves the provider through the table as sanitize() and `suture check` do:
        # a Chat body bound for Anthropic through litellm is judged by Anthropic's OpenAI-compatible rules.
        found = (
            await off_loop(validate_body, body, api, provider, model, betas)
            if off_loop is not None
            else validate_body(body, api, provider, model, betas)
        )
        problems += [f"{v.rule}: {v.message}" for v in found]
    except SanitizeError as exc:
        problems.append(str(exc))
    if not problems:
        return None
    listing = "; ".join(f"({i}) {p}" for i, p in enumerate(problems, 1))
    return f"Suture's strict mode refused this request (it was not sent on), {len(problems)} problem(s): {listing}"


def validate_body(body: Any, api: str, provider: str | None, model: str | None, betas: frozenset[str]) -> list[Any]:
    return validate(body, api=api, provider=provider, model=model, betas=betas)


NO_BETAS: frozenset[str] = frozenset()


def _betas(exchange: Exchange) -> frozenset[str]:
    """The request's ``anthropic-beta`` values: comma-separated, in one header or several. Which
    capabilities they declare is the core's to say (``sanitizer.capabilities``)."""
    request = exchange.request
    if request is None:
        return NO_BETAS
    values = request.headers.getlist("anthropic-beta")
    return frozenset(beta.strip() for value in values for beta in value.split(",") if beta.strip())


def _capture_draft(
    exchange: Exchange, cfg: ProviderSettings, api: str, mode: str, body: Any, forwarded: Any, repairs: list[Repair]
) -> CaptureDraft:
    request, provider = exchange.request, exchange.destination.provider
    assert request is not None and provider is not None
    return CaptureDraft(
        request_id=exchange.request_id,
        route=provider.name,
        path=request.url.path,
        api=api,
        mode=mode,
        original=body,
        forwarded=forwarded,
        repairs=repairs,
        headers=safe_headers(request.headers.raw),
        secrets=(*request_secrets(request, cfg), *exchange.state.secrets.values),
    )


def describe_repair(repair: Repair) -> str:
    """A repair strict mode did not make, as what repair mode would have done (the sanitizer's
    ``detail`` tells what it did: "answered unanswered call to 't' with a synthetic error result")."""
    where = []
    if repair.message_index is not None:
        where.append(f"message {repair.message_index}")
    if repair.tool_call_id is not None:
        where.append(f"tool call {repair.tool_call_id}")
    place = f" ({', '.join(where)})" if where else ""
    return f"{repair.code} {repair.rule}{place}: in repair mode it would have {_would_have(repair.detail)}"


# The details that open on a verb in the past tense take "would have" and its participle; the
# others ("tool id rewritten to ...") are quoted whole.
_PARTICIPLES = {"gave": "given", "took": "taken", "wrote": "written", "put": "put", "kept": "kept", "split": "split"}


def _would_have(detail: str) -> str:
    verb, _, rest = detail.partition(" ")
    if verb in _PARTICIPLES:
        return f"{_PARTICIPLES[verb]} {rest}"
    if verb.endswith("ed") and verb.isalpha() and verb.islower():
        return detail
    return f"made this repair: {detail}"


def log_repair(request_id: str, repair: Repair, mode: str) -> None:
    log(
        repair_log,
        logging.INFO,
        "repair" if mode == "repair" else "repair not applied",
        request_id=request_id,
        mode=mode,
        **repair.as_dict(),
    )
