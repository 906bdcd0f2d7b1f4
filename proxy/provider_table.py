"""The native routes: one row per endpoint Suture repairs, and one per provider they reach.

Everything that differs between providers is a field here, read by the code that needs it:
Suture's paths and the upstream's, the wire format, where a client's key may be, how Suture's own
key is sent, which query parameters are stripped, the shape of Suture's own errors, the settings
section (``openai:``, ``SUTURE_OPENAI_*``) and ``suture replay``'s key variable. A provider
Suture does not know gets a native route by adding rows here (see CONTRIBUTING.md); which repair
and validator rules bind its bodies comes from the core's provider table (``sanitizer.providers``)
through :attr:`Provider.rules`.

This module imports nothing from the server side: the settings, the CLI and the payload reader
read it too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

from sanitizer import Api
from sanitizer.providers import accepts, binding

UpstreamKey = Literal["bearer", "x-api-key", "x-goog-api-key", "sigv4"]
"""How Suture's own upstream key is sent: ``Authorization: Bearer``, an ``x-api-key`` or
``x-goog-api-key`` header, or an AWS SigV4 signature made from Suture's AWS credentials."""


class NotServed(ValueError):
    """A path a templated route does not serve; ``str(e)`` is the 404's message. ``other_method``:
    the path names another method of the provider's API (Gemini's embedContent), which passes
    through; otherwise it names the route's own method with an id that is not one (refused)."""

    def __init__(self, message: str, *, other_method: bool = False) -> None:
        super().__init__(message)
        self.other_method = other_method


@dataclass(frozen=True)
class Provider:
    """One upstream provider with native routes: one settings section, one set of credentials."""

    name: str
    """The settings section (``openai:``) and its variables (``SUTURE_OPENAI_*``); the label of its
    metrics and log lines."""
    default_upstream: str
    """The base URL its paths are appended to, unless configured. ``{region}`` is filled from the
    section's ``region`` (Bedrock)."""
    errors: Api
    """The wire format of the errors Suture answers itself on this provider's paths."""
    upstream_key: UpstreamKey
    client_key_headers: tuple[str, ...] = ("x-api-key", "authorization")
    """Where a client's key for Suture may be, in order; ``authorization`` is read as a Bearer token."""
    key_query: str | None = None
    """A query parameter that may hold a key (Google's SDKs send ``?key=``): a client's key for
    Suture is read from it, and it is stripped before forwarding when Suture holds its own key."""
    recognised_by: tuple[str, ...] = ()
    """Path prefixes and request headers that say a request for no endpoint speaks this provider,
    so its 404 comes in this provider's shape. The first provider is the fallback."""
    key_env: str = ""
    """The environment variable ``suture replay`` reads this provider's key from."""
    rules: str = ""
    """The provider name the core's provider table knows (``sanitize(provider=...)``); by default ``name``."""
    passthrough: tuple[str, ...] = ()
    """Path prefixes of the provider's API whose other requests (embeddings, files, batches...)
    are relayed as they are, unrepaired (``passthrough: true``)."""
    base_path: str = ""
    """The part of Suture's paths that the provider's base URL already ends in: OpenAI's ends in
    ``/v1``, so Suture's ``/v1/embeddings`` is the upstream's ``{base URL}/embeddings``."""
    otel_name: str = ""
    """Its ``gen_ai.provider.name`` in traces (the OpenTelemetry GenAI conventions' well-known
    value); by default ``name``."""

    @property
    def core_name(self) -> str:
        return self.rules or self.name


@dataclass(frozen=True)
class Route:
    """One endpoint Suture repairs: a POST of ``api`` bodies, sent on to ``provider``."""

    name: str
    """The metrics label of templated paths, and the row's name in the docs."""
    paths: tuple[str, ...]
    """Suture's paths, in Starlette's syntax (``{model_id:path}``)."""
    provider: Provider
    api: Api
    upstream_path: str | None
    """Appended to the upstream's base URL; None: the client's own path, which names the model."""
    routed: bool = False
    """The model-name route table (``routes:``) may send these requests to another upstream."""
    model_of_path: Callable[[Mapping[str, str]], str | None] | None = None
    """For a templated path: the model it names (None: none), or :class:`NotServed`."""
    api_markers: tuple[str, ...] = ()
    """How a logged request's path gives its format away (``suture check`` on an HTTP dump),
    lowercase; by default :attr:`endpoint`."""
    otel_operation: str | None = "chat"
    """Its ``gen_ai.operation.name`` in traces (the conventions' well-known values); None for an
    operation they do not name (counting tokens)."""

    @property
    def endpoint(self) -> str | None:
        """The upstream path after an SDK's base URL, whether or not that base URL ends in ``/v1``
        (``suture replay --to`` takes either)."""
        return None if self.upstream_path is None else self.upstream_path.removeprefix("/v1")

    @cached_property
    def rules_provider(self) -> str | None:
        """The provider to pass to ``sanitize``/``validate``: None when it is the format's own."""
        own = binding(self.api, None).provider
        return None if self.provider.core_name == own else self.provider.core_name

    @property
    def markers(self) -> tuple[str, ...]:
        return self.api_markers or ((self.endpoint.lower(),) if self.endpoint else ())


# Model ids are checked (decoded) before the client's raw path is appended to the upstream's URL,
# so no '..' or '/' can walk the request to another upstream path.
_GEMINI_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
GEMINI_METHODS = frozenset({"generateContent", "streamGenerateContent"})
_BEDROCK_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/+-]{0,2047}")


def _gemini_model(params: Mapping[str, str]) -> str:
    # Gemini names the model and the method in one path segment: models/{model}:{method}.
    model, _, method = params["rest"].rpartition(":")
    if method not in GEMINI_METHODS or not _GEMINI_MODEL.fullmatch(model):
        raise NotServed(
            "Suture serves models/{model}:generateContent and :streamGenerateContent only",
            other_method=method not in GEMINI_METHODS,
        )
    # Some repairs depend on it (Gemini 3's thought signatures): the body does not name it.
    return model


def _bedrock_model(params: Mapping[str, str]) -> str:
    model_id = params["model_id"]
    if not _BEDROCK_MODEL.fullmatch(model_id) or ".." in model_id.split("/"):
        raise NotServed("not a Bedrock model id")
    # Some repairs depend on it (Llama's tool uses, alone in their turn): the body does not name it.
    return model_id


OPENAI = Provider(
    "openai",
    "https://api.openai.com/v1",
    errors="openai-chat",
    upstream_key="bearer",
    key_env="OPENAI_API_KEY",
    passthrough=("/v1/",),
    base_path="/v1",
)
ANTHROPIC = Provider(
    "anthropic",
    "https://api.anthropic.com",
    errors="anthropic-messages",
    upstream_key="x-api-key",
    recognised_by=("/v1/messages", "anthropic-version", "x-api-key"),
    key_env="ANTHROPIC_API_KEY",
    passthrough=("/v1/",),
)
GEMINI = Provider(
    "gemini",
    "https://generativelanguage.googleapis.com",
    errors="gemini",
    upstream_key="x-goog-api-key",
    # Google's SDKs send their key as x-goog-api-key, or as ?key= in the URL.
    client_key_headers=("x-api-key", "x-goog-api-key", "authorization"),
    key_query="key",
    recognised_by=("/v1beta/", "/upload/", "x-goog-api-key"),
    key_env="GEMINI_API_KEY",
    passthrough=("/v1beta/", "/v1/", "/upload/"),
    otel_name="gcp.gemini",
)
BEDROCK = Provider(
    "bedrock",
    "https://bedrock-runtime.{region}.amazonaws.com",
    errors="bedrock-converse",
    # A repaired body breaks the client's signature: Suture signs with its own AWS credentials.
    upstream_key="sigv4",
    recognised_by=("/model/",),
    passthrough=("/model/",),
    otel_name="aws.bedrock",
)

# OpenAI's conventional base URL ends in /v1, Anthropic's does not (each SDK's own convention,
# so a base URL can be copied from either).
ROUTES: tuple[Route, ...] = (
    Route("chat", ("/v1/chat/completions",), OPENAI, "openai-chat", "/chat/completions", routed=True),
    Route("responses", ("/v1/responses",), OPENAI, "openai-responses", "/responses", routed=True),
    Route("messages", ("/v1/messages",), ANTHROPIC, "anthropic-messages", "/v1/messages", routed=True),
    Route(
        "count_tokens",
        ("/v1/messages/count_tokens",),
        ANTHROPIC,
        "anthropic-messages",
        "/v1/messages/count_tokens",
        otel_operation=None,
    ),
    Route(
        "gemini",
        # google-genai calls /v1 by default, /v1beta when asked (and the REST docs use v1beta).
        ("/v1/models/{rest:path}", "/v1beta/models/{rest:path}"),
        GEMINI,
        "gemini",
        None,
        model_of_path=_gemini_model,
        api_markers=(":generatecontent", ":streamgeneratecontent"),
        otel_operation="generate_content",
    ),
    Route(
        "bedrock",
        ("/model/{model_id:path}/converse", "/model/{model_id:path}/converse-stream"),
        BEDROCK,
        "bedrock-converse",
        None,
        model_of_path=_bedrock_model,
        api_markers=("/converse", "/converse-stream"),
    ),
)


def providers(routes: tuple[Route, ...] | None = None) -> tuple[Provider, ...]:
    """The providers of ``routes`` (by default :data:`ROUTES`), each once, in order."""
    return tuple({route.provider.name: route.provider for route in routes or ROUTES}.values())


def provider(name: str) -> Provider:
    """The provider called ``name``; KeyError if none is."""
    for known in providers():
        if known.name == name:
            return known
    raise KeyError(name)


def check(routes: tuple[Route, ...]) -> None:
    """Raise ValueError if the rows contradict each other or the core's provider table."""
    seen_paths: set[str] = set()
    seen_names: set[str] = set()
    by_name: dict[str, Provider] = {}
    for route in routes:
        if route.name in seen_names:
            raise ValueError(f"two routes are named {route.name!r}")
        seen_names.add(route.name)
        if by_name.setdefault(route.provider.name, route.provider) != route.provider:
            raise ValueError(f"two different providers are named {route.provider.name!r}")
        if not accepts(route.api, route.provider.core_name):
            raise ValueError(
                f"route {route.name!r}: the core's provider table has no {route.provider.core_name!r} for {route.api}"
            )
        if not accepts(route.provider.errors, route.provider.core_name):
            raise ValueError(
                f"provider {route.provider.name!r}: its errors take the shape of {route.provider.errors}, "
                f"for which the core's provider table has no {route.provider.core_name!r}"
            )
        if (route.upstream_path is None) != (route.model_of_path is not None):
            raise ValueError(
                f"route {route.name!r}: a route forwards the client's path exactly when the path names the model"
            )
        for path in route.paths:
            if path in seen_paths:
                raise ValueError(f"two routes serve {path}")
            seen_paths.add(path)


check(ROUTES)
