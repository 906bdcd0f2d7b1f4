"""An HTTP proxy between Suture and its upstreams (a corporate egress proxy), and the CONNECT
tunnel through it that carries TLS to an HTTPS upstream."""

from __future__ import annotations

import asyncio
import base64
import socket
import urllib.parse
from dataclasses import dataclass, field

from .errors import ProxyError
from .framing import MAX_HEAD_BYTES


@dataclass(frozen=True)
class Proxy:
    """An HTTP proxy between Suture and its upstreams (a corporate egress proxy): HTTPS upstreams
    are tunnelled through it with CONNECT, plain-HTTP ones are sent to it with the absolute URL."""

    host: str
    port: int
    authorization: bytes | None = field(default=None, repr=False)
    """The Proxy-Authorization value (Basic, from the URL's user and password)."""

    @classmethod
    def from_url(cls, url: str) -> Proxy:
        """``http://[user:password@]host[:port]``; raises ``ValueError`` (without the password)."""
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError("must be an http://host:port URL (an HTTP proxy; its user and password may be in it)")
        if parts.path not in ("", "/") or parts.query or parts.fragment:
            raise ValueError("must be just http://host:port, without a path or query")
        try:
            port = parts.port or 80
        except ValueError:
            raise ValueError("has an invalid port") from None
        authorization = None
        if parts.username is not None:
            user = urllib.parse.unquote(parts.username)
            password = urllib.parse.unquote(parts.password or "")
            authorization = b"Basic " + base64.b64encode(f"{user}:{password}".encode())
        return cls(parts.hostname, port, authorization)


async def open_tunnel(sock: socket.socket, proxy: Proxy, host: str, port: int) -> None:
    """CONNECT through ``proxy`` (``sock`` is connected to it) to ``host:port``; TLS then starts
    inside the tunnel. Raises :class:`ProxyError`."""
    loop = asyncio.get_running_loop()
    name = f"[{host}]" if ":" in host else host  # an IPv6 literal
    authority = f"{name}:{port}".encode("idna")
    request = [b"CONNECT ", authority, b" HTTP/1.1\r\nHost: ", authority, b"\r\n"]
    if proxy.authorization is not None:
        request += (b"Proxy-Authorization: ", proxy.authorization, b"\r\n")
    await loop.sock_sendall(sock, b"".join([*request, b"\r\n"]))
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = await loop.sock_recv(sock, 4096)
        if not chunk:
            raise ProxyError(f"the proxy {proxy.host}:{proxy.port} closed the connection, not answering CONNECT")
        head += chunk
        if len(head) > MAX_HEAD_BYTES:
            raise ProxyError(f"the proxy's answer to CONNECT exceeds {MAX_HEAD_BYTES} bytes")
    status_line, _, _ = head.partition(b"\r\n")
    words = status_line.split(b" ", 2)
    if len(words) < 2 or words[1] != b"200":
        shown = status_line[:200].decode("latin-1")
        raise ProxyError(f"the proxy {proxy.host}:{proxy.port} refused the tunnel to {authority.decode()}: {shown}")
    if not head.endswith(b"\r\n\r\n"):
        raise ProxyError("the proxy sent bytes after its answer to CONNECT, before TLS")
