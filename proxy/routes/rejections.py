"""Repair from the provider's own refusal: a transcript the upstream still refuses (400, 422,
Responses' 404 for an item) is repaired where the refusal says, and sent once more, before the
client sees a byte of the first answer.

The sanitizer reads the refusal and repairs (``sanitizer.rejection``); this module reads the
refusal's bytes, decides whether another try is allowed, and writes down what happened.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson

from sanitizer import Policy
from sanitizer.rejection import (
    PORTABLE_PROFILE,
    REJECTION_STATUSES,
    Lesson,
    RejectionRepair,
    refusal_message,
    repair_rejection,
)

__all__ = ["MAX_REFUSAL_BYTES", "REJECTION_STATUSES", "Retrier"]

from ..capture import decoded
from ..client_watch import ClientGone
from ..learnt import ProfilesFileError
from ..logs import log, repair_log
from ..redaction import Secrets
from ..settings import RejectionRepairSettings
from .credentials import request_secrets
from .off_loop import long_transcript

if TYPE_CHECKING:
    from .exchange import Exchange

# A refusal is a short JSON error; anything longer is relayed unread.
MAX_REFUSAL_BYTES = 64 * 1024


@dataclass(eq=False, slots=True)
class Retrier:
    """One request's allowance of retries after refusals, and the body as it was last sent."""

    exchange: Exchange
    api: str
    rules_for: str | None
    model: str | None
    policy: Policy
    settings: RejectionRepairSettings
    body: Any
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

    def wants(self, status: int) -> bool:
        """Whether an answer with ``status`` may be a transcript refusal worth another try."""
        return status in REJECTION_STATUSES and self.attempts < self.settings.max_attempts

    async def repaired_bytes(self, status: int, refusal: bytes, encoding: str) -> bytes | None:
        """The body to send again, serialised, for a refusal read from the wire; None: relay it."""
        message = _message(refusal, encoding)
        if message is None:
            return None
        body = await self.repaired(status, message)
        if body is None:
            return None
        return orjson.dumps(body)

    async def repaired(self, status: int, message: str) -> dict[str, Any] | None:
        """The body to send again for the provider's refusal ``message``; None: give the client the refusal."""
        exchange = self.exchange
        work = partial(
            repair_rejection,
            self.body,
            api=self.api,
            status=status,
            message=message,
            provider=self.rules_for,
            policy=self.policy,
            model=self.model,
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
        label = self.exchange.provider.name if self.exchange.provider is not None else ""
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
        school, learnt, model = exchange.school, exchange.state.learnt, exchange.model
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
            if exchange.request is not None and exchange.provider is not None:
                cfg = exchange.state.settings.route(exchange.provider.name)
                secrets = secrets.with_values(request_secrets(exchange.request, cfg))
            self.secrets = secrets
        return self.secrets

    def _record(self, outcome: RejectionRepair, status: int, said: str) -> None:
        exchange = self.exchange
        exchange.repairs = [*exchange.repairs, *outcome.repairs]
        exchange.repairs_found += len(outcome.repairs)
        exchange.repairs_applied += len(outcome.repairs)
        # Counted with the others (in exchange.repairs) when the exchange finishes.
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
        if exchange.capture is not None:
            exchange.capture.rejection_repairs.append(
                {
                    "upstream_status": status,
                    "provider_message": said,
                    "strategy": outcome.strategy,
                    "codes": list(outcome.codes),
                    "repairs": [r.as_dict() for r in outcome.repairs],
                    "forwarded": outcome.body,
                }
            )


def _message(raw: bytes, encoding: str) -> str | None:
    refusal = decoded(raw, encoding, MAX_REFUSAL_BYTES)
    if refusal is None:
        return None
    try:
        return refusal_message(orjson.loads(refusal))
    except orjson.JSONDecodeError:
        text = refusal.decode("utf-8", "replace").strip()
        # A plain-text refusal (some gateways, vLLM's templates) is its own message.
        return text or None
