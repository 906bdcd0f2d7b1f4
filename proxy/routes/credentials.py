"""Whose credentials go where: the client's key for Suture, and the keys sent upstream."""

from __future__ import annotations

import hmac

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response

from ..settings import RouteSettings
from . import table
from .errors import error_response
from .model_routes import Target

# How Suture's own key is sent for each kind of provider: the client's credential headers it
# replaces, and the header it sets (with the value's prefix).
_SENT_AS: dict[str, tuple[frozenset[str], str, str]] = {
    "bearer": (frozenset({"x-api-key"}), "authorization", "Bearer "),
    "x-api-key": (frozenset({"authorization"}), "x-api-key", ""),
    "x-goog-api-key": (frozenset({"authorization", "x-api-key"}), "x-goog-api-key", ""),
}


def check_client_key(request: Request, provider: table.Provider, cfg: RouteSettings) -> Response | None:
    """None when the section needs no client key or this request holds it; else a provider-shaped 401."""
    if cfg.client_api_key is None:
        return None
    headers = request.headers
    presented: str | None = None
    for name in provider.client_key_headers:
        if name == "authorization":
            auth = headers.get("authorization", "")
            presented = auth[7:].strip() if auth[:7].lower() == "bearer " else None
        elif name == "x-goog-api-key" and provider.key_query is not None:
            presented = headers.get(name) or request.query_params.get(provider.key_query)
        else:
            presented = headers.get(name)
        if presented is not None:
            break
    expected = cfg.client_api_key.get_secret_value().encode()
    if presented is not None and hmac.compare_digest(presented.encode(), expected):
        return None
    what = "missing" if presented is None else "invalid"
    return error_response(provider, 401, f"{what} API key for this Suture proxy")


def request_secrets(request: Request, cfg: RouteSettings) -> tuple[str, ...]:
    """This request's credential values, so a capture can blank them out of an echoed error."""
    values = [v for k, v in request.headers.items() if k in ("x-api-key", "api-key", "x-goog-api-key")]
    values += request.query_params.getlist("key")  # Google's SDKs may send the key as ?key=
    auth = request.headers.get("authorization", "")
    if auth:
        values += [auth, auth.partition(" ")[2].strip()]
    if cfg.upstream_api_key is not None:
        values.append(cfg.upstream_api_key.get_secret_value())
    return tuple(v for v in values if v)


def credential_headers(
    provider: table.Provider, cfg: RouteSettings, client: Headers, target: Target | None = None
) -> tuple[set[str], dict[str, str]]:
    """Headers to drop and to set when Suture holds its own upstream credentials; none otherwise."""
    if provider.upstream_key == "sigv4":
        # Suture signs these requests itself (proxy/aws.py): the client's signature, its
        # X-Amz-* headers and its key for Suture never leave.
        return {"authorization", "x-api-key", *(n for n in client if n.startswith("x-amz-"))}, {}
    own = cfg.upstream_api_key if target is None else target.api_key
    if own is None:
        if target is not None and cfg.client_api_key is not None:
            # The client's key is Suture's own: it must not reach a routed upstream either.
            return {"authorization", "x-api-key"}, {}
        return set(), {}
    # A routed target speaks the protocol of the path the request came by (checked before).
    replaced, header, prefix = _SENT_AS[provider.upstream_key]
    return set(replaced), {header: prefix + own.get_secret_value()}
