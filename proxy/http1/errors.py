"""What the upstream client raises: the class name is what logs and errors show (httpx's names
throughout, so they read as any Python HTTP client's).

The hierarchy::

    HTTPError                     the upstream gave no complete HTTP answer
    ├── TimeoutException
    │   ├── ConnectTimeout
    │   ├── PoolTimeout           every connection stayed busy
    │   ├── ReadTimeout
    │   └── WriteTimeout
    ├── ConnectError              refused, unresolvable, unreachable, TLS failed
    │   ├── NameNotResolved       DNS knows no such host; shown to the client
    │   ├── UntrustedCertificate  shown to the client
    │   └── ProxyError            shown to the client
    ├── ReadError                 the socket failed
    └── RemoteProtocolError       malformed, or cut short
        └── _StaleConnection      never raised past the pool: it sends the request again

``shown_to_client`` marks the errors whose message may reach the client as well as the logs.
"""

from __future__ import annotations


class HTTPError(Exception):
    """The upstream gave no complete HTTP answer. The class name is what logs and errors show."""

    shown_to_client = False
    """Whether the message may go to the client too: what to fix is Suture's config, not secret."""


class TimeoutException(HTTPError):
    """No answer in time (httpx's names throughout: logs and errors show them)."""


class ConnectError(HTTPError):
    """Refused, unresolvable, unreachable, or the TLS handshake failed."""


class NameNotResolved(ConnectError):
    """The upstream's (or the egress proxy's) host name did not resolve: a typo in the URL, or no DNS."""

    shown_to_client = True


class UntrustedCertificate(ConnectError):
    """The upstream's TLS certificate did not verify against the trusted CAs."""

    shown_to_client = True


class ProxyError(ConnectError):
    """The HTTP proxy in between refused the tunnel (407: it wants other credentials)."""

    shown_to_client = True


class ConnectTimeout(TimeoutException):
    pass


class PoolTimeout(TimeoutException):
    """Every connection stayed busy for the whole pool timeout."""


class ReadTimeout(TimeoutException):
    """No byte of the answer arrived within the read timeout."""


class WriteTimeout(TimeoutException):
    """The upstream took no more of the request's bytes within the write timeout."""


class ReadError(HTTPError):
    """The socket failed (reset) under a request."""


class RemoteProtocolError(HTTPError):
    """A malformed answer, or one cut short."""


class _StaleConnection(RemoteProtocolError):
    """A reused keep-alive connection closed before the first byte of the answer, before the
    upstream can have read the request: at once after it went out, or before all of it was written.

    The usual cause is the upstream's idle timeout firing as the request went out: it is sent once
    more on a new connection.
    """
