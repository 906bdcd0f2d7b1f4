"""The upstream HTTP/1.1 client: a keep-alive connection pool on asyncio, parsed by httptools.

A proxy's cost is mostly its upstream client (issue 8; bench/README.md). Against the
benchmark's zero-delay mock, one request and its answer cost about 180 µs of CPU through
aiohttp's client and 50 µs through this one; httpx's own transport costs more than aiohttp's.
What it does is what a proxy needs and no more: one origin per pool, requests sent as built (no
headers of its own but Host and Content-Length), answers handed over as raw bytes as they arrive
(never decompressed), no redirects, cookies or retries, and no proxy but an HTTP one. httptools
is the C parser uvicorn already uses for Suture's own server side.

The modules, each importing only those above it::

    errors      the exceptions, and their tree
    framing     an answer head's size limit and what it says of the body's framing
    state       where an answer stands, and the moves allowed between
    response    one answer: httptools' callbacks, and the body as a stream
    tunnel      the egress Proxy, and the CONNECT tunnel through it
    connection  one connection: the asyncio Protocol under a request and its answer
    pool        ConnectionPool: idle connections reused, new ones opened (Happy Eyeballs)
"""

from .errors import (
    ConnectError,
    ConnectTimeout,
    HTTPError,
    NameNotResolved,
    PoolTimeout,
    ProxyError,
    ReadError,
    ReadTimeout,
    RemoteProtocolError,
    TimeoutException,
    UntrustedCertificate,
    WriteTimeout,
)
from .pool import ConnectionPool
from .response import Response
from .tunnel import Proxy

__all__ = [
    "ConnectError",
    "ConnectTimeout",
    "ConnectionPool",
    "HTTPError",
    "NameNotResolved",
    "PoolTimeout",
    "Proxy",
    "ProxyError",
    "ReadError",
    "ReadTimeout",
    "RemoteProtocolError",
    "Response",
    "TimeoutException",
    "UntrustedCertificate",
    "WriteTimeout",
]
