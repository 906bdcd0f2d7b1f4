"""``suture replay FILE --to URL``: send the original and the repaired body, show both answers."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import textwrap
from dataclasses import dataclass
from typing import Any

import orjson

from .. import json_bytes, provider_table
from ._common import (
    INVALID,
    OK,
    UNUSABLE,
    CommandError,
    add_input_options,
    examine,
    load,
    parse_policy,
    provider_of,
    repairable,
)

# Each format's endpoint after a base URL: the first route of the route table that serves it.
_ENDPOINTS: dict[str, str] = {}
for _route in provider_table.ROUTES:
    if _route.endpoint is not None:
        _ENDPOINTS.setdefault(_route.api, _route.endpoint)
_SHOWN_BYTES = 4096
_REDACTED = "[redacted]"


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "replay",
        help="send the original and the repaired body upstream; compare",
        description="Send the payload as captured and as Suture repairs it to URL (a provider, `suture "
        "emulate`, or a Suture proxy) and show both answers side by side. URL is a base URL as the SDKs "
        "take it (https://api.openai.com/v1, https://api.anthropic.com) or a full endpoint URL. Gemini and "
        "Bedrock need the full endpoint URL. The key comes from OPENAI_API_KEY, ANTHROPIC_API_KEY or "
        "GEMINI_API_KEY, or from --header (Bedrock: only through a Suture proxy, which signs); it is never "
        "printed. Exit status: 0 when the repaired request succeeded, 1 when not, 2 when the input is unusable.",
    )
    parser.add_argument("file", metavar="FILE", help="payload file; - reads stdin")
    parser.add_argument("--to", required=True, metavar="URL", help="where to send both requests")
    add_input_options(parser)
    parser.add_argument("--header", action="append", default=[], metavar="K:V", help="extra request header; repeatable")
    parser.add_argument("--policy", action="append", metavar="KEY=VALUE", help="repair policy; repeatable")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per request (default 120)")
    parser.add_argument("--json", action="store_true", help="both outcomes as one JSON object")
    parser.set_defaults(handler=run)


@dataclass
class Outcome:
    status: int | None
    reason: str
    body: str
    sent: bool = True


def target_url(base: str, api: str, path: str | None = None) -> str:
    """The endpoint URL for ``api`` under ``base``, following each SDK's base-URL convention."""
    import httpx

    url = httpx.URL(base)
    if url.scheme not in ("http", "https") or not url.host:
        raise CommandError(f"--to must be an http:// or https:// URL, not {base!r}")
    trimmed = base.rstrip("/")
    if url.path.rstrip("/") == "" and path:
        return trimmed + path
    endpoint = _ENDPOINTS.get(api)
    if endpoint is None:
        # Gemini's and Bedrock's paths name the model, which the body does not hold.
        if url.path.rstrip("/") == "":
            raise CommandError(f"--to must be the full endpoint URL for {api} (the path names the model)")
        return trimmed
    if trimmed.endswith(endpoint):
        return trimmed
    if trimmed.endswith("/v1"):
        return trimmed + endpoint
    # Anthropic's base URL has no /v1 and OpenAI's usually has: add it when it is missing.
    return trimmed + "/v1" + endpoint


def provider_at(url: str, api: str) -> provider_table.Provider | None:
    """The provider of the route table that ``url`` reaches with a body of ``api``: by its host
    (a provider's own), by its path (one of Suture's), or the format's first."""
    import httpx

    rows = [r for r in provider_table.ROUTES if r.api == api]
    parsed = httpx.URL(url)
    for row in rows:
        if parsed.host == httpx.URL(row.provider.default_upstream).host:
            return row.provider
    for row in rows:
        if parsed.path in row.paths:
            return row.provider
    return rows[0].provider if rows else None


def request_headers(api: str, safe: dict[str, str], extra: list[str], url: str = "") -> dict[str, str]:
    headers = {"content-type": "application/json", **safe}
    provider = provider_at(url, api)
    key = os.environ.get(provider.key_env, "") if provider is not None and provider.key_env else ""
    if key and provider is not None:
        if provider.upstream_key == "bearer":
            headers["authorization"] = f"Bearer {key}"
        elif provider.upstream_key != "sigv4":
            headers[provider.upstream_key] = key
    if api == "anthropic-messages":
        headers.setdefault("anthropic-version", "2023-06-01")
    for item in extra:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise CommandError(f"--header takes NAME:VALUE, not {name.strip()!r}...")
        headers[name.strip().lower()] = value.strip()
    return headers


def _secrets(headers: dict[str, str]) -> list[str]:
    out = []
    for name, value in headers.items():
        if name in ("authorization", "x-api-key", "api-key", "x-goog-api-key") and value:
            out += [value, value.partition(" ")[2]]
    return [s for s in out if len(s) >= 8]


def send(client: Any, url: str, headers: dict[str, str], body: dict[str, Any], secrets: list[str]) -> Outcome:
    import httpx

    # Read past what is shown by the longest secret: a key straddling the cut is still redacted whole.
    wanted = _SHOWN_BYTES + max((len(s.encode()) for s in secrets), default=0)
    try:
        with client.stream("POST", url, headers=headers, content=json_bytes.dumps(body)) as response:
            data = b""
            for chunk in response.iter_bytes():
                data += chunk
                if len(data) >= wanted:
                    break
            status, reason = response.status_code, response.reason_phrase
    except httpx.HTTPError as exc:
        return Outcome(None, f"no answer ({type(exc).__name__})", _redact(str(exc), secrets))
    text = _redact(data[:wanted].decode("utf-8", errors="replace"), secrets)
    return Outcome(status, reason, text[:_SHOWN_BYTES])


def _redact(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, _REDACTED)
    return text


def run(args: argparse.Namespace) -> int:
    import httpx

    try:
        policy = parse_policy(args.policy)
        payload = load(args.file, args.api)
        repairable(payload)
        findings = examine(payload, provider_of(payload.api, args.provider), policy, args.model, args.beta)
        if findings.repaired is None:
            raise CommandError(f"{payload.source}: not a valid {payload.api} body: {findings.shape_error}")
        url = target_url(args.to, payload.api, payload.path)
        headers = request_headers(payload.api, dict(payload.headers), args.header, url)
    except CommandError as exc:
        print(f"suture: {exc}", file=sys.stderr)
        return UNUSABLE
    secrets = _secrets(headers)
    with httpx.Client(timeout=args.timeout, trust_env=False, follow_redirects=False) as client:
        original = send(client, url, headers, payload.body, secrets)
        if findings.repairs:
            repaired = send(client, url, headers, findings.repaired, secrets)
        else:
            repaired = Outcome(original.status, original.reason, "(no repairs: the original was not sent again)", False)
    succeeded = repaired.status is not None and repaired.status < 400
    if args.json:
        sys.stdout.write(
            orjson.dumps(
                {
                    "url": url,
                    "api": payload.api,
                    "repairs": [r.as_dict() for r in findings.repairs],
                    "original": _outcome_dict(original),
                    "repaired": _outcome_dict(repaired),
                }
            ).decode()
            + "\n"
        )
    else:
        sys.stdout.write(side_by_side(url, len(findings.repairs), original, repaired))
    return OK if succeeded else INVALID


def _outcome_dict(o: Outcome) -> dict[str, Any]:
    return {"status": o.status, "reason": o.reason, "body": o.body, "sent": o.sent}


def side_by_side(url: str, repairs: int, original: Outcome, repaired: Outcome, width: int | None = None) -> str:
    """Both outcomes in two columns: status line, then the first part of each body."""
    width = width or shutil.get_terminal_size((120, 24)).columns
    column = max(30, (width - 3) // 2)

    def cell(o: Outcome) -> list[str]:
        head = f"{o.status} {o.reason}" if o.status is not None else o.reason
        text = " ".join(o.body.split())[:600]
        return [head, *textwrap.wrap(text, column)[:10]]

    left = ["original", *cell(original)]
    right = [f"repaired ({repairs} repair(s))", *cell(repaired)]
    lines = [f"POST {url}"]
    for i in range(max(len(left), len(right))):
        a = left[i] if i < len(left) else ""
        b = right[i] if i < len(right) else ""
        lines.append(f"{a.ljust(column)} | {b}".rstrip())
    return "\n".join(lines) + "\n"
