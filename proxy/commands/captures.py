"""``suture captures list|show``: the requests the proxy captured (see ``capture`` in the config)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import orjson

from ..capture import CaptureStore
from ._common import OK, UNUSABLE, write_stdout


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "captures",
        help="list or show the requests the proxy captured",
        description="Look at the capture directory (the `capture.dir` setting). Each capture file is a "
        "valid input to `suture check`, `fix` and `replay`.",
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="one line per capture, oldest first")
    show = actions.add_parser("show", help="print one capture (its id, a unique prefix of it, or its path)")
    show.add_argument("id", metavar="ID")
    for each in (listing, show):
        each.add_argument("--dir", type=Path, help="capture directory (default: capture.dir of the settings)")
        each.add_argument("--config", type=Path, help="YAML settings file to read capture.dir from")
    listing.set_defaults(handler=run_list)
    show.set_defaults(handler=run_show)


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
    for path in store.files():
        try:
            record = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError) as exc:
            rows.append((path.stem, "?", "?", "?", "?", f"unreadable: {exc}"))
            continue
        repairs = record.get("repairs") or []
        codes = ",".join(sorted({r.get("code", "?") for r in repairs})) or "-"
        note = ""
        if record.get("unrepaired_rejection"):
            note = "UNREPAIRED REJECTION (a rule Suture does not know yet)"
        elif record.get("strict_rejection"):
            note = "rejected by strict mode; never sent upstream"
        rows.append(
            (
                path.stem,
                str(record.get("timestamp", "?")),
                str(record.get("route", "?")),
                str(record.get("upstream_status", "?")),
                f"{len(repairs)} {codes}" if repairs else "0",
                note,
            )
        )
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
    write_stdout(data if data.endswith(b"\n") else data + b"\n")
    return OK
