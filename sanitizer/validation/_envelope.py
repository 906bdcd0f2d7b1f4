"""Each provider's error body shape, and the registry of APIs and providers."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..providers import PROFILES, binding
from ._violation import Violation

# The validator's profiles per format, from the provider table (read-only: shared by every caller).
PROVIDERS: Mapping[str, tuple[str, ...]] = PROFILES

# The canonical kinds (Anthropic's error types) and the status each stands for.
_KIND_BY_STATUS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    503: "overloaded_error",
    504: "timeout_error",
    529: "overloaded_error",
}

# OpenAI Chat and Responses: (type, code). OpenAI reports a bad key as an invalid request.
_OPENAI_KIND = {
    "invalid_request_error": ("invalid_request_error", None),
    "authentication_error": ("invalid_request_error", "invalid_api_key"),
    "permission_error": ("invalid_request_error", "unsupported_country_region_territory"),
    "not_found_error": ("invalid_request_error", "not_found"),
    "request_too_large": ("invalid_request_error", "request_too_large"),
    "rate_limit_error": ("requests", "rate_limit_exceeded"),
    "api_error": ("server_error", None),
    "overloaded_error": ("server_error", None),
    "timeout_error": ("server_error", None),
}

_GOOGLE_STATUS = {
    "invalid_request_error": "INVALID_ARGUMENT",
    "authentication_error": "UNAUTHENTICATED",
    "permission_error": "PERMISSION_DENIED",
    "not_found_error": "NOT_FOUND",
    "request_too_large": "INVALID_ARGUMENT",
    "rate_limit_error": "RESOURCE_EXHAUSTED",
    "api_error": "INTERNAL",
    "overloaded_error": "UNAVAILABLE",
    "timeout_error": "DEADLINE_EXCEEDED",
}

_AWS_ERROR_TYPE = {
    "invalid_request_error": "ValidationException",
    "authentication_error": "UnrecognizedClientException",
    "permission_error": "AccessDeniedException",
    "not_found_error": "ResourceNotFoundException",
    "request_too_large": "ValidationException",
    "rate_limit_error": "ThrottlingException",
    "api_error": "InternalServerException",
    "overloaded_error": "ServiceUnavailableException",
    "timeout_error": "ModelTimeoutException",
}

# vLLM names its error types after the HTTP exception classes.
_VLLM_TYPE = {
    "invalid_request_error": "BadRequestError",
    "authentication_error": "AuthenticationError",
    "permission_error": "PermissionDeniedError",
    "not_found_error": "NotFoundError",
    "request_too_large": "BadRequestError",
    "rate_limit_error": "RateLimitError",
    "api_error": "InternalServerError",
    "overloaded_error": "ServiceUnavailableError",
    "timeout_error": "InternalServerError",
}

# The error types llama-server shares with Anthropic's names (its others: server_error, unavailable_error).
_LLAMACPP_TYPES = frozenset({"invalid_request_error", "authentication_error", "permission_error", "not_found_error"})

# xAI's ``code`` is the gRPC status's description: "Client specified an invalid argument" for a 400
# (spiceai/spiceai#4734), "The caller does not have permission to execute the specified operation"
# for a 403 (UKGovernmentBEIS/inspect_ai PR#2267); the others are gRPC's descriptions of the codes
# those statuses stand for [infer].
_XAI_CODE = {
    "invalid_request_error": "Client specified an invalid argument",
    "authentication_error": "The request does not have valid authentication credentials for the operation",
    "permission_error": "The caller does not have permission to execute the specified operation",
    "not_found_error": "Some requested entity (e.g., file or directory) was not found",
    "request_too_large": "Client specified an invalid argument",
    "rate_limit_error": "Some resource has been exhausted, perhaps a per-user quota, or perhaps the entire file "
    "system is out of space.",
    "api_error": "Internal errors.",
    "overloaded_error": "The service is currently unavailable.",
    "timeout_error": "The deadline expired before the operation could complete.",
}

# The provider_name OpenRouter gives each upstream in its error body (W1).
_UPSTREAM_NAME = {
    "openai": "OpenAI",
    "anthropic": "Anthropic",
    "mistral": "Mistral",
    "deepseek": "DeepSeek",
    "moonshot": "Moonshot AI",
}

_UNSET: Any = object()


def resolve(api: str, provider: str | None) -> str:
    """The profile ``validate``/``error_envelope`` should use for any name the provider table
    knows (the names ``sanitize`` takes), or a typed error naming the known ones."""
    return binding(api, provider).profile


def canonical_kind(kind: str, status: int) -> str:
    # The default kind follows the status, so error_envelope(..., status=401) reads as an auth error.
    if kind == "invalid_request_error" and status != 400:
        return _KIND_BY_STATUS.get(status, "api_error" if status >= 500 else kind)
    return kind


def build(
    provider: str,
    message: str,
    *,
    status: int = 400,
    kind: str = "invalid_request_error",
    param: Any = _UNSET,
    code: Any = _UNSET,
    type_: str | None = None,
) -> tuple[dict[str, Any] | list[Any], dict[str, str]]:
    """The provider's error body (and meaningful headers) around ``message``.

    ``param``/``code``/``type_`` override the OpenAI-family fields where a rule prints its own.
    """
    kind = canonical_kind(kind, status)
    if provider in ("anthropic", "vertex"):
        return {"type": "error", "error": {"type": type_ or kind, "message": message}}, {}
    if provider == "bedrock":
        return {"message": message}, {"x-amzn-ErrorType": _AWS_ERROR_TYPE.get(kind, "ValidationException")}
    if provider in ("gemini", "gemini-openai-compat"):
        error = {"code": status, "message": message, "status": _GOOGLE_STATUS.get(kind, "INTERNAL")}
        if provider == "gemini":
            return {"error": error}, {}
        return [{"error": error}], {}
    if provider == "anthropic-openai-compat":
        t = type_ or kind
        return {"error": {"code": t, "message": message, "type": t, "param": None}}, {}
    if provider == "mistral":
        t = type_ or (kind if kind != "api_error" else "internal_server_error")
        return {
            "object": "error",
            "message": message,
            "type": t,
            "param": None,
            "code": None if code is _UNSET else code,
        }, {}
    if provider in ("deepseek", "deepseek-anthropic-compat"):
        # Its Anthropic-compatible endpoint answers in the same body (decolua/9router#2397).
        t = type_ or kind
        return {
            "error": {
                "message": message,
                "type": t,
                "param": None,
                "code": t if code is _UNSET else code,
            }
        }, {}
    if provider == "cerebras":
        # No ``error`` wrapper (Kilo-Org/kilocode#10375: the body of its schema errors).
        return {
            "message": message,
            "type": type_ or kind,
            "param": None if param is _UNSET else param,
            "code": None if code is _UNSET else code,
        }, {}
    if provider == "dashscope":
        # philschmid/mcp-openai-gemini-llama-example PR#5, alibaba/spring-ai-alibaba#914 (the body's own
        # ``id`` and ``request_id`` left out: they are DashScope's, per request).
        return {
            "error": {
                "code": "invalid_parameter_error" if kind == "invalid_request_error" else kind,
                "param": None,
                "message": message,
                "type": type_ or kind,
            }
        }, {}
    if provider == "llamacpp":
        # llama-server's format_error_response: its own type names; a chat template's raise_exception
        # is a server_error 500 (janhq/jan#6254, ggml-org/llama.cpp#19851).
        t = kind if kind in _LLAMACPP_TYPES else "unavailable_error" if status == 503 else "server_error"
        return {"error": {"code": status, "message": message, "type": t}}, {}
    if provider == "fireworks":
        # Its OpenAI-shaped body, with an ``object`` as vLLM's [infer]; the texts are its schema's.
        return {"error": {"object": "error", "type": type_ or kind, "message": message}}, {}
    if provider == "xai":
        # No wrapper, no type: the status's description and the text (spiceai/spiceai#4734).
        return {"code": _XAI_CODE.get(kind, _XAI_CODE["api_error"]), "error": message}, {}
    if provider == "zhipu":
        # Zhipu's own numeric codes, as a string (1214: malformed messages; anomalyco/opencode#2557,
        # MetaGLM/zhipuai-sdk-python-v4#14); for other refusals only the status is known here [infer].
        return {"error": {"code": "1214" if kind == "invalid_request_error" else str(status), "message": message}}, {}
    if provider == "lmstudio":
        # A bare string, no type (phodal/auto-dev#175, t59688/arboris-novel#23).
        return {"error": message}, {}
    if provider == "sglang":
        # SGLang's create_error_response: "BadRequest" for a 400, "InternalServerError" for a 500
        # (sgl-project/sglang PR#14748); other statuses' types [infer].
        t = type_ or ("BadRequest" if status == 400 else "InternalServerError" if status >= 500 else kind)
        return {"object": "error", "message": message, "type": t, "param": None, "code": status}, {}
    if provider == "together":
        # No wrapper, and ``type_`` for the type (mozilla-ai/any-llm#714).
        return {"message": message, "type_": type_ or kind}, {}
    if provider in ("groq", "moonshot"):
        return {"error": {"message": message, "type": type_ or kind}}, {}
    if provider in ("vllm", "nim"):
        # NIM answers in vLLM's body (hidenobunagai/nvidia-nim-provider#2, integrate.api.nvidia.com).
        t = type_ or _VLLM_TYPE.get(kind, "BadRequestError")
        return {"error": {"message": message, "type": t, "param": None, "code": status}}, {}
    if provider == "openrouter":
        return {"error": {"message": message, "code": status}}, {}
    # openai, azure, minimax: the OpenAI envelope; Ollama's OpenAI layer answers in it too
    # (middleware/openai.go), and SambaNova is taken to (only its texts are public [infer]).
    default_type, default_code = _OPENAI_KIND.get(kind, ("invalid_request_error", None))
    return {
        "error": {
            "message": message,
            "type": type_ or default_type,
            "param": None if param is _UNSET else param,
            "code": default_code if code is _UNSET else code,
        }
    }, {}


def violation(
    provider: str,
    rule: str,
    message: str,
    index: int | None,
    *,
    status: int = 400,
    param: Any = _UNSET,
    code: Any = _UNSET,
    type_: str | None = None,
) -> Violation:
    body, headers = build(provider, message, status=status, param=param, code=code, type_=type_)
    return Violation(rule, status, message, body, index, headers)


def wrap_openrouter(inner: Violation, upstream: str) -> Violation:
    """OpenRouter passes the upstream's error on as a string inside its own envelope (W1)."""
    body = {
        "error": {
            "message": "Provider returned error",
            "code": inner.status,
            "metadata": {
                "raw": json.dumps(inner.body, separators=(",", ":")),
                "provider_name": _UPSTREAM_NAME.get(upstream, upstream),
            },
        }
    }
    return Violation(inner.rule, inner.status, inner.message, body, inner.message_index, {})


def error_envelope(
    api: str,
    provider: str | None,
    message: str,
    *,
    status: int = 400,
    kind: str = "invalid_request_error",
) -> tuple[int, dict[str, Any] | list[Any], dict[str, str]]:
    """Wrap ``message`` in ``provider``'s error body: ``(status, body, headers)``.

    ``kind`` is one of Anthropic's error types (``invalid_request_error``,
    ``authentication_error``, ``permission_error``, ``not_found_error``, ``request_too_large``,
    ``rate_limit_error``, ``api_error``, ``overloaded_error``, ``timeout_error``) and is mapped
    to each provider's own vocabulary (OpenAI ``type``/``code``, Google ``status``, AWS
    ``x-amzn-ErrorType``). Left at its default, it follows ``status`` (401 reads as
    ``authentication_error``, 502 as ``api_error``, 504 as ``timeout_error``...).
    """
    resolved = resolve(api, provider)
    # Vertex AI answers a native Gemini request in Google's envelope (its Claude models, Anthropic's).
    body, headers = build("gemini" if api == "gemini" else resolved, message, status=status, kind=kind)
    return status, body, headers
