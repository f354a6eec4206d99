"""The inside half of the egress proxy: listeners in the sandbox, relayed over a unix socket.

Runs INSIDE a sandbox that has no network (only loopback), as::

    python -I -S forward.py --socket PATH [--direct LISTEN[=TARGET]]... [--proxy LISTEN] -- argv...

It listens on each ``LISTEN`` address (``127.0.0.1:4321``) of the sandbox's own loopback,
then runs ``argv`` as its child (same stdin, stdout, stderr and process group), forwards
SIGTERM, SIGINT and SIGHUP to it, and exits with its exit code (``128 + n`` when the child
dies of signal ``n``). Listening starts before the child does, so the child never races
its own endpoints.

Every accepted connection opens ``PATH`` (served by :class:`bugbout.sandbox.egress.EgressProxy`
outside the sandbox), sends one header line and then relays bytes both ways:

- ``DIRECT host:port`` for a ``--direct`` listener (``TARGET``, or ``LISTEN`` when no target
  is given): the outside connects to that endpoint if it is allowed;
- ``PROXY`` for the ``--proxy`` listener: what follows is an HTTP proxy conversation
  (``CONNECT host:port``) that the outside answers.

The outside decides what is allowed; this side only relays. The module imports nothing but
the standard library, so it runs as a plain script with ``-I -S`` (no site-packages, no
``PYTHON*`` variables, not even its own directory on ``sys.path``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence
from types import FrameType

CHUNK = 65536
RELAYED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")
IPV6_CHARS = frozenset("0123456789abcdefABCDEF:.")


def parse_address(text: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:port`` for IPv6) as ``(host, port)``; ``ValueError`` if malformed."""
    host, sep, port = text.rpartition(":")
    allowed = HOST_CHARS
    if host.startswith("[") and host.endswith("]"):
        host, allowed = host[1:-1], IPV6_CHARS
    valid = sep and host and set(host) <= allowed and port.isascii() and port.isdigit()
    if not valid or not 0 < int(port) < 65536:
        raise ValueError(f"not a host:port address: {text!r}")
    return host, int(port)


def format_address(host: str, port: int) -> str:
    """``(host, port)`` as ``host:port`` (brackets around an IPv6 host)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def splice(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways between ``a`` and ``b`` until both directions end, then close both.

    An end of stream on one side half-closes the other (so request/response protocols that
    shut down their writing side still work); an error on either side ends both directions.
    """
    peer = {a: b, b: a}
    with selectors.DefaultSelector() as selector:
        try:
            for sock in (a, b):
                sock.setblocking(True)
                selector.register(sock, selectors.EVENT_READ, sock)
            reading = 2
            while reading:
                for key, _ in selector.select():
                    source: socket.socket = key.data
                    data = source.recv(CHUNK)
                    if data:
                        peer[source].sendall(data)
                        continue
                    selector.unregister(source)
                    reading -= 1
                    with contextlib.suppress(OSError):
                        peer[source].shutdown(socket.SHUT_WR)
        except (OSError, ValueError):
            pass  # a reset, or a socket closed under us by a shutdown: both directions end
        finally:
            a.close()
            b.close()


class _Relay:
    """Serves one inside listener: each connection becomes a relayed unix connection."""

    def __init__(self, socket_path: str, listen: str, header: bytes) -> None:
        self.socket_path = socket_path
        self.header = header
        host, port = parse_address(listen)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.server = socket.socket(family, socket.SOCK_STREAM)
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind((host, port))
        self.server.listen(64)

    def start(self) -> None:
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            upstream.connect(self.socket_path)
            upstream.sendall(self.header)
        except OSError:
            upstream.close()
            client.close()
            return
        splice(client, upstream)


def _parse(argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
    args = list(argv)
    if "--" not in args:
        raise SystemExit("forward: missing '--' before the command to run")
    split = args.index("--")
    command = args[split + 1 :]
    if not command:
        raise SystemExit("forward: no command to run after '--'")
    parser = argparse.ArgumentParser(prog="forward", description=__doc__.splitlines()[0])
    parser.add_argument("--socket", required=True, help="the egress proxy's unix socket")
    parser.add_argument(
        "--direct", action="append", default=[], metavar="LISTEN[=TARGET]",
        help="relay connections to LISTEN to the endpoint TARGET (default: LISTEN)",
    )  # fmt: skip
    parser.add_argument("--proxy", metavar="LISTEN", help="an HTTP proxy (CONNECT) on LISTEN")
    return parser.parse_args(args[:split]), command


def _relays(options: argparse.Namespace) -> list[_Relay]:
    """One bound, listening relay per ``--direct`` and ``--proxy`` option."""
    wanted: list[tuple[str, bytes]] = []
    for spec in options.direct:
        listen, _, target = spec.partition("=")
        host, port = parse_address(target or listen)
        wanted.append((listen, f"DIRECT {format_address(host, port)}\n".encode()))
    if options.proxy:
        wanted.append((options.proxy, b"PROXY\n"))
    return [_Relay(options.socket, listen, header) for listen, header in wanted]


def main(argv: Sequence[str] | None = None) -> int:
    """Listen, run the command, and return its exit status (``128 + n`` for signal ``n``)."""
    options, command = _parse(sys.argv[1:] if argv is None else argv)
    try:
        relays = _relays(options)
    except (OSError, ValueError) as error:
        print(f"forward: cannot listen: {error}", file=sys.stderr)
        return 125
    for relay in relays:
        relay.start()

    # Handlers go in before the child starts: a signal in between is kept and passed on.
    children: list[subprocess.Popen[bytes]] = []
    pending: list[int] = []

    def relay_signal(signum: int, _frame: FrameType | None) -> None:
        if not children:
            pending.append(signum)
            return
        with contextlib.suppress(OSError):
            children[0].send_signal(signum)

    for signum in RELAYED_SIGNALS:
        signal.signal(signum, relay_signal)
    try:
        children.append(subprocess.Popen(command))
    except OSError as error:
        print(f"forward: cannot run {command[0]!r}: {error}", file=sys.stderr)
        return 127 if isinstance(error, FileNotFoundError) else 126
    for early in pending:
        relay_signal(early, None)
    code = children[0].wait()
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Threads may still be relaying for a grandchild: do not wait for them.
    os._exit(status)
