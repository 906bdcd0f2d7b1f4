"""``suture captures list|show|serve``: the requests the proxy captured (see ``capture`` in the config)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from .. import json_bytes
from ..capture import CaptureStore
from ._common import OK, UNUSABLE, print_diff, write_stdout


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "captures",
        help="list or show the requests the proxy captured",
        description="Look at the capture directory (the `capture.dir` setting). Each capture file is a "
        "valid input to `suture check`, `fix` and `replay`.",
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    listing = actions.add_parser(
        "list", help="one line per capture, oldest first; those repaired after a refusal come first"
    )
    show = actions.add_parser("show", help="print one capture (its id, a unique prefix of it, or its path)")
    show.add_argument("id", metavar="ID")
    show.add_argument(
        "--as-fixture",
        action="store_true",
        help="for a capture repaired after a refusal: a golden fixture skeleton for the rule it calls for",
    )
    show.add_argument(
        "--diff", action="store_true", help="the transcript before and after, one line per message, changes marked"
    )
    serve = actions.add_parser(
        "serve",
        help="the page of the captures, offline and read-only, on a loopback port",
        description="Serve Suture's page (the list, each transcript before and after) from a capture "
        "directory, read-only, on 127.0.0.1 only.",
    )
    serve.add_argument("--port", type=int, default=8789, help="loopback port (default 8789)")
    for each in (listing, show, serve):
        each.add_argument("--dir", type=Path, help="capture directory (default: capture.dir of the settings)")
        each.add_argument("--config", type=Path, help="YAML settings file to read capture.dir from")
    listing.set_defaults(handler=run_list)
    show.set_defaults(handler=run_show)
    serve.set_defaults(handler=run_serve)


def _store(args: argparse.Namespace) -> CaptureStore:
    from ..settings import ConfigError, load_settings

    directory = args.dir
    if directory is None:
        try:
            settings = load_settings(args.config)
        except ConfigError as exc:
            raise LookupError(f"config error: {exc}") from None
        directory = settings.capture.dir
        if directory is None:
            raise LookupError("capture is off (capture.dir is not set): give --dir")
    return CaptureStore(directory)


def run_list(args: argparse.Namespace) -> int:
    try:
        store = _store(args)
    except LookupError as exc:
        print(f"suture: {exc}", file=sys.stderr)
        return UNUSABLE
    rows = [("ID", "TIME", "ROUTE", "STATUS", "REPAIRS", "NOTE")]
    learnt: list[tuple[str, str, str, str, str, str]] = []
    for path in store.files():
        try:
            record = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError) as exc:
            rows.append((path.stem, "?", "?", "?", "?", f"unreadable: {exc}"))
            continue
        repairs = record.get("repairs") or []
        retries = record.get("rejection_repairs") or []
        repairs = repairs + [r for retry in retries for r in retry.get("repairs") or []]
        codes = ",".join(sorted({r.get("code", "?") for r in repairs})) or "-"
        note = ""
        if retries:
            strategies = ", ".join(str(r.get("strategy")) for r in retries)
            note = f"REPAIRED AFTER REFUSAL ({strategies}): a rule Suture does not have yet, see --as-fixture"
        elif record.get("unrepaired_rejection"):
            note = "UNREPAIRED REJECTION (a rule Suture does not know yet)"
        elif record.get("strict_rejection"):
            note = "rejected by strict mode; never sent upstream"
        row = (
            path.stem,
            str(record.get("timestamp", "?")),
            str(record.get("route", "?")),
            str(record.get("upstream_status", "?")),
            f"{len(repairs)} {codes}" if repairs else "0",
            note,
        )
        (learnt if retries else rows).append(row)
    rows[1:1] = learnt
    if len(rows) == 1:
        print(f"no captures in {store.directory}", file=sys.stderr)
        return OK
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        print("  ".join([*(c.ljust(w) for c, w in zip(row[:5], widths, strict=True)), row[5]]).rstrip())
    return OK


def run_show(args: argparse.Namespace) -> int:
    try:
        path = Path(args.id) if Path(args.id).is_file() else _store(args).find(args.id)
        data = path.read_bytes()
    except LookupError as exc:
        print(f"suture: {exc}", file=sys.stderr)
        return UNUSABLE
    except OSError as exc:
        print(f"suture: {args.id}: cannot read: {exc.strerror or exc}", file=sys.stderr)
        return UNUSABLE
    if args.as_fixture:
        try:
            data = _fixture(orjson.loads(data))
        except (orjson.JSONDecodeError, LookupError) as exc:
            print(f"suture: {args.id}: {exc}", file=sys.stderr)
            return UNUSABLE
    if args.diff:
        try:
            record = orjson.loads(data)
            repairs = [r for r in record.get("repairs") or () if isinstance(r, dict)]
            print_diff(record.get("original"), record.get("forwarded"), repairs, str(record.get("api")))
        except (orjson.JSONDecodeError, AttributeError):
            print(f"suture: {args.id}: not a capture file", file=sys.stderr)
            return UNUSABLE
        return OK
    write_stdout(data if data.endswith(b"\n") else data + b"\n")
    return OK


def _fixture(record: object) -> bytes:
    """A golden fixture skeleton (as tests/sanitizer/golden/ holds) for the rule a refusal calls for:
    the body the provider refused, the body it then took, and what it said."""
    retries = record.get("rejection_repairs") if isinstance(record, dict) else None
    if not isinstance(record, dict) or not retries:
        raise LookupError("not repaired after a refusal: no fixture to make")
    first = retries[0]
    refused = record.get("forwarded") or record.get("original")
    fixture = {
        "description": f"TODO: name the defect. The provider said: {first.get('provider_message')} "
        f"(repaired after the refusal by {first.get('strategy')})",
        "api": record.get("api"),
        "before": refused,
        "after": retries[-1].get("forwarded"),
        "repairs": [],
    }
    return json_bytes.dumps(fixture, indent=True)


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from ..browsers import BrowserGuard, guarded
    from ..learnt import LearntProfiles, ProfilesFileError
    from ..settings import IN_CAPTURE_DIR
    from ..ui.page import CaptureSource, build_page

    try:
        store = _store(args)
    except LookupError as exc:
        print(f"suture: {exc}", file=sys.stderr)
        return UNUSABLE
    if not store.directory.is_dir():
        print(f"suture: {store.directory}: no such directory", file=sys.stderr)
        return UNUSABLE
    print(f"suture: serving the captures of {store.directory} at http://127.0.0.1:{args.port}/", file=sys.stderr)
    # Loopback only, and no key: the captures are this machine's user's files, shown to them.
    # Not for web pages other than its own, nor for names rebound to 127.0.0.1 (proxy/browsers.py).
    try:
        # The fixes learnt beside these captures, read-only: a damaged file only hides that page.
        learnt = LearntProfiles(store.directory / IN_CAPTURE_DIR, expire_seconds=float("inf"))
    except ProfilesFileError as exc:
        print(f"suture: learnt fixes not shown: {exc}", file=sys.stderr)
        learnt = None
    page = guarded(build_page(CaptureSource(store), learnt=learnt), BrowserGuard("127.0.0.1"))
    uvicorn.run(page, host="127.0.0.1", port=args.port, log_level="warning")
    return OK
