"""Egress to an agent's model endpoints only, for a process in a sandbox without network.

A confined agent process has no network, yet must reach its model (DESIGN §7). Two halves
make that possible without opening the network:

- outside, :class:`EgressProxy` (run by bugbout) listens on a unix socket that the sandbox
  can reach, and connects only to the agent's declared endpoints;
- inside, :mod:`bugbout.sandbox.forward` (the agent's parent process in the sandbox) listens
  on the sandbox's own loopback and relays each connection over that socket.

:func:`plan` says how the inside looks: each ``http://`` endpoint is served inside at the
same address when it is on ``127.0.0.1``/``localhost``, else at a fresh ``127.0.0.1`` port
(the agent must then be given the rewritten URL, :attr:`EgressPlan.urls`; the request's
``Host`` header names that local address). ``https://`` endpoints go through one inside HTTP
proxy (``HTTPS_PROXY``) that only tunnels (``CONNECT``) to their ``host:port``; TLS stays
end to end between the agent and its endpoint.

Typical use (the socket's directory must be reachable, and writable, in the sandbox)::

    egress = plan(invocation.endpoints)
    with EgressProxy(invocation.endpoints, socket_path) as proxy:
        argv = sandbox.wrap([*egress.forwarder(socket_path), *agent_argv], confinement)
        run(argv, env={**agent_env, **egress.env})
    log(proxy.connections, proxy.refused)

This needs a sandbox with its own network namespace (bubblewrap, podman): the inside
listeners take the endpoints' own ``127.0.0.1`` ports, which are in use on the host.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import socket
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit, urlunsplit

from bugbout.sandbox import forward
from bugbout.sandbox.forward import format_address, parse_address, splice

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost"})
"""Hosts whose ``http://`` endpoints are served inside the sandbox at the same address."""
INSIDE_HOST = "127.0.0.1"
NO_PROXY = "127.0.0.1,localhost"
HANDSHAKE_TIMEOUT = 30.0
CONNECT_TIMEOUT = 30.0
MAX_HEADER = 1024
MAX_REQUEST = 65536
MAX_UNIX_PATH = 107  # sun_path holds 108 bytes on Linux (104 on macOS), with a final NUL


def _endpoint(url: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of an endpoint URL; ``ValueError`` if it is not one."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http:// or https:// endpoint: {url!r}")
    port = parts.port or (443 if parts.scheme == "https" else 80)  # ValueError if malformed
    return parts.scheme, parts.hostname, port


@dataclass(frozen=True)
class EgressPlan:
    """What the inside of the sandbox needs to reach the endpoints."""

    urls: dict[str, str] = field(default_factory=dict)
    """Each endpoint, as given, and the URL the agent must use for it inside (the same URL
    except for ``http://`` endpoints on other hosts than ``127.0.0.1``/``localhost``)."""
    direct: tuple[tuple[str, str], ...] = ()
    """``(listen, target)`` pairs, ``host:port`` each: the inside listens on ``listen`` and the
    outside connects to the ``http://`` endpoint ``target``."""
    proxy: str | None = None
    """The inside HTTP proxy's ``host:port``, when there is an ``https://`` endpoint."""
    env: dict[str, str] = field(default_factory=dict)
    """Variables for the agent's environment (``HTTPS_PROXY``, ``https_proxy``, ``NO_PROXY``,
    ``no_proxy``); empty without ``https://`` endpoints."""

    def forwarder(self, socket_path: Path) -> list[str]:
        """The argv prefix that runs the forwarder in the sandbox; the agent's argv follows.

        The forwarder runs with this interpreter, as a plain script in isolated mode (no
        site-packages, no ``PYTHON*`` variables), so only the interpreter and its standard
        library must be readable in the sandbox.
        """
        argv = [sys.executable, "-I", "-S", str(Path(forward.__file__).resolve())]
        argv += ["--socket", str(socket_path)]
        for listen, target in self.direct:
            argv += ["--direct", f"{listen}={target}"]
        if self.proxy:
            argv += ["--proxy", self.proxy]
        return [*argv, "--"]


def plan(endpoints: Sequence[str]) -> EgressPlan:
    """How the inside of a sandbox reaches ``endpoints``; ``ValueError`` for a bad endpoint."""
    urls: dict[str, str] = {}
    direct: dict[str, str] = {}  # listen -> target
    remote: list[tuple[str, str]] = []  # (url, target) served at a fresh local port
    https = False
    for url in endpoints:
        scheme, host, port = _endpoint(url)
        if scheme == "https":
            https = True
            urls[url] = url
        elif host in LOCAL_HOSTS:
            direct.setdefault(format_address(INSIDE_HOST, port), format_address(host, port))
            urls[url] = url
        else:
            remote.append((url, format_address(host, port)))
    taken = {parse_address(listen)[1] for listen in direct}
    by_target: dict[str, str] = {}
    for url, target in remote:
        if target not in by_target:
            by_target[target] = format_address(INSIDE_HOST, _free_port(taken))
            direct[by_target[target]] = target
        parts = urlsplit(url)
        urls[url] = urlunsplit(parts._replace(netloc=by_target[target]))
    if not https:
        return EgressPlan(urls=urls, direct=tuple(direct.items()))
    proxy = format_address(INSIDE_HOST, _free_port(taken))
    url = f"http://{proxy}"
    env = {"HTTPS_PROXY": url, "https_proxy": url, "NO_PROXY": NO_PROXY, "no_proxy": NO_PROXY}
    return EgressPlan(urls=urls, direct=tuple(direct.items()), proxy=proxy, env=env)


def _free_port(taken: set[int]) -> int:
    """A port that no other inside listener takes (and that is free on the host too)."""
    while True:
        with socket.socket() as probe:
            probe.bind((INSIDE_HOST, 0))
            port: int = probe.getsockname()[1]
        if port not in taken:
            taken.add(port)
            return port


class _Refused(Exception):
    """A connection that asks for something not allowed (the message says what)."""


class EgressProxy:
    """Serves the forwarder's unix socket: connections to the endpoints only.

    A context manager (or :meth:`start`/:meth:`stop`). Each connection starts with one line:

    - ``DIRECT host:port``: allowed when it is an ``http://`` endpoint's address; the proxy
      connects and relays bytes;
    - ``PROXY``: an HTTP proxy request follows. ``CONNECT host:port`` to an ``https://``
      endpoint's address (port 443 by default) is answered ``200 Connection established``
      and relayed; anything else gets ``403 Forbidden``.

    Hosts are compared as written in the endpoints (case aside): nothing is resolved before a
    target is allowed. :attr:`connections` lists the allowed targets, :attr:`refused` the
    refused ones (``host:port``, or the offending line), both in order.
    """

    def __init__(self, endpoints: Sequence[str], socket_path: Path) -> None:
        if len(os.fsencode(socket_path)) > MAX_UNIX_PATH:
            raise ValueError(f"unix socket path too long ({MAX_UNIX_PATH} bytes): {socket_path}")
        self.socket_path = socket_path
        self.connections: list[str] = []
        self.refused: list[str] = []
        self._direct: set[tuple[str, int]] = set()
        self._tunnel: set[tuple[str, int]] = set()
        for url in endpoints:
            scheme, host, port = _endpoint(url)
            (self._tunnel if scheme == "https" else self._direct).add((host, port))
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._threads: set[threading.Thread] = set()
        self._server: socket.socket | None = None
        self._wake: tuple[socket.socket, socket.socket] | None = None
        self._acceptor: threading.Thread | None = None
        self._stopping = False

    def __enter__(self) -> EgressProxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> EgressProxy:
        """Listen on the socket (which must not exist yet) and serve in the background."""
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.bind(str(self.socket_path))
            self.socket_path.chmod(0o600)
            server.listen(64)
        except OSError:
            server.close()
            raise
        self._server = server
        self._wake = socket.socketpair()
        self._acceptor = threading.Thread(target=self._accept, name="egress-accept", daemon=True)
        self._acceptor.start()
        return self

    def stop(self) -> None:
        """Stop accepting, cut every open connection, wait for the threads, remove the socket."""
        if self._server is None or self._wake is None or self._acceptor is None:
            return
        with self._lock:
            self._stopping = True
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            threads = list(self._threads)
        self._wake[1].send(b"x")
        self._acceptor.join()
        for thread in threads:
            thread.join(timeout=5)
        self._server.close()
        for end in self._wake:
            end.close()
        self._server = self._wake = self._acceptor = None
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()

    # -- serving ----------------------------------------------------------------------------

    def _accept(self) -> None:
        assert self._server is not None and self._wake is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self._server, selectors.EVENT_READ)
            selector.register(self._wake[0], selectors.EVENT_READ)
            while True:
                ready = {key.fileobj for key, _ in selector.select()}
                if self._wake[0] in ready:
                    return
                try:
                    inside, _ = self._server.accept()
                except OSError:
                    continue
                thread = threading.Thread(target=self._serve, args=(inside,), daemon=True)
                with self._lock:
                    if self._stopping:
                        inside.close()
                        return
                    self._threads.add(thread)
                    self._sockets.add(inside)
                thread.start()

    def _serve(self, inside: socket.socket) -> None:
        """One connection from the inside: its header, then a relay or a refusal."""
        outside: socket.socket | None = None
        try:
            inside.settimeout(HANDSHAKE_TIMEOUT)
            line, rest = _read_until(inside, b"\n", MAX_HEADER)
            if line == b"PROXY":
                outside, rest = self._tunnel_to(inside, rest)
            elif line.startswith(b"DIRECT "):
                outside = self._connect(self._direct, line[len(b"DIRECT ") :].decode("latin-1"))
            else:
                raise _Refused(_show(line))
            if outside is not None:
                inside.settimeout(None)
                outside.sendall(rest)
                with self._lock:
                    self._sockets.add(outside)
                    stopping = self._stopping
                if not stopping:
                    splice(inside, outside)
        except _Refused as refusal:
            with self._lock:
                self.refused.append(str(refusal))
        except (OSError, ValueError):
            pass  # a connection that went away or that did not finish its request
        finally:
            inside.close()
            if outside is not None:
                outside.close()
            with self._lock:
                self._sockets.discard(inside)
                if outside is not None:
                    self._sockets.discard(outside)
                self._threads.discard(threading.current_thread())

    def _tunnel_to(self, inside: socket.socket, rest: bytes) -> tuple[socket.socket | None, bytes]:
        """Answer an HTTP proxy request; the open connection when it is an allowed CONNECT."""
        head, rest = _read_until(inside, b"\r\n\r\n", MAX_REQUEST, rest)
        request = head.split(b"\r\n", 1)[0]
        words = request.split(b" ")
        if len(words) != 3 or words[0] != b"CONNECT" or not words[2].startswith(b"HTTP/1."):
            inside.sendall(_response(403, "Forbidden"))
            raise _Refused(_show(request))
        try:
            outside = self._connect(self._tunnel, words[1].decode("latin-1"))
        except _Refused:
            inside.sendall(_response(403, "Forbidden"))
            raise
        if outside is None:
            inside.sendall(_response(502, "Bad Gateway"))
            return None, b""
        inside.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        return outside, rest

    def _connect(self, allowed: set[tuple[str, int]], target: str) -> socket.socket | None:
        """A connection to ``target`` if it is ``allowed`` (``None`` if it cannot be made)."""
        try:
            host, port = parse_address(target)
        except ValueError:
            raise _Refused(_show(target.encode("latin-1"))) from None
        host = host.lower()
        shown = format_address(host, port)
        if (host, port) not in allowed:
            raise _Refused(shown)
        with self._lock:
            self.connections.append(shown)
        try:
            return socket.create_connection((host, port), timeout=CONNECT_TIMEOUT)
        except OSError:
            return None


def _read_until(
    sock: socket.socket, delimiter: bytes, limit: int, data: bytes = b""
) -> tuple[bytes, bytes]:
    """Bytes up to ``delimiter`` (excluded) and those after it: refused past ``limit`` bytes,
    ``ValueError`` at the end of the stream."""
    while delimiter not in data:
        if len(data) > limit:
            raise _Refused(_show(data[:200]))
        chunk = sock.recv(4096)
        if not chunk:
            raise ValueError("connection closed during the request")
        data += chunk
    head, _, rest = data.partition(delimiter)
    if len(head) > limit:
        raise _Refused(_show(head[:200]))
    return head, rest


def _show(line: bytes) -> str:
    """An untrusted line, printable and short, for :attr:`EgressProxy.refused`."""
    text = repr(line)[2:-1]
    return text if len(text) <= 200 else text[:200] + "..."


def _response(status: int, reason: str) -> bytes:
    body = f"{status} {reason}: bugbout lets this sandbox reach its model endpoints only\n"
    head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\n"
    head += f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    return (head + body).encode()
