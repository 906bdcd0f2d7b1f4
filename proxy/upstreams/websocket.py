"""An upstream's WebSocket (OpenAI's Responses WebSocket mode): its URL, its opening handshake, and
what a failed handshake means, over the ``websockets`` library's asyncio client.

The HTTP upstreams go through Suture's own HTTP/1.1 client (``proxy/http1/``); a WebSocket is a
long-lived connection of its own, framed and pinged, which that client does not speak. The
library is uvicorn's own (``uvicorn[standard]`` serves Suture's side of the same connections).
"""

from __future__ import annotations

import socket
import ssl
import urllib.parse
from collections.abc import Iterable, Sequence

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import (
    InvalidHandshake,
    InvalidMessage,
    InvalidProxy,
    InvalidProxyStatus,
    InvalidStatus,
    ProxyError,
)
from websockets.typing import Subprotocol

from .native import UpstreamError, UpstreamTimeout

# The client's handshake with Suture, which the library makes anew for the upstream (its own key,
# version, extensions offered; the subprotocols are passed on as such). Hop-by-hop headers
# (Connection, Upgrade...) are dropped by forward_headers already.
HANDSHAKE_HEADERS = frozenset(
    {"sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions", "sec-websocket-protocol"}
)
# The upstream's answer to its handshake: meaningful between the library and the upstream only.
_ANSWER_ONLY = frozenset(
    {
        b"connection",
        b"upgrade",
        b"sec-websocket-accept",
        b"sec-websocket-extensions",
        b"sec-websocket-protocol",
        b"date",
        b"server",
        b"content-length",
        b"transfer-encoding",
        b"keep-alive",
        # Suture stamps its own; an upstream that is another Suture has stamped its.
        b"x-suture-request-id",
        b"x-suture-repairs",
    }
)


class SocketRefused(Exception):
    """The upstream answered the handshake, but not with a WebSocket: another status than 101, or
    a 101 the library cannot take; or the egress proxy would not tunnel to it. ``status`` is the
    upstream's (101 for a broken upgrade), or the proxy's."""

    def __init__(self, base_url: str, status: int, detail: str) -> None:
        self.base_url = base_url
        self.status = status
        self.detail = detail
        super().__init__(self.describe())

    def describe(self) -> str:
        return f"the upstream {self.base_url} does not take a WebSocket here: {self.detail}"


class SocketUnreachable(UpstreamError):
    """No handshake answer at all, with the library's own words when they say why (a proxy's refusal)."""

    def __init__(self, base_url: str, cause: Exception) -> None:
        super().__init__(base_url, cause)
        if isinstance(cause, (ProxyError, InvalidProxy)):
            self.detail = str(cause)
        elif isinstance(cause, socket.gaierror):
            # As the HTTP routes say it (proxy/http1/pool.py); the name may be the egress proxy's.
            self.cause = "NameNotResolved"
            self.detail = f"a host name could not be resolved (DNS: {cause.strerror})"


def socket_url(base_url: str, path: str, query: bytes = b"") -> str:
    """The WebSocket URL of ``base_url + path``: ``ws://`` for an ``http://`` base, ``wss://`` for ``https://``."""
    parts = urllib.parse.urlsplit(base_url.rstrip("/"))
    scheme = {"http": "ws", "https": "wss"}[parts.scheme]
    return urllib.parse.urlunsplit((scheme, parts.netloc, parts.path + path, query.decode("latin-1"), ""))


def handshake_headers(headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    """Request headers (as ``forward_headers`` built them) as the library takes them.

    The library writes header values as ASCII text; a value with other bytes is not forwarded
    rather than sent altered.
    """
    out = []
    for name, value in headers:
        try:
            out.append((name.decode("ascii"), value.decode("ascii")))
        except UnicodeDecodeError:
            continue
    return out


def answer_headers(connection: ClientConnection) -> list[tuple[bytes, bytes]]:
    """The upstream's handshake answer headers as they go to the client: its own (Codex reads
    ``x-codex-turn-state``, ``openai-model``...; the provider's ``x-request-id`` passes unchanged),
    without those of the handshake itself."""
    response = connection.response
    if response is None:
        return []
    out = []
    for name, value in response.headers.raw_items():
        low = name.lower().encode("latin-1")
        if low not in _ANSWER_ONLY:
            out.append((low, value.encode("latin-1")))
    return out


class _NoRedirects(connect):
    # A redirect is the upstream's answer, as it is on the HTTP routes: following one would send
    # Suture's key wherever it points.
    def process_redirect(self, exc: Exception) -> Exception | str:
        return exc


async def open_socket(
    url: str,
    base_url: str,
    headers: list[tuple[str, str]],
    *,
    subprotocols: Sequence[str] = (),
    ssl_context: ssl.SSLContext | None = None,
    proxy: str | None = None,
    open_timeout: float = 10.0,
) -> ClientConnection:
    """The upstream's WebSocket at ``url``, open. Raises :class:`SocketRefused` when the upstream
    answers without a WebSocket, :class:`UpstreamError` (or :class:`UpstreamTimeout`) when it
    gives no answer.

    Messages of any size are taken from the upstream, as its HTTP answers are; ``proxy`` is the
    egress proxy (``http://[user:password@]host:port``), tunnelled through with CONNECT, and no
    proxy from the environment is ever used, as on the HTTP routes.
    """
    secure = url.startswith("wss:")
    try:
        return await _NoRedirects(
            url,
            additional_headers=headers,
            user_agent_header=None,  # the client's own User-Agent is among the headers
            subprotocols=[Subprotocol(p) for p in subprotocols] or None,
            ssl=(ssl_context or True) if secure else None,
            proxy=proxy,
            open_timeout=open_timeout,
            max_size=None,
        )
    except InvalidStatus as exc:
        status = exc.response.status_code
        body = exc.response.body[:300].decode("utf-8", "replace")
        detail = f"it answered the handshake with {status}" + (f": {body}" if body else "")
        raise SocketRefused(base_url, status, detail) from None
    except InvalidProxyStatus as exc:
        # The HTTP routes may still pass where a tunnel may not (a plain-HTTP upstream goes to the
        # proxy as an absolute-form request; a WebSocket always needs CONNECT).
        status = exc.response.status_code
        raise SocketRefused(
            base_url, status, f"the egress proxy (upstream_proxy) refused to tunnel to it ({status})"
        ) from None
    except InvalidMessage as exc:
        # No answer that reads as HTTP: the connection closed, or something else listens there.
        raise SocketUnreachable(base_url, exc) from None
    except (ProxyError, InvalidProxy) as exc:
        raise SocketUnreachable(base_url, exc) from None
    except InvalidHandshake as exc:
        raise SocketRefused(base_url, 101, f"its upgrade is not one Suture can take ({exc})") from None
    except TimeoutError as exc:
        raise UpstreamTimeout(base_url, exc) from None
    except OSError as exc:
        raise SocketUnreachable(base_url, exc) from None
