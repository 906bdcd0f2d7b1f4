"""Whose credentials go where: the client's key for Suture, and the keys sent upstream."""

from __future__ import annotations

import hmac

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response

from .context import state_of
from .errors import error_response
from .routing import Target
from .settings import RouteName, RouteSettings


def check_client_key(request: Request, route: RouteName) -> Response | None:
    """None when the route needs no client key or this request holds it; else a provider-shaped 401."""
    cfg = state_of(request).settings.route(route)
    if cfg.client_api_key is None:
        return None
    presented = request.headers.get("x-api-key")
    if presented is None and route == "gemini":
        # Google's SDKs send their key as x-goog-api-key, or as ?key= in the URL.
        presented = request.headers.get("x-goog-api-key") or request.query_params.get("key")
    auth = request.headers.get("authorization", "")
    if presented is None and auth[:7].lower() == "bearer ":
        presented = auth[7:].strip()
    expected = cfg.client_api_key.get_secret_value().encode()
    if presented is not None and hmac.compare_digest(presented.encode(), expected):
        return None
    what = "missing" if presented is None else "invalid"
    return error_response(route, 401, f"{what} API key for this Suture proxy")


def request_secrets(request: Request, route: RouteName) -> tuple[str, ...]:
    """This request's credential values, so a capture can blank them out of an echoed error."""
    values = [v for k, v in request.headers.items() if k in ("x-api-key", "api-key", "x-goog-api-key")]
    values += request.query_params.getlist("key")  # Google's SDKs may send the key as ?key=
    auth = request.headers.get("authorization", "")
    if auth:
        values += [auth, auth.partition(" ")[2].strip()]
    own = state_of(request).settings.route(route).upstream_api_key
    if own is not None:
        values.append(own.get_secret_value())
    return tuple(v for v in values if v)


def credential_headers(
    route: RouteName, cfg: RouteSettings, client: Headers, target: Target | None = None
) -> tuple[set[str], dict[str, str]]:
    """Headers to drop and to set when the route holds its own upstream credentials; none otherwise."""
    if route == "bedrock":
        # Suture signs Bedrock requests itself (proxy/aws.py): the client's signature, its
        # X-Amz-* headers and its key for Suture never leave.
        return {"authorization", "x-api-key", *(n for n in client if n.startswith("x-amz-"))}, {}
    own = cfg.upstream_api_key if target is None else target.api_key
    if own is None:
        if target is not None and cfg.client_api_key is not None:
            # The client's key is Suture's own: it must not reach a routed upstream either.
            return {"authorization", "x-api-key"}, {}
        return set(), {}
    key = own.get_secret_value()
    if route == "openai":
        return {"x-api-key"}, {"authorization": f"Bearer {key}"}
    if route == "gemini":
        return {"authorization", "x-api-key"}, {"x-goog-api-key": key}
    return {"authorization"}, {"x-api-key": key}
