"""`/metrics`, `/healthz` and `/readyz` over the standard library's threading HTTP server.

Addresses follow Cilium's flag form `[host]:port`; an empty host binds 127.0.0.1 (never all
interfaces unless the user names a host). Port 0 picks a free port (tests read `.port`).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Route = Callable[[], tuple[int, str, bytes]]
"""() -> (status, content type, body)."""


class AddressError(ValueError):
    pass


def parse_address(flag: str, value: str) -> tuple[str, int]:
    """`:9963` -> ('127.0.0.1', 9963); `0.0.0.0:9963` binds what the user named."""
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdecimal() or int(port) > 65535:
        raise AddressError(f"--{flag} expects [host]:port such as :9963 or 127.0.0.1:9963, got {value!r}")
    return (host.strip("[]") or "127.0.0.1", int(port))


class _V6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6


class Endpoints:
    """One HTTP server with fixed GET routes, serving from a daemon thread."""

    def __init__(self, host: str, port: int, routes: dict[str, Route]) -> None:
        table = dict(routes)

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                route = table.get(self.path.split("?", 1)[0])
                if route is None:
                    status, ctype, body = 404, "text/plain", b"not found\n"
                else:
                    status, ctype, body = route()
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
                return None

        server_class = _V6Server if ":" in host else ThreadingHTTPServer
        self._server = server_class((host, port), Handler)
        self._server.daemon_threads = True
        self.host = host
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=f"http-{self.port}", daemon=True
        )

    def start(self) -> Endpoints:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def text(status: int, body: str) -> tuple[int, str, bytes]:
    return status, "text/plain; charset=utf-8", body.encode()
