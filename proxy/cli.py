"""The ``suture`` command. Each subcommand is one ``_add_*`` function registered in ``COMMANDS``."""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import socket
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .commands import captures, check, config, fix, profiles, replay

if TYPE_CHECKING:
    from .settings import Settings

Handler = Callable[[argparse.Namespace], int]
# uvicorn's httptools protocol with a bound on request heads (an import string: workers load it too).
HTTP_PROTOCOL = "proxy.server_protocol:SutureHttpProtocol"


def _add_serve(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "serve",
        help="run the repairing proxy (OpenAI- and Anthropic-compatible)",
        description="Run the proxy. Settings come from the config file and SUTURE_* variables (env wins); "
        "--host and --port win over both.",
    )
    parser.add_argument("--config", type=Path, help="YAML settings file (default: config/suture.yaml as installed)")
    parser.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port to listen on (default 8787)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes sharing the port (default 1)")
    parser.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from .app import build_app
    from .logs import configure_logging
    from .server import GracefulServer
    from .settings import ConfigError, load_settings

    if args.port is not None and not 0 <= args.port <= 65535:
        print(f"suture: --port must be between 0 and 65535, not {args.port}", file=sys.stderr)
        return 2
    if args.workers < 1:
        print(f"suture: --workers must be at least 1, not {args.workers}", file=sys.stderr)
        return 2
    try:
        settings = load_settings(args.config)
        overrides = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
        if overrides:
            settings = settings.model_copy(update=overrides)
        app = build_app(settings)
    except ConfigError as exc:
        print(f"suture: config error: {exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.log_format)
    _say_what_runs(settings, args.config)
    try:
        sock = _listening_socket(settings.host, settings.port)
    except OSError as exc:
        print(f"suture: cannot listen on {settings.host}:{settings.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    if args.workers > 1:
        return _serve_workers(args, settings, sock)
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from .multiproc import clear

        clear(os.environ["PROMETHEUS_MULTIPROC_DIR"])  # one worker, the operator's directory: a fresh start
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_config=None,
        http=HTTP_PROTOCOL,
        ws_max_size=settings.max_body_bytes,  # a WebSocket message is a request body (responses_socket.py)
        access_log=False,  # Suture writes its own access line, as JSON
        server_header=False,  # the upstream's `server` header is relayed
        proxy_headers=False,  # X-Forwarded-* are the client's claims, not facts
        timeout_graceful_shutdown=settings.shutdown_grace_seconds,
    )
    server = GracefulServer(config)
    server.run(sockets=[sock])
    return 0 if server.started else 3  # uvicorn's own status for a server that could not start


def _listening_socket(host: str, port: int) -> socket.socket:
    """The server's socket, bound here so that a port already taken is one line, not a traceback."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
        sock.set_inheritable(True)  # the workers of --workers N accept on it too
    except OSError:
        sock.close()
        raise
    return sock


def _say_what_runs(settings: Settings, config: Path | None) -> None:
    import logging

    from .logs import log
    from .settings import default_config_path
    from .startup import describe, keys_without_client_key, unknown_variables

    logger = logging.getLogger("suture")
    path = config or default_config_path()
    log(logger, logging.INFO, "starting", **describe(settings, path, version()))
    for name in keys_without_client_key(settings):
        log(
            logger,
            logging.WARNING,
            f"Suture holds {name}'s upstream key and asks its clients for none: whatever can reach "
            f"{settings.host}:{settings.port} can spend it (web pages cannot: browsers' requests are refused). "
            f"Set SUTURE_{name.upper()}_CLIENT_API_KEY to require a key",
            provider=name,
        )
    for name, close in unknown_variables():
        log(logger, logging.WARNING, f"{name} names no setting and is ignored; did you mean {close}?", variable=name)


def _serve_workers(args: argparse.Namespace, settings: Settings, sock: socket.socket) -> int:
    """N processes on one socket, each with its own app built by ``proxy.server:app_from_env``.

    Suture keeps no state between requests, so any worker can take any request.
    """
    import os

    import uvicorn

    from .multiproc import Supervisor, metrics_directory
    from .server import WORKER_CONFIG_ENV

    os.environ[WORKER_CONFIG_ENV] = str(args.config or "")
    config = uvicorn.Config(
        "proxy.server:app_from_env",
        factory=True,
        workers=args.workers,
        host=settings.host,
        port=settings.port,
        log_config=None,
        http=HTTP_PROTOCOL,
        ws_max_size=settings.max_body_bytes,
        access_log=False,
        server_header=False,
        proxy_headers=False,
        timeout_graceful_shutdown=settings.shutdown_grace_seconds,
    )
    # Each worker counts in files of its own there; a scrape of any worker adds them all up.
    with metrics_directory() as metrics_dir:
        supervisor = Supervisor(config, sockets=[sock], metrics_dir=metrics_dir)
        supervisor.run()
    failed = any(process.exitcode == 3 for process in supervisor.processes)
    return 3 if failed else 0


def _add_emulate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "emulate",
        help="run a strict fake of every provider's API (for tests and demos)",
        description="Serve a strict emulator of the providers' APIs, all on one port: OpenAI Chat and "
        "Responses, embeddings and files, Anthropic Messages, Gemini, Bedrock Converse and the named "
        "OpenAI-compatible profiles (/{provider}/v1/...). It answers a broken transcript with the provider's "
        "own 400, accepts any API key (but not none), and can record every request it receives. "
        "It prints which API is served on which path as it starts.",
    )
    parser.add_argument(
        "--provider",
        choices=["openai", "anthropic"],
        help="answer GET /v1/models and unknown paths as this provider, whatever the client (default: in the "
        "shape of the client that asks, OpenAI's or Anthropic's); every API's routes are served either way",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8788, help="port to listen on (default 8788)")
    parser.add_argument("--record", type=Path, help="append each request received to this JSON-lines file")
    parser.add_argument("--stream-delay", type=float, default=0.0, help="seconds between streamed events (default 0)")
    parser.add_argument(
        "--extra-rules",
        type=Path,
        help="a JSON list of rules to enforce beyond the provider's known ones (see proxy/emulator/extra_rules.py)",
    )
    parser.add_argument(
        "--enforce",
        metavar="CODES",
        default="",
        help="comma-separated violation codes of other OpenAI-compatible providers (groq.X5,fireworks.extra-input...) "
        "that /v1/chat/completions refuses too: an upstream Suture has no profile for",
    )
    parser.set_defaults(handler=_emulate)


def _emulate(args: argparse.Namespace) -> int:
    from .emulator import main_emulate
    from .emulator.enforced import check_codes
    from .emulator.extra_rules import load_extra_rules

    try:
        extra = load_extra_rules(args.extra_rules) if args.extra_rules is not None else ()
        enforce = check_codes(tuple(c.strip() for c in args.enforce.split(",") if c.strip()))
    except ValueError as exc:
        print(f"suture emulate: {exc}", file=sys.stderr)
        return 2
    main_emulate(args.provider, args.host, args.port, args.record, args.stream_delay, extra, enforce)
    return 0


def _add_rules(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "rules",
        help="print the repair-rule reference (what, why, example, safety)",
        description="Print the repair-rule reference, generated from the rules' own documentation: every "
        "rule's, or those of the CODEs given.",
    )
    parser.add_argument("codes", nargs="*", metavar="CODE", help="a rule's code (TP001, tp001): print its section only")
    parser.add_argument(
        "--list", action="store_true", help="print instead one line per rule: its code, name and what it repairs"
    )
    parser.add_argument(
        "--violations",
        action="store_true",
        help="print instead every error the validator reports: its providers, message, source, and the "
        "rules that repair it (or why none can)",
    )
    parser.add_argument(
        "--providers",
        action="store_true",
        help="print instead every provider a body can be bound for, and the rules bound for it",
    )
    parser.set_defaults(handler=_rules)


_LIST_WIDTH = 110


def _rules(args: argparse.Namespace) -> int:
    import difflib

    from sanitizer.rules import RULES, providers_reference, reference, rule_reference, summary, violations_reference

    by_code = {rule.code: rule for rule in RULES}
    if args.codes:
        unknown = [code for code in args.codes if code.upper() not in by_code]
        for code in unknown:
            close = difflib.get_close_matches(code.upper(), sorted(by_code), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else " (`suture rules --list` lists them)"
            print(f"suture rules: no rule {code}{hint}", file=sys.stderr)
        if unknown:
            return 2
        sys.stdout.write("\n".join(rule_reference(by_code[code.upper()]) for code in args.codes))
    elif args.list:
        width = max(len(rule.name) for rule in RULES)
        for code in sorted(by_code):
            line = f"{code} {by_code[code].name:<{width}}  {summary(by_code[code])}"
            # One line each, to scan: `suture rules CODE` has the rest.
            print(line if len(line) <= _LIST_WIDTH else line[: _LIST_WIDTH - 1] + "…")
    elif args.providers:
        sys.stdout.write(providers_reference())
    else:
        sys.stdout.write(violations_reference() if args.violations else reference())
    return 0


def _add_docs(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "docs",
        help="write or check the docs' sections generated from the code",
        description="The rule, route, provider and configuration references in the docs are generated "
        "from the code, each between <!-- NAME:begin --> and <!-- NAME:end --> markers. --write rewrites "
        "them in place; --check writes nothing and exits 1 listing each stale or missing section.",
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="rewrite every stale section in place")
    action.add_argument("--check", action="store_true", help="exit 1 listing each stale or missing section")
    parser.add_argument(
        "--root",
        type=Path,
        help="the project's directory (default: the checkout Suture runs from, else the current directory)",
    )
    parser.set_defaults(handler=_docs)


def _docs(args: argparse.Namespace) -> int:
    from .commands import docs

    return docs.run(args)


def _add_demo(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "demo",
        help="see a repair, offline: nothing to configure, no key, no network",
        description="Start the strict emulator and Suture (its page on) on loopback ports, send an "
        "interrupted agent's transcript through the official OpenAI and Anthropic SDKs, straight to the "
        "emulator (the provider's 400) and through Suture (200), and print the transcript before and after "
        "and the repairs; then serve until Ctrl-C, so an agent can be pointed at it. Reads no config file "
        "and no SUTURE_* variable; the key it sends is a dummy.",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not serve afterwards: exit 0 when both SDKs got their 200 through Suture after a repair, "
        "1 otherwise with the reason",
    )
    parser.add_argument("--port", type=int, help="Suture's port (default: a free one)")
    parser.set_defaults(handler=_demo)


def _demo(args: argparse.Namespace) -> int:
    from .commands import demo

    if args.port is not None and not 1 <= args.port <= 65535:
        print(f"suture demo: --port must be between 1 and 65535, not {args.port}", file=sys.stderr)
        return 2
    return demo.run(check=args.check, port=args.port)


COMMANDS = (
    _add_demo,
    _add_serve,
    _add_emulate,
    _add_rules,
    check.add,
    fix.add,
    replay.add,
    captures.add,
    profiles.add,
    config.add,
    _add_docs,
)


def version() -> str:
    """The installed distribution's version; a checkout that was never installed says so."""
    try:
        return importlib.metadata.version("suture")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="suture",
        description="Suture repairs LLM agent transcripts in flight so providers stop answering 400.",
    )
    parser.add_argument("--version", action="version", version=f"suture {version()}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``suture`` console script."""
    args = build_parser().parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except BrokenPipeError:
        # The reader went away (`| head`): what is left is nobody's, and no traceback either.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
