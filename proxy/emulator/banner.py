"""What ``suture emulate`` prints before it serves: each API's paths, the base URL an SDK wants,
and the keys it takes."""

from __future__ import annotations

import textwrap

from .app import DIALECTS, EmulatorConfig

_WIDTH = 100


def _wrap(text: str, width: int, *, initial_indent: str = "", subsequent_indent: str = "") -> list[str]:
    # Paths and header names stay whole.
    return textwrap.wrap(
        text,
        width,
        initial_indent=initial_indent,
        subsequent_indent=subsequent_indent,
        break_long_words=False,
        break_on_hyphens=False,
    )


def banner(config: EmulatorConfig, host: str, port: int) -> str:
    """The start-up text for an emulator built from ``config`` listening on ``host:port``."""
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}"
    chat = sorted(p.split("/")[1] for p in DIALECTS if p.endswith("/v1/chat/completions") and p.count("/") == 4)
    responses = sorted(p.split("/")[1] for p in DIALECTS if p.endswith("/v1/responses") and p.count("/") == 3)
    shape = (
        f"{'OpenAI' if config.provider == 'openai' else 'Anthropic'}'s shape (--provider {config.provider})"
        if config.provider is not None
        else "the shape of the client that asks (OpenAI's or Anthropic's)"
    )
    rows = [
        ("OpenAI Chat", "POST /v1/chat/completions"),
        ("OpenAI Responses", "POST /v1/responses (and its WebSocket mode)"),
        ("OpenAI embeddings", "POST /v1/embeddings"),
        ("OpenAI files", "/v1/files, /v1/files/{file_id} and its /content, kept in memory"),
        ("Anthropic Messages", "POST /v1/messages"),
        (
            "Gemini",
            "POST /v1beta/models/{model}:generateContent and :streamGenerateContent "
            "(also under /v1, and as Vertex AI serves them)",
        ),
        ("Gemini OpenAI-compat", "POST /v1beta/openai/chat/completions"),
        ("Bedrock Converse", "POST /model/{modelId}/converse and /model/{modelId}/converse-stream"),
        ("Named profiles", f"POST /{{provider}}/v1/chat/completions: {', '.join(chat)}"),
        ("", f"POST /{{provider}}/v1/responses: {', '.join(responses)}"),
        ("Models", f"GET /v1/models and /v1/models/{{model}} in {shape}, as is an unknown path's 404"),
    ]
    lines = [
        f"suture emulate: every provider API on {url}, "
        + ("no key needed" if not config.require_api_key else "any key accepted"),
        "A broken transcript gets the provider's own 400, a sound one a scripted reply.",
    ]
    for name, paths in rows:
        lines += _wrap(paths, _WIDTH, initial_indent=f"  {name:<22}", subsequent_indent=" " * 26)
    lines += _wrap(
        f"Base URLs: {url}/v1 for OpenAI SDKs; {url} for Anthropic's and Google's, and as Bedrock's endpoint_url.",
        _WIDTH,
        subsequent_indent="  ",
    )
    if config.require_api_key:
        lines += _wrap(
            "Keys: any value is accepted, in each API's own header (Authorization: Bearer, x-api-key, "
            "x-goog-api-key; any SigV4 signature for Bedrock); only a request without one is refused, "
            "as the real APIs refuse it.",
            _WIDTH,
            subsequent_indent="  ",
        )
    if config.record_path is not None:
        lines.append(f"Recording every request to {config.record_path}")
    return "\n".join(lines) + "\n"
