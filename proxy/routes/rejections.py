"""Repair from the provider's own refusal: a transcript the upstream still refuses (400, 422,
Responses' 404 for an item) is repaired where the refusal says, and sent once more, before the
client sees a byte of the first answer.

The sanitizer reads the refusal and repairs (``sanitizer.rejection``); this module reads the
refusal's bytes, decides whether another try is allowed, and writes down what happened.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

import orjson

from sanitizer.rejection import (
    PORTABLE_PROFILE,
    REJECTION_STATUSES,
    Lesson,
    RejectionRepair,
    refusal_message,
    repair_rejection,
)

from ..capture import decoded
from ..client_watch import ClientGone
from ..exchange import Exchange, RetryPlan
from ..learnt import ProfilesFileError
from ..logs import log, repair_log
from ..redaction import Secrets
from ..upstreams.streamed import UpstreamFailure
from .credentials import request_secrets
from .off_loop import long_transcript

__all__ = ["MAX_REFUSAL_BYTES", "REJECTION_STATUSES", "Retrier", "refusal_text", "send_with_retries"]

# A refusal is a short JSON error; anything longer is relayed unread.
MAX_REFUSAL_BYTES = 64 * 1024

_A = TypeVar("_A")


async def send_with_retries(
    exchange: Exchange,
    attempt: Callable[[Any], Awaitable[tuple[_A, int]]],
    refusal_of: Callable[[_A, int], Awaitable[str | None]],
) -> tuple[_A, Retrier | None]:
    """Send the request, and again (repaired) after each refusal of its transcript the rejection
    repair can fix, within the allowance; return the last answer and the retrier, if one was made.

    ``attempt(body)`` sends ``body`` (None: the request as first built) and returns its answer and
    status; an :class:`UpstreamFailure` it raises passes through. ``refusal_of(answer, status)``
    reads a refusal's message (None: unreadable, relay it as it is). ``exchange.upstream``'s
    ``sent_at`` is when the last attempt went, its ``retries`` how many followed a refusal.
    """
    call = exchange.upstream
    call.sent_at = time.perf_counter()
    answer, status = await attempt(None)
    plan = exchange.transcript.retry_plan
    if plan is None or status not in REJECTION_STATUSES:
        return answer, None
    retrier = Retrier(exchange, plan)
    try:
        while retrier.wants(status):
            # A refusal of the transcript may say what to repair: read before it is relayed.
            message = await refusal_of(answer, status)
            again = await retrier.repaired(status, message) if message is not None else None
            if again is None:
                break
            call.retries = retrier.attempts
            call.sent_at = time.perf_counter()
            answer, status = await attempt(again)
            retrier.settled(status)
    except UpstreamFailure as exc:
        retrier.settled(exc.outcome)
        raise
    return answer, retrier


@dataclass(eq=False, slots=True)
class Retrier:
    """One request's allowance of retries after refusals, and the body as it was last sent."""

    exchange: Exchange
    plan: RetryPlan
    body: Any = None
    """The body as it was last sent."""
    attempts: int = 0
    strategy: str | None = None
    """The strategy of the retry in flight, until its answer is known."""
    restore_ids: dict[str, str] = field(default_factory=dict)
    """Tool-call ids the retries' repairs rewrote for the provider, mapped back to the client's."""
    secrets: Secrets | None = field(default=None, repr=False)
    """Suture's secrets and this request's credentials, once a refusal needs them redacted."""
    escalated: bool = False
    """The portable profile was sent: a request gets it once, whatever ``max_attempts`` allows."""
    lesson: tuple[Lesson, str] | None = None
    """What the retry in flight would teach, and the refusal that taught it, until its answer is known."""

    def __post_init__(self) -> None:
        if self.body is None:
            self.body = self.plan.body

    def wants(self, status: int) -> bool:
        """Whether an answer with ``status`` may be a transcript refusal worth another try."""
        return status in REJECTION_STATUSES and self.attempts < self.plan.allowance.max_attempts

    async def repaired(self, status: int, message: str) -> dict[str, Any] | None:
        """The body to send again for the provider's refusal ``message``; None: give the client the refusal."""
        exchange, plan = self.exchange, self.plan
        work = partial(
            repair_rejection,
            self.body,
            api=plan.api,
            status=status,
            message=message,
            provider=plan.rules_for,
            policy=exchange.state.policy,
            model=plan.model,
            escalate=not self.escalated,
        )
        try:
            if long_transcript(self.body):
                outcome = await exchange.off_loop(work)
            else:
                outcome = work()
        except ClientGone:
            raise
        except Exception:
            # A fault in the sanitizer must not cost the client its answer: it gets the refusal.
            repair_log.exception(
                "repair from the refusal failed", extra={"fields": {"request_id": exchange.request_id}}
            )
            return None
        # Providers quote the key they refused: the client's own, or Suture's. Redacted before
        # the cut, which could leave a key's head no longer recognisable as one.
        said = self._secrets().redact_quoted(message)[:500]
        if outcome.body is None:
            log(
                repair_log,
                logging.INFO,
                "refusal not repaired",
                request_id=exchange.request_id,
                status=status,
                reason=outcome.why,
                provider_message=said,
            )
            return None
        self.attempts += 1
        self.escalated = self.escalated or outcome.strategy == PORTABLE_PROFILE.name
        self.strategy = outcome.strategy
        self.lesson = (outcome.lesson, said) if outcome.lesson is not None else None
        self.body = outcome.body
        self.restore_ids.update(outcome.restore_ids)
        self._record(outcome, status, said)
        return outcome.body

    def settled(self, status: int | str) -> None:
        """The retry's answer came (``status``), or none did: counted once per retry."""
        if self.strategy is None:
            return
        accepted = isinstance(status, int) and status < 400
        provider = self.exchange.destination.provider
        label = provider.name if provider is not None else ""
        self.exchange.state.metrics.rejection_repairs.labels(
            label, "accepted" if accepted else "refused_again", self.strategy
        ).inc()
        self.strategy = None
        if accepted and self.lesson is not None:
            self._learn(*self.lesson)
        self.lesson = None

    def _learn(self, lesson: Lesson, refusal: str) -> None:
        """Remember the fix that got the retry accepted, for later requests to the same upstream."""
        exchange = self.exchange
        school, learnt, model = exchange.destination.school, exchange.state.learnt, exchange.transcript.model
        if school is None or learnt is None or not school.learns or model is None:
            return

        def learn() -> None:
            try:
                entry = learnt.learn(school.upstream, school.base_url, model, lesson, refusal)
            except ProfilesFileError as exc:
                log(repair_log, logging.WARNING, "fix not remembered", request_id=exchange.request_id, reason=str(exc))
                return
            if entry is not None:
                exchange.state.metrics.lessons_learnt.labels(school.upstream, lesson.fix).inc()
                log(
                    repair_log,
                    logging.INFO,
                    "fix learnt",
                    request_id=exchange.request_id,
                    upstream=school.upstream,
                    models=entry.models,
                    fix=lesson.label(),
                    profile=entry.id,
                )

        # The profiles file is written under a lock: never on the event loop.
        loop = exchange.state.loop
        if loop is None:
            learn()
        else:
            loop.run_in_executor(None, learn)

    def _secrets(self) -> Secrets:
        if self.secrets is None:
            exchange = self.exchange
            secrets = exchange.state.secrets
            provider = exchange.destination.provider
            if exchange.request is not None and provider is not None:
                cfg = exchange.state.settings.route(provider.name)
                secrets = secrets.with_values(request_secrets(exchange.request, cfg))
            self.secrets = secrets
        return self.secrets

    def _record(self, outcome: RejectionRepair, status: int, said: str) -> None:
        exchange = self.exchange
        # Counted with the others when the exchange finishes.
        exchange.transcript.add_rejection_repairs(outcome.repairs)
        for repair in outcome.repairs:
            log(
                repair_log,
                logging.INFO,
                "repair after rejection",
                request_id=exchange.request_id,
                upstream_status=status,
                provider_message=said,
                strategy=outcome.strategy,
                **repair.as_dict(),
            )
        if exchange.transcript.draft is not None:
            exchange.transcript.draft.rejection_repairs.append(
                {
                    "upstream_status": status,
                    "provider_message": said,
                    "strategy": outcome.strategy,
                    "codes": list(outcome.codes),
                    "repairs": [r.as_dict() for r in outcome.repairs],
                    "forwarded": outcome.body,
                }
            )


def refusal_text(raw: bytes, encoding: str) -> str | None:
    """The message of a refusal read from the wire (``encoding``: its content-encoding); None if unreadable."""
    refusal = decoded(raw, encoding, MAX_REFUSAL_BYTES)
    if refusal is None:
        return None
    try:
        return refusal_message(orjson.loads(refusal))
    except orjson.JSONDecodeError:
        text = refusal.decode("utf-8", "replace").strip()
        # A plain-text refusal (some gateways, vLLM's templates) is its own message.
        return text or None
