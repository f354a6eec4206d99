"""The egress protocol without a sandbox: talking to its unix socket the way a hostile
process in the sandbox could, and the forwarder on its own."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from pathlib import Path

import pytest

from bugbout.sandbox import egress as egress_module
from bugbout.sandbox import forward
from bugbout.sandbox.egress import EgressProxy, plan
from egress_support import PYTHON, Echo


def ask(sock: Path, data: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(sock))
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        s.settimeout(10)
        reply = b""
        with contextlib.suppress(ConnectionResetError):  # a refusal with bytes left unread
            while chunk := s.recv(4096):
                reply += chunk
        return reply


def gone(s: socket.socket) -> bool:
    """Whether the peer closed ``s`` (or reset it) without sending anything."""
    try:
        return s.recv(10) == b""
    except ConnectionResetError:
        return True


def test_oversized_and_truncated_requests_are_refused(echo: Echo, socket_dir: Path) -> None:
    sock = socket_dir / "egress.sock"
    with EgressProxy([f"https://127.0.0.1:{echo.port}"], sock) as proxy:
        assert ask(sock, b"X" * 5000) == b""
        assert ask(sock, b"PROXY\nCONNECT " + b"a" * 70000) == b""
        with socket.socket(socket.AF_UNIX) as s:  # gives up half-way through its request
            s.connect(str(sock))
            s.sendall(b"PROXY\nCONNECT 127.0.0.1:1")
            s.shutdown(socket.SHUT_WR)
            assert gone(s)
        assert ask(sock, f"PROXY\nCONNECT 127.0.0.1:{echo.port} HTTP/1.1\r\n\r\nhi".encode()) == (
            b"HTTP/1.1 200 Connection established\r\n\r\nhi"
        )  # bytes sent right after the request head reach the endpoint
    assert len(proxy.refused) == 2 and proxy.refused[0].startswith("XXXX")
    assert proxy.connections == [f"127.0.0.1:{echo.port}"]


def test_stop_cuts_open_connections(echo: Echo, socket_dir: Path) -> None:
    sock = socket_dir / "egress.sock"
    proxy = EgressProxy([f"http://127.0.0.1:{echo.port}"], sock).start()
    relayed = socket.socket(socket.AF_UNIX)
    relayed.connect(str(sock))
    relayed.sendall(f"DIRECT 127.0.0.1:{echo.port}\nping".encode())
    assert relayed.recv(4) == b"ping"
    idle = socket.socket(socket.AF_UNIX)  # never says what it wants
    idle.connect(str(sock))
    start = time.monotonic()
    proxy.stop()
    assert time.monotonic() - start < 5
    assert gone(relayed) and gone(idle)
    assert not sock.exists()
    proxy.stop()  # twice is fine
    relayed.close()
    idle.close()


def test_socket_path_too_long() -> None:
    with pytest.raises(ValueError, match="too long"):
        EgressProxy([], Path("/" + "s" * 200))


def test_the_forwarder_needs_only_the_standard_library(tmp_path: Path) -> None:
    """Isolated mode, no site: bugbout itself is not importable, the forwarder still runs."""
    argv = [*plan([]).forwarder(tmp_path / "none.sock"), PYTHON, "-c", "print('hi')"]
    result = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=30)
    assert (result.returncode, result.stdout, result.stderr) == (0, "hi\n", "")
    probe = [*argv[:3], "-c", "import bugbout"]
    assert subprocess.run(probe, check=False, capture_output=True, timeout=30).returncode != 0


def test_the_forwarder_reports_what_it_cannot_do(tmp_path: Path) -> None:
    base = [PYTHON, "-I", "-S", str(Path(forward.__file__)), "--socket", str(tmp_path / "s")]
    missing = subprocess.run(
        [*base, "--", "/nonexistent/cmd"], check=False, capture_output=True, timeout=30
    )
    assert missing.returncode == 127
    bad_argv = [*base, "--direct", "nowhere", "--", "true"]
    bad = subprocess.run(bad_argv, check=False, capture_output=True, timeout=30)
    assert bad.returncode == 125
    assert egress_module.forward is forward
