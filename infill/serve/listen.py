"""How ``infill serve`` listens: the address checked before anything starts, and JSON answers
to malformed HTTP.

uvicorn parses HTTP with h11 (httptools when installed). A request the parser rejects -- a
``Content-Length: -1``, a header name with non-ASCII bytes, a request line that is not HTTP --
never reaches the application, so its exception handlers cannot answer it; uvicorn answers a
plain-text 400 itself. :class:`JsonErrorsH11Protocol` is uvicorn's h11 protocol with that one
answer replaced by the application's ``{"error": ...}`` form, and ``infill serve`` runs with it
(so the h11 parser is used even where httptools is installed).
"""
from __future__ import annotations

import errno
import functools
import json
import socket

from infill.errors import ConfigError

__all__ = ["JsonErrorsH11Protocol", "check_address"]


def check_address(host: str, port: int) -> None:
    """ConfigError (one line) unless ``host`` resolves and ``host:port`` can be listened on
    now: an unknown host name, a port in use or one that needs privileges are refused before
    any model loads (uvicorn itself would log them and exit 3)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as e:
        reason = getattr(e, "strerror", None) or str(e)
        raise ConfigError(f"'host' {host!r}: not an address of this machine ({reason})",
                          field="host") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # as uvicorn binds
        try:
            s.bind(address)
        except OSError as e:
            raise ConfigError(f"cannot listen on {host}:{port}: {e.strerror or e}"
                              + (" (another server is using that port; pick another 'port')"
                                 if e.errno == errno.EADDRINUSE else ""), field="port") from None


@functools.lru_cache(maxsize=None)
def _protocol_class():
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class JsonErrors(H11Protocol):
        """uvicorn's h11 protocol; a request the parser rejects gets a JSON 400."""

        def send_400_response(self, msg: str) -> None:
            body = json.dumps({"error": "malformed HTTP request: its request line, a header or "
                               "the Content-Length was refused by the HTTP parser"}).encode()
            headers = [(b"content-type", b"application/json"), (b"connection", b"close"),
                       (b"content-length", str(len(body)).encode())]
            self.transport.write(self.conn.send(h11.Response(status_code=400, headers=headers,
                                                             reason=b"Bad Request")))
            self.transport.write(self.conn.send(h11.Data(data=body)))
            self.transport.write(self.conn.send(h11.EndOfMessage()))
            self.transport.close()

    return JsonErrors


def __getattr__(name: str):
    if name == "JsonErrorsH11Protocol":    # built on first use: importing this costs no uvicorn
        return _protocol_class()
    raise AttributeError(name)
