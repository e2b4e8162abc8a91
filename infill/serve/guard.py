"""Who may talk to ``infill serve``: requests that name this server, and changes asked by its own
page.

Any web page the user opens can send requests to a server on the user's machine: a page on
another site may POST a "simple" request (``Content-Type: text/plain``, no CORS preflight), and a
site whose DNS name is rebound to 127.0.0.1 reads the answers as its own. So, as local servers
do, every request must name this server in its ``Host`` header -- localhost, a loopback address,
the address it listens on (any address of the machine when it listens on all of them), or a
name given with ``--allow-host``: a rebound name never does. The port is not compared (an SSH
tunnel forwards another port to this one). A POST must come from this server's own page: its
``Origin``, when the browser sends one, is this server's, and its body is declared JSON --
which no page of another site can send without a CORS preflight, and this server grants none.
Refusals are ``{"error": ...}``: 403 for a foreign Host or Origin, 415 for a body that is not
declared JSON; each is logged as one line.
"""
from __future__ import annotations

import ipaddress
import json
import logging
from collections.abc import Iterable
from urllib.parse import urlsplit

__all__ = ["LocalOnly", "host_names"]

log = logging.getLogger("infill.serve")

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
WILDCARDS = ("", "0.0.0.0", "::")
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
JSON_TYPE = "application/json"
DEFAULT_PORTS = {"http": 80, "https": 443}


class Refused(Exception):
    """A request this server does not answer: ``status`` and a one-line reason."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def host_names(host: str, allow_hosts: Iterable[str] = ()) -> frozenset[str]:
    """The host names a request may give: loopback, the listening ``host`` and ``allow_hosts``
    (lower case, IPv6 without brackets)."""
    names = {*LOOPBACK_NAMES, host, *allow_hosts}
    return frozenset(n.strip().strip("[]").lower() for n in names)


def _split(netloc: str, scheme: str) -> tuple[str, int]:
    """(host name, port) of a ``Host`` value or an origin's netloc; ValueError if malformed."""
    parts = urlsplit(f"//{netloc}")
    if not parts.hostname or parts.username is not None or parts.path:
        raise ValueError(netloc)
    return parts.hostname, parts.port or DEFAULT_PORTS.get(scheme, 80)


class LocalOnly:
    """ASGI middleware: refuses what the module docstring says before the application sees it.
    ``names``: the accepted host names (:func:`host_names`); ``any_address``: the server listens
    on every address, so any IP address literal names it too."""

    def __init__(self, app, names: frozenset[str], any_address: bool = False):
        self.app, self.names, self.any_address = app, names, any_address

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            try:
                self.check(scope)
            except Refused as e:
                await self.refuse(scope, send, e)
                return
        await self.app(scope, receive, send)

    def check(self, scope) -> None:
        """Raises :class:`Refused` unless the request names this server (and, for a change,
        comes from its page with a JSON body)."""
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        host = self.host(headers.get("host", ""), scope.get("scheme", "http"))
        if scope["method"] not in SAFE_METHODS:
            self.check_origin(headers.get("origin"), host, scope.get("scheme", "http"))
            media = headers.get("content-type", "").split(";")[0].strip().lower()
            if media != JSON_TYPE and scope["method"] == "POST":   # others: the app's 405
                raise Refused(415, f"the request body must be JSON (Content-Type: {JSON_TYPE}), "
                                   f"not {media or 'undeclared'!r}")

    def host(self, value: str, scheme: str) -> tuple[str, int]:
        """(name, port) of a ``Host`` header that names this server; else :class:`Refused`."""
        try:
            name, port = _split(value, scheme)
        except ValueError:
            raise Refused(403, f"Host {value[:80]!r} does not name this server") from None
        if name not in self.names and not self.is_address(name):
            raise Refused(403, f"Host {name[:80]!r} is not this server's name (the server's "
                               "allow_hosts accept others)")
        return name, port

    def is_address(self, name: str) -> bool:
        """Whether ``name`` is an IP address that may name this server: a loopback one, or any
        when the server listens on all addresses."""
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            return False
        return address.is_loopback or self.any_address

    @staticmethod
    def check_origin(origin: str | None, host: tuple[str, int], scheme: str) -> None:
        """A change must come from this server's own page: the ``Origin`` (when sent) is the
        origin of the ``Host`` the request names."""
        if origin is None:
            return
        parts = urlsplit(origin)
        try:
            theirs = _split(parts.netloc, parts.scheme) if parts.scheme in DEFAULT_PORTS else None
        except ValueError:
            theirs = None
        if theirs != host:
            raise Refused(403, f"cross-origin request from {origin[:80]!r} refused (the "
                               "workbench answers its own page only)")

    @staticmethod
    async def refuse(scope, send, e: Refused) -> None:
        """Answer ``{"error": ...}`` with the refusal's status, and log one line."""
        log.warning("refused %s %s: %s", scope["method"], scope["path"], e)
        body = json.dumps({"error": str(e)}, ensure_ascii=False).encode()
        await send({"type": "http.response.start", "status": e.status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
