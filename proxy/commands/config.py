"""``suture config check``: the settings ``suture serve`` would run with, where each came from, and
whether each upstream answers (``--probe``)."""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import ssl
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Any

_MASK = "(set, not shown)"


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "config",
        help="show the settings suture serve would run with, and check them",
        description="Settings come from the config file and SUTURE_* variables (env wins).",
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    check = commands.add_parser(
        "check",
        help="the merged settings, where each value came from, and their problems",
        description="Print every setting with its value and where it came from (default, file or environment), "
        "secrets never shown. Exit status: 0 when suture serve would start with them, 2 when not.",
    )
    check.add_argument("--config", type=Path, help="YAML settings file (default: config/suture.yaml as installed)")
    check.add_argument("--probe", action="store_true", help="connect to each upstream: reachable, TLS verified")
    check.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from sanitizer import Policy

    from ..config_reference import rows
    from ..settings import ConfigError, _read_yaml, default_config_path, load_settings

    path = args.config
    explicit = path is not None
    path = path or default_config_path()
    try:
        settings = load_settings(args.config)
        from ..app import build_app

        build_app(settings)  # what serve checks before it listens: keys, the CA file, AWS credentials
        data = _read_yaml(path, explicit=explicit) if path is not None else {}
    except ConfigError as exc:
        print(f"suture: config error: {exc}", file=sys.stderr)
        return 2
    print(f"config file: {path if path is not None else '(none: built-in defaults)'}")
    for key, env, _default, _description in rows():
        variable = env.split(" ")[0]
        if ".NAME." in key or "[]." in key:
            continue  # a field of an element of a mapping or list: shown with its container
        parts = key.split(".")
        value = _value(settings, parts)
        if value is None and parts[0] == "policy":
            value = getattr(Policy(), parts[1])  # unset policy fields keep the sanitizer's defaults
        if variable and variable in os.environ:
            source = f"environment ({variable})"
        elif _in(data, parts):
            source = "file"
        else:
            source = "default"
        shown = _MASK if value is not None and _secret(parts) else _show(value)
        print(f"{key} = {shown}  [{source}]")
    if args.probe:
        return 0 if asyncio.run(_probe_all(settings)) else 2
    return 0


def _secret(parts: list[str]) -> bool:
    return parts[-1] in ("upstream_api_key", "client_api_key") or parts == ["upstream_proxy"]


def _value(settings: Any, parts: list[str]) -> Any:
    value = settings
    for part in parts:
        value = getattr(value, part, None) if not isinstance(value, dict) else value.get(part)
    return value


def _in(data: Any, parts: list[str]) -> bool:
    for part in parts:
        if not isinstance(data, dict) or part not in data:
            return False
        data = data[part]
    return True


def _show(value: Any) -> str:
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    if isinstance(value, tuple | list):
        value = [v.model_dump(mode="json") if hasattr(v, "model_dump") else v for v in value]
    return str(value)


async def _probe_all(settings: Any) -> bool:
    from .. import provider_table
    from ..upstreams.native import upstream_ssl_context

    context = upstream_ssl_context(settings.upstream_ca_file)
    targets = [
        (provider.name, settings.route(provider.name).upstream)
        for provider in provider_table.providers()
        if settings.route(provider.name).serves()
    ]
    targets += [(f"upstreams.{name}", cfg.base_url) for name, cfg in settings.upstreams.items() if cfg.base_url]
    if settings.upstream_proxy is not None:
        print("probe: an egress proxy is configured (upstream_proxy); probing the upstreams directly")
    results = await asyncio.gather(*(_probe(url, context) for _, url in targets))
    for (name, url), result in zip(targets, results, strict=True):
        print(f"probe {name} {url}: {result}")
    return all(result.startswith("reachable") for result in results)


async def _probe(url: str, context: ssl.SSLContext) -> str:
    parts = urllib.parse.urlsplit(url)
    secure = parts.scheme == "https"
    host, port = parts.hostname or "", parts.port or (443 if secure else 80)
    started = time.perf_counter()
    try:
        tls: dict[str, Any] = {"ssl": context, "server_hostname": host} if secure else {}
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port, **tls), timeout=5)
    except TimeoutError:
        return "unreachable (no connection within 5 s)"
    except ssl.SSLCertVerificationError as exc:
        return f"unreachable (TLS certificate not trusted: {exc.verify_message})"
    except socket.gaierror as exc:
        # getaddrinfo's errno (-2) is not one os.strerror knows: "Unknown error -2".
        return f"unreachable: the host name {host} could not be resolved (DNS: {exc.strerror})"
    except OSError as exc:
        # asyncio's own text for a refused connection is "Connect call failed (...)": the errno says it.
        return f"unreachable ({os.strerror(exc.errno) if exc.errno else type(exc).__name__})"
    writer.close()
    took = (time.perf_counter() - started) * 1000
    return f"reachable in {took:.0f} ms{', TLS verified' if secure else ''}"
