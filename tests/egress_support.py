"""What the egress tests share: the interpreter, an echo server, and serving a server
for the length of a test (its fixtures are in conftest.py)."""

from __future__ import annotations

import contextlib
import socketserver
import sys
import threading
from collections.abc import Iterator

PYTHON = sys.executable


class Echo(socketserver.ThreadingTCPServer):
    """A plain TCP echo server on 127.0.0.1 (stands for a TLS endpoint: the proxy only
    tunnels bytes)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _EchoHandler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])


class _EchoHandler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        while data := self.request.recv(4096):
            self.request.sendall(data)


@contextlib.contextmanager
def serving(server: socketserver.BaseServer) -> Iterator[None]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
