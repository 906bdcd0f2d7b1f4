"""``suture profiles list|show|forget|export``: the fixes Suture learnt from upstreams' refusals."""

from __future__ import annotations

import argparse
import fnmatch
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import yaml

from ..learnt import Learnt, LearntProfiles, ProfilesFileError
from ._common import OK, fail, write_stdout


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "profiles",
        help="list, show, forget or export the fixes learnt from refusals",
        description="Once a refusal of an upstream was repaired, Suture applies that fix to later requests to "
        "the same upstream and model before their first attempt. These are kept in learnt/profiles.json (the "
        "`learning.file` setting, else the capture directory); a running Suture sees changes within a second.",
    )
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="one line per learnt fix")
    show = actions.add_parser("show", help="one learnt fix, whole (its id or a unique prefix of it)")
    show.add_argument("id", metavar="ID")
    forget = actions.add_parser(
        "forget", help="forget learnt fixes: by id, by upstream (and models), or all; the next refusal teaches again"
    )
    forget.add_argument("ids", metavar="ID", nargs="*", help="ids (or unique prefixes) of the fixes to forget")
    forget.add_argument("--upstream", help="every fix learnt from this upstream")
    forget.add_argument("--models", help="with --upstream: only those for these models (a glob)")
    forget.add_argument("--all", action="store_true", help="every learnt fix")
    export = actions.add_parser(
        "export",
        help="the learnt fixes as YAML sections to paste into the config (`fixes:`), where they never expire",
    )
    export.add_argument("--upstream", help="only this upstream's")
    for each in (listing, show, forget, export):
        each.add_argument("--file", type=Path, help="the profiles file (default: from the settings)")
        each.add_argument("--config", type=Path, help="YAML settings file to find the profiles file from")
    listing.set_defaults(handler=run_list)
    show.set_defaults(handler=run_show)
    forget.set_defaults(handler=run_forget)
    export.set_defaults(handler=run_export)


def _open(args: argparse.Namespace) -> tuple[LearntProfiles, Any]:
    """The profiles file the arguments or the settings name, and the settings (None with --file)."""
    from ..settings import ConfigError, load_settings

    settings = None
    path = args.file
    if path is None or args.config is not None:
        try:
            settings = load_settings(args.config)
        except ConfigError as exc:
            raise LookupError(f"config error: {exc}") from None
    if path is None:
        assert settings is not None
        path = settings.learning.path(settings.capture.dir)
        if path is None:
            raise LookupError(
                "learnt fixes are kept in memory only (neither learning.file nor capture.dir is set): give --file"
            )
    try:
        return LearntProfiles(path, expire_seconds=_expire_seconds(settings)), settings
    except ProfilesFileError as exc:
        raise LookupError(str(exc)) from None


def _expire_seconds(settings: Any) -> float:
    return settings.learning.expire_days * 86400 if settings is not None else 30 * 86400


def run_list(args: argparse.Namespace) -> int:
    try:
        profiles, settings = _open(args)
    except LookupError as exc:
        return fail(str(exc))
    entries = profiles.entries()
    if not entries:
        print(f"no learnt fixes in {profiles.path}", file=sys.stderr)
        return OK
    rows = [("ID", "UPSTREAM", "MODELS", "FIX", "LEARNT", "EXPIRES", "")]
    for entry in entries:
        note = "overridden by the configuration's fixes" if _stated_for(settings, entry) else ""
        rows.append(
            (
                entry.id,
                entry.upstream,
                entry.models,
                entry.lesson.label(),
                _day(entry.learnt_at),
                _day(entry.expires_at),
                note,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(6)]
    for row in rows:
        print("  ".join([*(c.ljust(w) for c, w in zip(row[:6], widths, strict=True)), row[6]]).rstrip())
    return OK


def run_show(args: argparse.Namespace) -> int:
    try:
        profiles, _ = _open(args)
        entry = _find(profiles.entries(include_expired=True), args.id)
    except LookupError as exc:
        return fail(str(exc))
    write_stdout(orjson.dumps(entry.as_dict(), option=orjson.OPT_INDENT_2) + b"\n")
    return OK


def run_forget(args: argparse.Namespace) -> int:
    chosen_by = [bool(args.ids), args.upstream is not None, args.all]
    if sum(chosen_by) != 1:
        return fail("forget what? give ids, --upstream NAME [--models GLOB], or --all (one of them)")
    if args.models is not None and args.upstream is None:
        return fail("--models goes with --upstream")
    try:
        profiles, _ = _open(args)
        chosen = _chooser(profiles, args)
        gone = profiles.forget(chosen)
    except (LookupError, ProfilesFileError) as exc:
        return fail(str(exc))
    for entry in gone:
        print(f"forgot {entry.id}  {entry.upstream}  {entry.models}  {entry.lesson.label()}")
    if not gone:
        print("nothing to forget", file=sys.stderr)
    return OK


def _chooser(profiles: LearntProfiles, args: argparse.Namespace) -> Callable[[Learnt], bool]:
    if args.all:
        return lambda entry: True
    if args.upstream is not None:
        models = args.models
        return lambda e: e.upstream == args.upstream and (models is None or fnmatch.fnmatchcase(e.models, models))
    everything = profiles.entries(include_expired=True)
    ids = {_find(everything, wanted).id for wanted in args.ids}
    return lambda entry: entry.id in ids


def run_export(args: argparse.Namespace) -> int:
    from .. import provider_table

    try:
        profiles, _ = _open(args)
    except LookupError as exc:
        return fail(str(exc))
    entries = [e for e in profiles.entries() if args.upstream is None or e.upstream == args.upstream]
    if not entries:
        return fail("no learnt fixes to export" + (f" for upstream {args.upstream!r}" if args.upstream else ""))
    sections = {provider.name for provider in provider_table.providers()}
    config: dict[str, Any] = {}
    for entry in entries:
        section = config.setdefault(entry.upstream, {}) if entry.upstream in sections else None
        if section is None:
            section = config.setdefault("upstreams", {}).setdefault(entry.upstream, {})
        fixes = section.setdefault("fixes", [])
        stated = next((f for f in fixes if f["models"] == entry.models), None)
        if stated is None:
            stated = {"models": entry.models, "apply": []}
            fixes.append(stated)
        stated["apply"].append(entry.lesson.as_dict())
    header = (
        "# Fixes Suture learnt from these upstreams' refusals (suture profiles export). Merged into the\n"
        "# config's sections of the same names, they apply to those models before the first attempt, never\n"
        "# expire, and replace what is learnt for them. A named upstream's section also needs its protocol\n"
        "# and base_url.\n"
    )
    print(header + yaml.safe_dump(config, sort_keys=False, allow_unicode=True), end="")
    return OK


def _stated_for(settings: Any, entry: Learnt) -> bool:
    if settings is None:
        return False
    section = settings.upstreams.get(entry.upstream) or getattr(settings, entry.upstream, None)
    stated = getattr(section, "fixes", ())
    return any(fnmatch.fnmatchcase(entry.models, fix.models) for fix in stated)


def _find(entries: tuple[Learnt, ...], wanted: str) -> Learnt:
    found = [e for e in entries if e.id.startswith(wanted)] if wanted else []
    if len(found) == 1:
        return found[0]
    if not found:
        raise LookupError(f"no learnt fix with id {wanted!r} (suture profiles list shows them)")
    raise LookupError(f"{wanted!r} is the start of {len(found)} ids; give more of it")


def _day(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.gmtime(epoch))
