"""Which requests a web browser may make to Suture: none but its own page's, by default.

Suture usually listens on loopback, often holding a provider key. Any web page the user visits
can make the browser send requests there: a "simple" POST needs no CORS preflight (no
``Content-Type``, ``text/plain``, a form), and a site that rebinds its own name to 127.0.0.1
(DNS rebinding) can even read the answers, because to the browser they are same-origin. Two
checks, on every request before anything of it is read:

- **Host.** A rebinding attack needs a host name the attacker controls, so the ``Host`` header
  must be a loopback name (``localhost``, ``*.localhost``), an IP address (no rebinding there),
  the address Suture is bound to, or a name in ``allowed_hosts``. On a non-loopback bind (a
  container, a sidecar reached by its service name) the default allows any name, as a server
  reached over the network by names nobody listed must: set ``allowed_hosts`` to narrow it.
- **Origin.** Browsers name the page behind a request: ``Origin`` on every cross-origin request
  and every POST, ``Sec-Fetch-Site`` on every request of a current browser. A request from
  another site (``cross-site``), from a sibling origin on the same site (``same-site``: another
  port of localhost) or from an opaque origin (``Origin: null``: a sandboxed frame, a file) is
  refused unless its origin is in ``allowed_origins``. Same-origin requests (the page's own) pass.

SDKs and agents send neither ``Origin`` nor ``Sec-Fetch-*``: nothing they do changes.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

import orjson
from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_NAMES = ("localhost", "localhost.")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (or ``localhost``): only this machine can reach it."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_name(authority: str) -> str:
    """``Host``'s name without its port, lowercased: ``[::1]:8787`` is ``::1``."""
    authority = authority.strip().lower()
    if authority.startswith("["):
        return authority[1 : authority.find("]")] if "]" in authority else authority
    return authority.rpartition(":")[0] if authority.count(":") == 1 else authority


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int
    message: str


class BrowserGuard:
    """The Host and Origin checks of one server: :meth:`check` answers None (go on) or a :class:`Refusal`."""

    def __init__(self, bound_host: str, allowed_hosts: Iterable[str] = (), allowed_origins: Iterable[str] = ()) -> None:
        names = [name.strip().lower() for name in allowed_hosts]
        if not names and not is_loopback(bound_host) and bound_host not in ("", "localhost"):
            names = ["*"]
        self.any_host = "*" in names
        self.hosts = frozenset({_host_name(bound_host), *LOOPBACK_NAMES, *(n for n in names if not n.startswith("."))})
        self.suffixes = (".localhost", *(n for n in names if n.startswith(".")))
        self.origins = frozenset(origin.strip().rstrip("/").lower() for origin in allowed_origins)
        self._hosts_seen: dict[bytes, bool] = {}

    def check(self, headers: Iterable[tuple[bytes, bytes]]) -> Refusal | None:
        """Whether a request with these (ASGI, lowercase) headers may go on."""
        host = origin = fetch_site = None
        for name, value in headers:
            if name == b"host":
                host = value
            elif name == b"origin":
                origin = value
            elif name == b"sec-fetch-site":
                fetch_site = value
        if host is not None and not self.any_host and not self._host_allowed(host):
            shown = host[:100].decode("latin-1")
            return Refusal(
                421, f"Suture does not answer for the host {shown!r}: add it to allowed_hosts if it is yours"
            )
        if origin is None and fetch_site is None:
            return None  # an SDK, an agent, curl
        return self._check_browser(host, origin, fetch_site)

    def _host_allowed(self, host: bytes) -> bool:
        known = self._hosts_seen.get(host)
        if known is None:
            name = _host_name(host.decode("latin-1"))
            known = name in self.hosts or name.endswith(self.suffixes) or _is_ip(name)
            if len(self._hosts_seen) < 64:  # the few names one server is reached by
                self._hosts_seen[host] = known
        return known

    def _check_browser(self, host: bytes | None, origin: bytes | None, fetch_site: bytes | None) -> Refusal | None:
        text = origin.decode("latin-1").strip().rstrip("/").lower() if origin is not None else None
        if text is not None and text in self.origins:
            return None
        if fetch_site is not None:
            # Set by the browser itself, which no page can forge; it outranks Origin, which is
            # "null" on the page's own form posts under its no-referrer policy.
            if fetch_site in (b"same-origin", b"none"):
                return None
        elif text is None:
            return None
        elif text != "null" and host is not None and text.partition("://")[2] == host.decode("latin-1").strip().lower():
            return None  # an older browser's same-origin request: Origin alone
        who = f"the web page at {text}" if text not in (None, "null") else "a web page"
        return Refusal(
            403,
            f"Suture refuses requests from {who}: a browser sent it (Origin / Sec-Fetch-Site). "
            "Add the page's origin to allowed_origins if it is yours",
        )


def guarded(app: ASGIApp, guard: BrowserGuard) -> ASGIApp:
    """``app`` behind ``guard``'s checks, refusals answered as plain JSON errors (``suture captures serve``)."""

    async def checked(scope: Scope, receive: Receive, send: Send) -> None:
        refusal = guard.check(scope["headers"]) if scope["type"] in ("http", "websocket") else None
        if refusal is None:
            await app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
        else:
            body = orjson.dumps({"error": {"type": "forbidden", "message": refusal.message}})
            headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
            await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
            await send({"type": "http.response.body", "body": body})

    return checked
