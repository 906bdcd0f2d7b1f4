"""What the payload commands share: reading inputs, naming the provider, describing findings."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sanitizer import (
    APIS,
    Policy,
    PolicyError,
    Repair,
    SanitizeError,
    UnknownAPIError,
    UnknownProviderError,
    Violation,
    sanitize,
    validate,
)
from sanitizer.providers import ACCEPTED

from ..payloads import Payload, PayloadError, read_payload

# Exit statuses shared by check, fix and replay.
OK, INVALID, UNUSABLE = 0, 1, 2


class CommandError(Exception):
    """The command cannot run on this input; ``str(e)`` is one line. Exit status 2."""


def fail(message: str) -> int:
    print(f"suture: {message}", file=sys.stderr)
    return UNUSABLE


def add_input_options(parser: argparse.ArgumentParser, *, provider: bool = True) -> None:
    parser.add_argument(
        "--api",
        choices=sorted(ACCEPTED),
        help="the body's wire format (default: detected from its shape, and shown)",
    )
    if provider:
        parser.add_argument(
            "--provider",
            help="whose rules to check against (default: the API's own; e.g. "
            + "; ".join(f"{api}: {', '.join(names)}" for api, names in ACCEPTED.items())
            + ")",
        )
    parser.add_argument(
        "--model",
        help="the model the request is for, where the body does not name it: a native Gemini body's is in "
        "its URL (default: the one a capture's or HTTP dump's request path names)",
    )
    parser.add_argument(
        "--beta",
        action="append",
        default=[],
        metavar="BETA",
        help="an anthropic-beta value the request declared (repeat, or comma-separate; default: an HTTP "
        "dump's anthropic-beta header); counts where no model is named",
    )


def load(path: str, api: str | None) -> Payload:
    """Read the payload at ``path`` and say on stderr where the body was found and which API it speaks."""
    try:
        payload = read_payload(path, api=api)
    except PayloadError as exc:
        raise CommandError(str(exc)) from None
    where = "" if payload.form == "request body" else f"; read from: {payload.form}"
    print(f"{payload.source}: detected api: {payload.api} (because {payload.reason}{where})", file=sys.stderr)
    return payload


def provider_of(api: str, provider: str | None) -> str:
    """``provider`` checked against ``api``, or the API's own provider.

    Any name the provider table (:mod:`sanitizer.providers`) knows for the API: its own providers,
    those a gateway can reach with it (an OpenAI Chat body bound for Bedrock through LiteLLM, say),
    and their aliases. ``sanitize`` and ``validate`` resolve it the same way.
    """
    if api not in ACCEPTED:
        raise CommandError(f"unknown api {api!r}; known: {', '.join(ACCEPTED)}")
    if provider is None:
        return ACCEPTED[api][0]
    if provider not in ACCEPTED[api]:
        raise CommandError(f"unknown provider {provider!r} for api {api}; known: {', '.join(ACCEPTED[api])}")
    return provider


def repairable(payload: Payload) -> None:
    if payload.api not in APIS:
        raise CommandError(
            f"{payload.source}: Suture cannot repair {payload.api} bodies yet (it repairs {', '.join(APIS)})"
        )


def parse_policy(pairs: list[str] | None) -> Policy:
    values: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise CommandError(f"--policy takes KEY=VALUE, not {pair!r}")
        values[key.strip().replace("-", "_")] = value
    try:
        return Policy.from_mapping(values)
    except PolicyError as exc:
        raise CommandError(f"--policy: {exc}") from None


@dataclass
class Findings:
    """What the provider would say about a body, what Suture would repair, and what is left after."""

    payload: Payload
    provider: str
    violations: list[Violation]
    repairs: list[Repair]
    repaired: dict[str, Any] | None
    """The repaired body; None when the API cannot be repaired, or the body when nothing changed."""
    remaining: list[Violation]
    shape_error: str | None = None

    @property
    def valid(self) -> bool:
        return self.shape_error is None and not self.violations


def examine(
    payload: Payload,
    provider: str,
    policy: Policy | None = None,
    model: str | None = None,
    betas: Iterable[str] = (),
) -> Findings:
    """Validate ``payload`` for ``provider``, repair it when Suture can, and validate the repair.

    ``model`` where the body does not name it, else the one in the payload's request path;
    ``betas`` (``--beta``), else the ones its ``anthropic-beta`` header declared."""
    if model is None and payload.path is not None:
        named = _PATH_MODEL.search(payload.path)
        model = named.group(1) if named else None
    declared = [*betas] or [payload.headers.get("anthropic-beta", "")]
    betas = frozenset(b.strip() for value in declared for b in value.split(",") if b.strip())
    try:
        violations = validate(payload.body, api=payload.api, provider=provider, model=model, betas=betas)
    except SanitizeError as exc:
        return Findings(payload, provider, [], [], None, [], shape_error=str(exc))
    except (UnknownAPIError, UnknownProviderError) as exc:
        raise CommandError(str(exc)) from None
    if payload.api not in APIS:
        return Findings(payload, provider, violations, [], None, violations)
    try:
        result = sanitize(payload.body, api=payload.api, policy=policy, provider=provider, model=model, betas=betas)
    except SanitizeError as exc:
        return Findings(payload, provider, violations, [], None, violations, shape_error=str(exc))
    remaining = (
        validate(result.body, api=payload.api, provider=provider, model=model, betas=betas)
        if result.repairs
        else violations
    )
    return Findings(payload, provider, violations, result.repairs, result.body, remaining)


# Gemini names the model in the path (/v1beta/models/{model}:generateContent, Vertex's
# .../publishers/google/models/{model}:...), not in the body.
_PATH_MODEL = re.compile(r"/models/([^/:?]+):")


def where(message_index: int | None, tool_call_id: str | None = None) -> str:
    parts = []
    if message_index is not None:
        parts.append(f"message {message_index}")
    if tool_call_id is not None:
        parts.append(f"tool call {tool_call_id}")
    return ", ".join(parts) or "request"


def violation_line(v: Violation) -> str:
    return f"{v.rule} [{where(v.message_index)}] {v.status}: {v.message}"


def violation_dict(v: Violation) -> dict[str, Any]:
    return {"rule": v.rule, "status": v.status, "message": v.message, "message_index": v.message_index}


def repair_line(r: Repair) -> str:
    return f"{r.code} {r.rule} [{where(r.message_index, r.tool_call_id)}] {r.action}: {r.detail}"


def repair_table(repairs: list[Repair]) -> str:
    """The repairs as aligned columns, one per line, with a header."""
    rows = [("CODE", "RULE", "ACTION", "MESSAGE", "TOOL CALL", "DETAIL")]
    for r in repairs:
        index = "-" if r.message_index is None else str(r.message_index)
        rows.append((r.code, r.rule, r.action, index, r.tool_call_id or "-", r.detail))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = []
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row[:5], widths, strict=True)]
        lines.append("  ".join([*cells, row[5]]).rstrip())
    return "\n".join(lines)


def write_stdout(data: bytes) -> None:
    """Write UTF-8 bytes to stdout whatever its text encoding (a body may hold any language)."""
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(data.decode())
    else:
        buffer.write(data)
        buffer.flush()


def print_diff(original: Any, forwarded: Any, repairs: list[dict[str, Any]], api: str) -> None:
    """The before/after view on stdout: coloured on a terminal (unless NO_COLOR), plain otherwise."""
    import os
    import shutil

    from ..ui.terminal import render
    from ..ui.transcript import compare

    colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    width = shutil.get_terminal_size((120, 24)).columns if sys.stdout.isatty() else 120
    sys.stdout.write(render(compare(original, forwarded, repairs, api), width=width, colour=colour))
