"""``suture fix FILE``: the repaired body on stdout (or a file), the repairs on stderr."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from .. import json_bytes
from ._common import (
    INVALID,
    OK,
    UNUSABLE,
    CommandError,
    add_input_options,
    examine,
    load,
    parse_policy,
    print_diff,
    provider_of,
    repair_table,
    repairable,
    violation_dict,
    violation_line,
    write_stdout,
)


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "fix",
        help="write the repaired body of a payload; list the repairs",
        description="Repair the payload's transcript as the proxy would. The repaired body goes to stdout "
        "(or -o FILE), the repairs to stderr as a table (JSON lines with --json). Exit status: 0 when the "
        "repaired body is valid for the provider, 1 when it still is not (a rule Suture does not know "
        "yet), 2 when the input is unreadable or cannot be repaired.",
    )
    parser.add_argument("file", metavar="FILE", help="payload file; - reads stdin")
    add_input_options(parser)
    parser.add_argument(
        "--policy",
        action="append",
        metavar="KEY=VALUE",
        help="repair policy, as in the config's policy section (orphan_tool_call=drop...); repeatable",
    )
    parser.add_argument("-o", "--output", type=Path, metavar="OUT", help="write the repaired body here")
    parser.add_argument("--json", action="store_true", help="repairs as JSON lines on stderr")
    parser.add_argument(
        "--diff",
        action="store_true",
        help="print the transcript before and after, one line per message with changes marked, instead of "
        "the repaired body (which -o still writes)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        policy = parse_policy(args.policy)
        payload = load(args.file, args.api)
        repairable(payload)
        findings = examine(payload, provider_of(payload.api, args.provider), policy, args.model, args.beta)
    except CommandError as exc:
        print(f"suture: {exc}", file=sys.stderr)
        return UNUSABLE
    if findings.shape_error is not None or findings.repaired is None:
        print(f"suture: {payload.source}: not a valid {payload.api} body: {findings.shape_error}", file=sys.stderr)
        return UNUSABLE
    data = json_bytes.dumps(findings.repaired, indent=True) + b"\n"
    if args.output is not None:
        try:
            args.output.write_bytes(data)
        except OSError as exc:
            print(f"suture: {args.output}: cannot write: {exc.strerror or exc}", file=sys.stderr)
            return UNUSABLE
    elif not args.diff:
        write_stdout(data)
    if args.diff:
        changed = findings.repaired if findings.repairs else None
        print_diff(payload.body, changed, [r.as_dict() for r in findings.repairs], payload.api)
    if args.json:
        for repair in findings.repairs:
            sys.stderr.write(orjson.dumps(repair.as_dict()).decode() + "\n")
        for violation in findings.remaining:
            sys.stderr.write(orjson.dumps({"remaining": violation_dict(violation)}).decode() + "\n")
    else:
        if findings.repairs:
            sys.stderr.write(repair_table(findings.repairs) + "\n")
        else:
            sys.stderr.write("no repairs needed: the body is unchanged\n")
        if findings.remaining:
            sys.stderr.write(
                f"still {len(findings.remaining)} violation(s) for {findings.provider}, "
                "a rule Suture does not know yet:\n"
            )
            sys.stderr.writelines(f"  {violation_line(v)}\n" for v in findings.remaining)
    return INVALID if findings.remaining else OK
