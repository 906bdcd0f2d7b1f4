"""``suture check FILE...``: the 400s a provider would answer, and what Suture would repair."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson

from ._common import (
    INVALID,
    OK,
    UNUSABLE,
    CommandError,
    Findings,
    add_input_options,
    examine,
    load,
    parse_policy,
    provider_of,
    repair_line,
    violation_dict,
    violation_line,
)


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "check",
        help="list a provider's 400s for a payload, and Suture's repairs",
        description="Check each payload offline: every violation the provider would report (its exact "
        "message, the message index, the ids) and the repairs Suture would make. A payload may be a "
        "request body, a JSON log line holding one, an HTTP dump, an error report with the body in it, "
        "or a Suture capture. Exit status: 0 all valid, 1 some invalid, 2 some unreadable.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="payload file(s); - reads stdin")
    add_input_options(parser)
    parser.add_argument(
        "--policy", action="append", metavar="KEY=VALUE", help="repair policy, as for `suture fix`; repeatable"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per file on stdout")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        policy = parse_policy(args.policy)
    except CommandError as exc:
        print(f"suture: {exc}", file=sys.stderr)
        return UNUSABLE
    status = OK
    for path in args.files:
        try:
            payload = load(path, args.api)
            findings = examine(payload, provider_of(payload.api, args.provider), policy, args.model, args.beta)
        except CommandError as exc:
            print(f"suture: {exc}", file=sys.stderr)
            if args.json:
                _emit({"file": path, "error": str(exc)})
            status = max(status, UNUSABLE)
            continue
        if args.json:
            _emit(as_dict(findings))
        else:
            sys.stdout.write(render(findings))
        if not findings.valid:
            status = max(status, INVALID)
    return status


def as_dict(f: Findings) -> dict[str, Any]:
    p = f.payload
    return {
        "file": p.source,
        "api": p.api,
        "detected_because": p.reason,
        "form": p.form,
        "provider": f.provider,
        "valid": f.valid,
        "shape_error": f.shape_error,
        "violations": [violation_dict(v) for v in f.violations],
        "repairs": [r.as_dict() for r in f.repairs],
        "repairable": f.repaired is not None,
        "after_repair": [violation_dict(v) for v in f.remaining] if f.repaired is not None else None,
    }


def render(f: Findings) -> str:
    """The findings for one payload, as text for a human."""
    p = f.payload
    lines = []
    if f.shape_error is not None:
        lines.append(f"{p.source}: not a valid {p.api} body: {f.shape_error}")
    elif f.valid:
        lines.append(f"{p.source}: valid for {f.provider} ({p.api})")
    else:
        count = len(f.violations)
        lines.append(f"{p.source}: {f.provider} ({p.api}) would reject it; {count} violation(s):")
        lines.extend(f"  {violation_line(v)}" for v in f.violations)
    if f.repairs:
        lines.append(f"Suture would repair it ({len(f.repairs)} repair(s)):")
        lines.extend(f"  {repair_line(r)}" for r in f.repairs)
        if f.remaining:
            lines.append(f"After repair: still {len(f.remaining)} violation(s), a rule Suture does not know yet:")
            lines.extend(f"  {violation_line(v)}" for v in f.remaining)
        else:
            lines.append(f"After repair: valid for {f.provider}.")
    elif f.repaired is None and f.shape_error is None and not f.valid:
        lines.append(f"Suture cannot repair {p.api} bodies yet.")
    elif not f.valid and f.shape_error is None:
        lines.append("Suture would repair nothing: a rule Suture does not know yet.")
    return "\n".join(lines) + "\n"


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(orjson.dumps(obj).decode() + "\n")
