"""The client's credentials: its key for Suture, and the values a capture must blank out."""

from __future__ import annotations

import hmac

from starlette.requests import HTTPConnection
from starlette.responses import Response

from .. import provider_table
from ..settings import ProviderSettings
from .errors import error_response


def check_client_key(
    request: HTTPConnection, provider: provider_table.Provider, cfg: ProviderSettings
) -> Response | None:
    """None when the section needs no client key or this request (or WebSocket handshake) holds it;
    else a provider-shaped 401."""
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


def request_secrets(request: HTTPConnection, cfg: ProviderSettings) -> tuple[str, ...]:
    """This request's credential values, so a capture can blank them out of an echoed error."""
    values = [v for k, v in request.headers.items() if k in ("x-api-key", "api-key", "x-goog-api-key")]
    values += request.query_params.getlist("key")  # Google's SDKs may send the key as ?key=
    auth = request.headers.get("authorization", "")
    if auth:
        values += [auth, auth.partition(" ")[2].strip()]
    if cfg.upstream_api_key is not None:
        values.append(cfg.upstream_api_key.get_secret_value())
    return tuple(v for v in values if v)
