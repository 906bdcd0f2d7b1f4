"""Suture's settings: one YAML file plus ``SUTURE_*`` environment variables (env wins).

Every field below is one line of ``config/suture.yaml`` and one environment variable: a
top-level field ``port`` is ``SUTURE_PORT``; a field of a section, ``openai.upstream``, is
``SUTURE_OPENAI_UPSTREAM``. Settings are parsed once at start-up into immutable objects; the
request path only reads them.
"""

from __future__ import annotations

import base64
import difflib
import ipaddress
import os
import re
import sys
import typing
import urllib.parse
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    FilePath,
    SecretStr,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from sanitizer import Policy, PolicyError
from sanitizer.providers import ACCEPTED

from . import provider_table

Mode = Literal["repair", "report", "strict"]

MiB = 1024 * 1024


class ConfigError(Exception):
    """The configuration cannot be used; ``str(e)`` is one line meant for a human."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# What the upstream client (proxy/http1/) can use, checked here so that a URL it would refuse
# fails at start-up, not as a traceback in the lifespan or a 502 on every request: a host it can
# encode for DNS, TLS and the Host header (IDNA, then letters, digits, `-`, `_` and dots), a port
# it can connect to, and a path it sends as it stands (visible ASCII).
_HOST_NAME = re.compile(rb"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*\.?")
_REQUEST_PATH = re.compile(r"[!-~]*")
_PRINTABLE = re.compile(r"[ -~]+")


def _check_host_and_port(parts: urllib.parse.SplitResult, *, show_host: bool) -> None:
    host = parts.hostname or ""
    if ":" in host:
        try:
            ipaddress.IPv6Address(host)
            valid = "%" not in host  # a zone id: no resolver takes it in this form
        except ValueError:
            valid = False
    else:
        try:
            name = host.encode("idna")
        except UnicodeError:  # an empty label (a..b) or one over 63 characters
            name = b""
        valid = _HOST_NAME.fullmatch(name) is not None and len(name.rstrip(b".")) <= 253
    if not valid:
        raise ValueError(f"the host{f' {host!r}' if show_host else ''} is not a valid host name")
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:  # 0 would silently become the scheme's default port
        raise ValueError("the port must be a number from 1 to 65535")


def key_problem(key: str) -> str | None:
    """What makes ``key`` unusable as an API key, or None. Never quotes the key (a secret).

    An upstream key goes out in a header, and a client's key is compared as its header arrives,
    trimmed: a key file's last newline made every request a 502, or a 401.
    """
    if not key:
        return "is empty"
    if key != key.strip():
        return "has a space or line break at either end (a key file's last newline?)"
    if not _PRINTABLE.fullmatch(key):
        return "may hold only printable ASCII characters"
    return None


def _check_url(value: str) -> str:
    import httpx  # the URL grammar lives in httpx; settings stay importable without I/O

    try:
        url = httpx.URL(value)
        parts = urllib.parse.urlsplit(value)  # as proxy/upstream.py reads it
    except (httpx.InvalidURL, ValueError) as exc:
        raise ValueError(f"not a URL: {exc}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError("must be an absolute http:// or https:// URL")
    if url.userinfo or url.query or url.fragment:
        # A key in the URL would end up in error messages and logs: keys belong in upstream_api_key.
        raise ValueError("must not carry credentials, a query or a fragment")
    _check_host_and_port(parts, show_host=True)
    if not _REQUEST_PATH.fullmatch(parts.path):
        encoded = urllib.parse.quote(parts.path, safe="/%!$&'()*+,;=:@~")
        raise ValueError(f"the path must be ASCII without spaces; percent-encode it: {encoded}")
    return value.rstrip("/")


class RetrySettings(_Section):
    """A bounded retry of one upstream request, only while no byte of an answer reached the client.

    Generation is not idempotent, so nothing is retried unless a route asks: a connect error
    means the request never arrived; a 429 or 5xx answer is dropped unread before the next try.
    """

    attempts: int = Field(default=1, ge=1, le=10, description="Tries in all, the first included; 1 never retries.")
    # Not `on`: YAML reads a bare `on` as the boolean true.
    when: tuple[Literal["connect", "429", "5xx"], ...] = Field(
        default=("connect", "429", "5xx"), description="What is retried: connect errors, 429 and 5xx answers."
    )
    backoff: float = Field(
        default=0.5, ge=0, le=30, description="Seconds before the second try, doubled for each next one."
    )

    @field_validator("when", mode="before")
    @classmethod
    def _statuses_as_text(cls, value: Any) -> Any:
        # `when: [connect, 429]` in YAML gives the number 429.
        return [str(v) if isinstance(v, int) else v for v in value] if isinstance(value, list | tuple) else value


class RejectionRepairSettings(_Section):
    """Repair from the provider's own refusal: when a request Suture repaired is still refused for
    its transcript (400, 422, Responses' 404 for an item), the message says what and where; Suture
    repairs that and sends the request again, before the client sees a byte. Never for refusals
    about anything else (context length, model, credentials, quota, content policy)."""

    enabled: bool = Field(default=True, description="Repair what a transcript refusal names and retry.")
    max_attempts: int = Field(default=1, ge=1, le=3, description="Retries after refusals, at most, per request.")


class StatedFix(_Section):
    """Fixes the configuration states for some of an upstream's models, in the form ``suture
    profiles export`` writes: applied before the first attempt, in place of any learnt ones."""

    models: str = Field(min_length=1, description="A model name or a glob (glm-4.*).")
    apply: tuple[dict[str, Any], ...] = Field(
        min_length=1,
        description="The fixes, as `suture profiles export` gives them: {fix: RJ011}, {fix: rules, codes: [...]}.",
    )

    @field_validator("apply")
    @classmethod
    def _known_fixes(cls, value: tuple[dict[str, Any], ...]) -> tuple[dict[str, Any], ...]:
        from sanitizer.rejection import known_lesson_problem

        for at, item in enumerate(value):
            problem = known_lesson_problem(item)
            if problem is not None:
                raise ValueError(f"apply.{at}: {problem}")
        return value

    def lessons(self) -> tuple[Any, ...]:
        from sanitizer.rejection import Lesson

        return tuple(Lesson.from_dict(item) for item in self.apply)


_FIXES_FIELD: Any = Field(
    default=(),
    description="Fixes stated for some models (`suture profiles export` writes them); learnt ones never override them.",
)
_LEARN_FIELD: Any = Field(default=True, description="Learn fixes from this upstream's refusals (learning.enabled too).")


class ProviderSettings(_Section):
    """One provider's upstream and how Suture treats its traffic: the section of a provider of the
    route table (``proxy/provider_table.py``), which also gives its default upstream."""

    upstream: str = Field(description="Base URL the provider's paths are appended to.")
    mode: Mode | None = Field(default=None, description="Overrides the global mode for this provider.")
    upstream_api_key: SecretStr | None = Field(
        default=None,
        description="Suture's own key for the upstream (environment only); replaces the client's credentials.",
    )
    client_api_key: SecretStr | None = Field(
        default=None,
        description="Key clients must present to Suture (environment only); needs upstream_api_key.",
    )
    retries: RetrySettings = Field(default=RetrySettings(), description="Retries of failed upstream requests.")
    rejection_repair: RejectionRepairSettings = Field(
        default=RejectionRepairSettings(), description="Repair what a transcript refusal names, and retry."
    )
    fixes: tuple[StatedFix, ...] = _FIXES_FIELD
    learn: bool = _LEARN_FIELD

    @field_validator("upstream")
    @classmethod
    def _check_upstream(cls, value: str) -> str:
        return _check_url(value)

    @field_validator("upstream_api_key", "client_api_key")
    @classmethod
    def _key_fits_a_header(cls, value: SecretStr | None) -> SecretStr | None:
        problem = None if value is None else key_problem(value.get_secret_value())
        if problem is not None:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _client_key_needs_upstream_key(self) -> ProviderSettings:
        if self.client_api_key is not None and self.upstream_api_key is None:
            raise ValueError(
                "client_api_key needs upstream_api_key: with pass-through credentials the client's key "
                "is the provider's key"
            )
        return self

    def serves(self) -> bool:
        """Whether Suture serves this provider's routes."""
        return True


class BedrockSettings(ProviderSettings):
    """Bedrock Converse. A repaired body breaks the client's SigV4 signature, so Suture signs every
    upstream request itself with AWS credentials from the standard chain (environment, profile,
    SSO, instance role...), and clients authenticate to Suture with ``client_api_key``."""

    upstream: str = Field(description="Base URL; by default https://bedrock-runtime.{region}.amazonaws.com.")
    upstream_api_key: SecretStr | None = Field(
        default=None, description="Not used: Suture signs Bedrock requests with its AWS credentials."
    )
    client_api_key: SecretStr | None = Field(
        default=None, description="Key clients must present to Suture (environment only); required when enabled."
    )
    enabled: bool = Field(default=False, description="Serve /model/{modelId}/converse[-stream]; needs client_api_key.")
    region: str = Field(
        default="us-east-1", pattern=r"^[a-z]{2}(-[a-z]+)+-[0-9]+$", description="AWS region requests are signed for."
    )

    @model_validator(mode="before")
    @classmethod
    def _default_upstream(cls, data: Any) -> Any:
        if isinstance(data, dict) and "upstream" not in data:
            region = data.get("region", "us-east-1")
            return {**data, "upstream": provider_table.BEDROCK.default_upstream.replace("{region}", str(region))}
        return data

    def serves(self) -> bool:
        return self.enabled

    @model_validator(mode="after")
    def _client_key_needs_upstream_key(self) -> BedrockSettings:
        # Overrides ProviderSettings' check: here Suture's upstream credentials are AWS's, not a key.
        if self.upstream_api_key is not None:
            raise ValueError("upstream_api_key is not used: Suture signs Bedrock requests with AWS credentials")
        if self.enabled and self.client_api_key is None:
            raise ValueError(
                "enabled needs client_api_key: Suture signs with its own AWS credentials, so it must know "
                "who may use them (set SUTURE_BEDROCK_CLIENT_API_KEY)"
            )
        return self


class TimeoutSettings(_Section):
    """Timeouts in seconds: the upstream clients', and how long a client may stop reading."""

    connect: float = Field(default=10.0, gt=0, description="Establishing a connection.")
    read: float = Field(default=600.0, gt=0, description="Longest wait for the next bytes of a response.")
    write: float = Field(default=60.0, gt=0, description="Longest wait to send the next bytes of a request.")
    pool: float = Field(default=10.0, gt=0, description="Longest wait for a free connection in the pool.")
    client_send: float = Field(
        default=60.0,
        gt=0,
        description="Longest wait for a client to take the next bytes of an answer; then both connections are "
        "closed (a client that stops reading would otherwise hold its upstream connection for ever).",
    )
    client_read: float = Field(
        default=60.0,
        gt=0,
        description="Longest wait for the next bytes of a request whose head or body is not all in (a new "
        "connection's first request included); then Suture answers 408 and closes the connection (connections "
        "that send nothing, or trickle, would otherwise be held for ever).",
    )


class PolicySettings(_Section):
    """How the sanitizer repairs transcripts; unset fields keep the sanitizer's defaults."""

    orphan_tool_call: Literal["pair", "drop"] | None = Field(
        default=None, description="pair: answer an unanswered tool call with a synthetic error result; drop: remove it."
    )
    trailing_tool_call: Literal["pair", "leave"] | None = Field(
        default=None, description="pair: unanswered calls in the last message too; leave: forward them as they are."
    )
    orphan_tool_result: Literal["fold", "drop"] | None = Field(
        default=None,
        description="A tool result whose call is nowhere in the transcript. fold: keep what the tool returned "
        "as user text labelled with the tool and call id; drop: remove it (its content stays in the repair record). "
        "The same for an earlier result of a call answered twice that differs from the last one (kept).",
    )
    trailing_assistant: Literal["keep", "drop", "auto"] | None = Field(
        default=None,
        description="A final assistant message (prefill). keep: forward it; drop: remove it; "
        "auto: drop it for the models known to refuse prefill (Claude Opus 4.6-4.8, Sonnet 4.6, Sonnet 5, Fable 5); "
        "for DeepSeek's reasoner and Mistral, which take it in prefix mode only, add a 'Continue.' user turn after it.",
    )
    trailing_thinking: Literal["continue", "drop"] | None = Field(
        default=None,
        description="A final assistant message Anthropic refuses for its thinking (ending in thinking, or holding "
        "thinking while thinking is disabled). continue: add a 'Continue.' user turn after it, keeping the signed "
        "blocks; drop: remove the thinking blocks at fault (their text stays in the repair record).",
    )
    thinking_without_history: Literal["disable", "leave"] | None = Field(
        default=None,
        description="A request with Claude's thinking on whose last tool round's assistant turn holds no thinking "
        "block (history written with thinking off or by another model), which Anthropic refuses. disable: turn "
        "thinking off for that request only (the removed settings stay in the repair record); leave: forward it.",
    )
    missing_thought_signature: Literal["dummy", "leave"] | None = Field(
        default=None,
        description="A replayed Gemini 3 function call without its thought signature. dummy: give it Google's "
        "documented stand-in (skip_thought_signature_validator); leave: forward it as it is.",
    )
    synthetic_result_text: str | None = Field(
        default=None, description="The synthetic result's text; {name} and {id} stand for the tool and the call id."
    )
    stub_tool_description: str | None = Field(
        default=None, description="Description of the stub definitions added for tools the history uses."
    )
    bridge_text: str | None = Field(
        default=None,
        description="The short assistant message placed between a turn of tool results and the user's next "
        "message where a provider refuses them adjacent (Mistral, vLLM, Bedrock).",
    )

    def to_policy(self) -> Policy:
        return Policy.from_mapping(self.model_dump(exclude_none=True))

    @model_validator(mode="after")
    def _valid_policy(self) -> PolicySettings:
        try:
            self.to_policy()
        except PolicyError as exc:
            raise ValueError(str(exc)) from None
        return self


class CaptureSettings(_Section):
    """Where Suture keeps the requests it repaired or the provider rejected (off when dir is unset)."""

    dir: Path | None = Field(default=None, description="Directory of capture files; unset turns capture off.")
    max_bytes: int = Field(
        default=100 * MiB,
        gt=0,
        description="Size cap of the directory; the oldest captures go first, and make room when the disk is full.",
    )

    @field_validator("dir")
    @classmethod
    def _dir_can_hold_captures(cls, value: Path | None) -> Path | None:
        # Checked once here: otherwise each capture fails on its own, request after request.
        if value is None:
            return None
        existing = value
        try:
            while not existing.exists() and existing != existing.parent:
                existing = existing.parent
            if existing.exists() and not existing.is_dir():
                if existing == value:
                    raise ValueError(f"{value} is a file, not a directory")
                raise ValueError(f"{existing} is a file, so {value} cannot be made")
        except OSError as exc:
            raise ValueError(f"cannot look at {existing}: {exc.strerror or exc}") from None
        if not os.access(existing, os.W_OK | os.X_OK):
            raise ValueError(f"{existing} is not writable by Suture's user")
        return value


IN_CAPTURE_DIR = Path("learnt", "profiles.json")
"""Where learnt fixes are kept by default, under ``capture.dir``: a directory of its own, so that
nothing reading or evicting captures (``*.json`` files) ever takes it for one."""


class LearningSettings(_Section):
    """Profiles learnt from refusals: once a refusal of an upstream was repaired, later requests to
    it (for the same model or its later snapshots) get that fix before their first attempt."""

    enabled: bool = Field(default=True, description="Learn fixes from repaired refusals, and apply them.")
    expire_days: float = Field(
        default=30, gt=0, description="Days a learnt fix is applied; then a refusal must teach it again."
    )
    file: Path | None = Field(
        default=None,
        description="Where learnt fixes are kept; default learnt/profiles.json in capture.dir, else memory only.",
    )

    def path(self, capture_dir: Path | None) -> Path | None:
        if self.file is not None:
            return self.file
        return capture_dir / IN_CAPTURE_DIR if capture_dir is not None else None


class UiSettings(_Section):
    """The page of recent requests and what Suture repaired in them (off by default)."""

    enabled: bool = Field(
        default=False,
        description="Serve the page under path: recent requests live, each transcript before and after repair.",
    )
    path: str = Field(
        default="/suture",
        pattern=r"^(/[A-Za-z0-9._~-]+)+$",
        description="Where the page is served; must not clash with a provider's path.",
    )
    max_entries: int = Field(default=1000, gt=0, description="Requests the page remembers; the oldest go first.")
    max_bytes: int = Field(
        default=64 * MiB, ge=64 * 1024, description="Memory the remembered requests may take, bodies included."
    )
    keep_bodies: bool = Field(
        default=True,
        description="Keep the bodies of repaired, rejected or refused requests (as captures do); false keeps "
        "metadata only.",
    )
    api_key: SecretStr | None = Field(
        default=None,
        description="Key the page asks for (environment only, SUTURE_UI_API_KEY); required when host is not a "
        "loopback address.",
    )

    @field_validator("api_key")
    @classmethod
    def _usable_key(cls, value: SecretStr | None) -> SecretStr | None:
        problem = None if value is None else key_problem(value.get_secret_value())
        if problem is not None:
            raise ValueError(problem)
        return value


class OtelSettings(_Section):
    """OpenTelemetry traces (``pip install 'suture[otel]'``); where they go is the standard OTEL_* variables'."""

    enabled: bool = Field(
        default=False,
        description="Send a span per request (GenAI conventions) and one per upstream call; exporter, endpoint "
        "and sampling from the standard OTEL_* variables (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_TRACES_SAMPLER...).",
    )


# Every provider name the core's provider table takes, for any format: what sanitize() and validate() take.
_PROVIDERS = frozenset(p for names in ACCEPTED.values() for p in names)


class UpstreamSettings(_Section):
    """One named upstream a route can send requests to."""

    protocol: Literal["openai", "anthropic", "litellm"] = Field(
        description="openai | anthropic: native pass-through to base_url; litellm: through litellm's client."
    )
    base_url: str | None = Field(default=None, description="Native upstreams: the base URL paths are appended to.")
    model: str = Field(
        default="{model}",
        description="litellm upstreams: litellm's model name; {model} stands for the client's (gemini/{model}).",
    )
    api_base: str | None = Field(default=None, description="litellm upstreams: the provider endpoint, if not its own.")
    api_key_env: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="Environment variable holding the provider key; without it the client's key passes through.",
    )
    provider: str | None = Field(
        default=None, description="Whose transcript rules to repair for (mistral, bedrock, gemini, deepseek...)."
    )
    rejection_repair: RejectionRepairSettings = Field(
        default=RejectionRepairSettings(), description="Repair what a transcript refusal names, and retry."
    )
    fixes: tuple[StatedFix, ...] = _FIXES_FIELD
    learn: bool = _LEARN_FIELD

    @field_validator("base_url", "api_base")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        return None if value is None else _check_url(value)

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, value: str | None) -> str | None:
        if value is not None and value not in _PROVIDERS:
            raise ValueError(f"unknown provider {value!r}; known: {', '.join(sorted(_PROVIDERS))}")
        return value

    @model_validator(mode="after")
    def _fields_of_protocol(self) -> UpstreamSettings:
        if self.protocol == "litellm":
            if self.base_url is not None:
                raise ValueError("base_url is for native upstreams; a litellm upstream takes api_base")
        else:
            if self.base_url is None:
                raise ValueError(f"protocol {self.protocol} needs base_url")
            if self.api_base is not None or self.model != "{model}":
                raise ValueError("api_base and model are for litellm upstreams")
        return self


class RouteRule(_Section):
    """Requests whose ``model`` matches ``match`` (an exact name or a glob) go to ``upstream``."""

    match: str = Field(min_length=1, description="A model name or a glob (claude-*, gemini-2.?-*).")
    upstream: str = Field(description="A name from upstreams, or openai / anthropic for the built-in sections.")


_SECRET_FIELDS = ("upstream_api_key", "client_api_key", "api_key")
_UPSTREAMS_FIELD: Any = Field(default_factory=dict, description="Named upstreams that routes send requests to.")
_ROUTES_FIELD = Field(
    default=(), description="Model-name routes, first match wins; unmatched requests use the sections above."
)


class SettingsBase(BaseSettings):
    """All of Suture's settings but the providers' sections, which :func:`settings_class` adds
    from the route table. Build :data:`Settings` with :func:`load_settings`, or directly in tests."""

    model_config = SettingsConfigDict(
        env_prefix="SUTURE_",
        env_nested_delimiter="_",
        env_nested_max_split=1,
        extra="forbid",
        frozen=True,
    )

    host: str = Field(default="127.0.0.1", description="Address to listen on.")
    port: int = Field(default=8787, ge=0, le=65535, description="Port to listen on.")
    allowed_hosts: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(),
        description="Host names Suture answers for besides loopback names, IP addresses and host (a leading dot "
        "allows subdomains, * any name); empty: those only on a loopback bind, any name otherwise. Other names get "
        "421 (DNS rebinding). Comma-separated in the environment.",
    )
    allowed_origins: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(),
        description="Web origins (https://app.example.com) whose pages may call Suture from a browser; requests from "
        "any other site get 403. SDKs and agents send no Origin and are not affected. Comma-separated in the "
        "environment.",
    )
    mode: Mode = Field(default="repair", description="repair | report | strict, for every route.")
    max_body_bytes: int = Field(default=32 * MiB, gt=0, description="Largest request body accepted (413).")
    max_connections: int = Field(default=100, gt=0, description="Connection pool size per upstream.")
    passthrough: bool = Field(
        default=True,
        description="Relay every other request under a provider's API (embeddings, files, batches...) to its "
        "upstream, unrepaired; false answers them 404.",
    )
    upstream_proxy: SecretStr | None = Field(
        default=None,
        description="HTTP proxy for upstream traffic, http://host:port (a corporate egress proxy); with user:password@ "
        "only from the environment. HTTPS upstreams are tunnelled through it (CONNECT); HTTPS_PROXY is never read.",
    )
    upstream_ca_file: FilePath | None = Field(
        default=None,
        description="PEM file of the CAs that HTTPS upstreams are verified against, instead of certifi's bundle "
        "(a corporate TLS proxy's CA, a private gateway's).",
    )
    shutdown_grace_seconds: int = Field(
        default=30, ge=0, description="How long in-flight requests may run on after a shutdown signal."
    )
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        default="info",
        description="debug | info | warning | error; logs are JSON lines on stderr, an error as its type and "
        "message (with the traceback at debug only).",
    )
    log_format: Literal["json", "text"] = Field(
        default="json", description="json: one JSON object per line; text: one readable line per event (a terminal)."
    )
    timeouts: TimeoutSettings = TimeoutSettings()
    policy: PolicySettings = PolicySettings()
    capture: CaptureSettings = CaptureSettings()
    learning: LearningSettings = LearningSettings()
    ui: UiSettings = UiSettings()
    otel: OtelSettings = OtelSettings()

    @field_validator("allowed_hosts", "allowed_origins", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [part for part in (p.strip() for p in value.split(",")) if part]
        return value

    @field_validator("allowed_hosts")
    @classmethod
    def _host_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            bare = name.strip("[]")
            if name != "*" and (not bare or "/" in name or bare.count(":") == 1):
                raise ValueError(
                    f"{name!r} is not a host name: give the name alone (suture.internal), no scheme or port"
                )
        return value

    @field_validator("allowed_origins")
    @classmethod
    def _origins(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for origin in value:
            parts = urllib.parse.urlsplit(origin)
            if parts.scheme not in ("http", "https") or not parts.hostname or parts.path.strip("/") or parts.query:
                raise ValueError(
                    f"{origin!r} is not a web origin: give scheme, host and port only (https://app.example.com)"
                )
        return value

    @field_validator("upstream_proxy")
    @classmethod
    def _proxy_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            from .http1 import Proxy  # parsing only: no I/O

            url = value.get_secret_value()
            Proxy.from_url(url)  # its errors never quote the URL (a password)
            _check_host_and_port(urllib.parse.urlsplit(url), show_host=False)
        return value

    @field_validator("upstreams", check_fields=False)
    @classmethod
    def _no_builtin_names(cls, value: dict[str, UpstreamSettings]) -> dict[str, UpstreamSettings]:
        sections = {provider.name for provider in provider_table.providers()}
        for name in value:
            if name in sections:
                raise ValueError(f"{name!r} is the built-in `{name}:` section; name this upstream otherwise")
        return value

    @model_validator(mode="after")
    def _routes_name_upstreams(self) -> SettingsBase:
        known = set(self.upstreams) | set(BUILTIN_TARGETS)
        for i, rule in enumerate(self.routes):
            if rule.upstream not in known:
                raise ValueError(
                    f"routes.{i}.upstream: no upstream named {rule.upstream!r} (known: {', '.join(sorted(known))})"
                )
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # The YAML file arrives as init arguments (see load_settings); the environment beats it.
        return (_Environment(settings_cls), init_settings)

    if TYPE_CHECKING:  # fields that settings_class adds after the providers' sections
        upstreams: dict[str, UpstreamSettings] = Field(default_factory=dict)
        routes: tuple[RouteRule, ...] = ()

    def route(self, name: str) -> ProviderSettings:
        """The section of the provider called ``name`` (``openai``...)."""
        section: ProviderSettings = getattr(self, name)
        return section

    def mode_for(self, name: str) -> Mode:
        return self.route(name).mode or self.mode

    def secret_values(self) -> list[str]:
        """Every secret these settings hold, as it would appear on the wire (the upstream proxy's
        password also as its basic credentials): what Suture masks out of whatever it relays. The
        route table's keys are read from the environment by its router, which adds them."""
        values: list[str] = []
        for provider in provider_table.providers():
            section = self.route(provider.name)
            for secret in (section.upstream_api_key, section.client_api_key):
                if secret is not None:
                    values.append(secret.get_secret_value())
        if self.ui.api_key is not None:
            values.append(self.ui.api_key.get_secret_value())
        if self.upstream_proxy is not None:
            parts = urllib.parse.urlsplit(self.upstream_proxy.get_secret_value())
            if parts.password:
                user = urllib.parse.unquote(parts.username or "")
                password = urllib.parse.unquote(parts.password)
                values += [password, base64.b64encode(f"{user}:{password}".encode()).decode()]
        return values


# The sections a `routes:` rule may name as its upstream: the providers Chat, Responses and
# Messages requests are routed from (a named upstream speaks one of their two protocols).
BUILTIN_TARGETS: tuple[Literal["openai", "anthropic"], ...] = ("openai", "anthropic")


def _section_class(provider: provider_table.Provider) -> type[ProviderSettings]:
    if provider.upstream_key == "sigv4":
        return BedrockSettings
    section: type[ProviderSettings] = create_model(
        f"{provider.name.title()}Settings",
        __base__=ProviderSettings,
        __module__=__name__,
        upstream=(str, Field(default=provider.default_upstream, description=_UPSTREAM_DESCRIPTION)),
    )
    return section


_UPSTREAM_DESCRIPTION = ProviderSettings.model_fields["upstream"].description


def settings_class(routes: tuple[provider_table.Route, ...] | None = None) -> type[SettingsBase]:
    """The settings, with one section per provider of ``routes`` (by default the route table's)."""
    provider_table.check(routes or provider_table.ROUTES)
    sections: dict[str, Any] = {}
    for provider in provider_table.providers(routes):
        section = _section_class(provider)
        sections[provider.name] = (section, section.model_validate({}))
    settings: type[SettingsBase] = create_model(
        "Settings",
        __base__=SettingsBase,
        __module__=__name__,
        __doc__="All of Suture's settings. Build with :func:`load_settings`, or directly in tests.",
        **sections,
        upstreams=(dict[str, UpstreamSettings], _UPSTREAMS_FIELD),
        routes=(tuple[RouteRule, ...], _ROUTES_FIELD),
    )
    return settings


if TYPE_CHECKING:
    Settings = SettingsBase
else:
    Settings = settings_class()


class _NotJSON(ValueError):
    """A variable pydantic-settings reads as JSON does not parse; the message names the variable."""


class _Environment(EnvSettingsSource):
    """The ``SUTURE_*`` variables, as pydantic-settings reads them, except that a section's
    variable (``SUTURE_OPENAI_RETRIES``) whose JSON does not parse is named in the error: its
    own SettingsError names the top-level field only."""

    _field = ""

    def prepare_field_value(self, field_name: str, field: FieldInfo, value: Any, value_is_complex: bool) -> Any:
        self._field = field_name
        return super().prepare_field_value(field_name, field, value, value_is_complex)

    def decode_complex_value(self, field_name: str, field: FieldInfo, value: Any) -> Any:
        try:
            return super().decode_complex_value(field_name, field, value)
        except ValueError as exc:
            # A ValueError still: where pydantic-settings tolerates text that is not JSON, it goes on.
            # json's message has the position, never the value (which may hold a key).
            name = field_name if field_name == self._field else f"{self._field}_{field_name}"
            raise _NotJSON(f"{self.env_prefix}{name}".upper() + f" is not valid JSON: {exc}") from None


def default_config_path() -> Path | None:
    """``config/suture.yaml`` beside the package (a checkout) or under ``sys.prefix`` (installed)."""
    import proxy

    for candidate in (
        Path(proxy.__file__).resolve().parent.parent / "config" / "suture.yaml",
        Path(sys.prefix) / "share" / "suture" / "config" / "suture.yaml",
    ):
        if candidate.is_file():
            return candidate
    return None


def load_settings(path: Path | None = None, *, explicit: bool = True) -> Settings:
    """Read the YAML file at ``path`` (or the default one) and the environment.

    A missing file is an error when the user named it (``explicit``); without any file the
    built-in defaults, which equal ``config/suture.yaml``, apply. Raises :class:`ConfigError`.
    """
    if path is None:
        path, explicit = default_config_path(), False
    data: Mapping[str, Any] = {}
    if path is not None:
        data = _read_yaml(path, explicit=explicit)
    try:
        return Settings(**data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, path)) from None
    except SettingsError as exc:
        if isinstance(exc.__cause__, _NotJSON):
            raise ConfigError(str(exc.__cause__)) from None
        raise ConfigError(f"invalid settings (SUTURE_* environment): {exc}") from None


def _read_yaml(path: Path, *, explicit: bool) -> Mapping[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if explicit:
            raise ConfigError(f"config file not found: {path}") from None
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = ""
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            where = f" (line {mark.line + 1}, column {mark.column + 1})"
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"{path}{where}: {problem}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of settings, not {type(data).__name__}")
    for section, values in data.items():
        if isinstance(values, dict):
            for key in _SECRET_FIELDS:
                if key in values:
                    env = f"SUTURE_{str(section).upper()}_{key.upper()}"
                    raise ConfigError(f"{path}: {section}.{key} is a secret: set it in the environment ({env})")
    proxy = data.get("upstream_proxy")
    if isinstance(proxy, str) and "@" in proxy:
        raise ConfigError(
            f"{path}: upstream_proxy holds credentials, a secret: set it in the environment (SUTURE_UPSTREAM_PROXY)"
        )
    return data


def _describe(exc: ValidationError, path: Path | None) -> str:
    problems = []
    for error in exc.errors(include_input=False, include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "settings"
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown setting"
            close = closest(str(error["loc"][-1]), _names_at(Settings, error["loc"][:-1]))
            if close is not None:
                message += f" (did you mean {close}?)"
        problems.append(f"{where}: {message}")
    source = f"{path} + SUTURE_* environment" if path is not None else "SUTURE_* environment"
    return f"invalid settings ({source}): " + "; ".join(problems)


def closest(name: str, names: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The one of ``names`` that ``name`` most likely misspells, if any is close enough."""
    close = difflib.get_close_matches(name, sorted(names), n=1, cutoff=cutoff)
    return close[0] if close else None


def _names_at(annotation: Any, loc: tuple[int | str, ...]) -> list[str]:
    """The field names of the section at ``loc`` (``("openai",)``, ``("upstreams", "mine")``,
    ``("routes", 0)``) of the settings; none where ``loc`` leads to no section."""
    for part in loc:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = annotation.model_fields.get(str(part))
            if field is None:
                return []
            annotation = field.annotation
            continue
        # A mapping or a list of sections (`upstreams.NAME`, `routes.0`), or `X | None`: its element.
        args = [a for a in typing.get_args(annotation) if a is not type(None) and a is not Ellipsis]
        if not args:
            return []
        annotation = args[-1]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return list(annotation.model_fields)
    return []
