"""The egress proxy, attacked for real: a process in bubblewrap with no network (built here,
the whole machine) reaches its model endpoints through the proxy, and nothing else."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import textwrap
import time
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bugbout.sandbox.egress import EgressPlan, EgressProxy, plan
from egress_support import PYTHON, Echo, serving

needs_bwrap = pytest.mark.requires("bubblewrap")


# -- servers standing for the model, and for what must stay out of reach ---------------------


class Model(ThreadingHTTPServer):
    """An HTTP server on 127.0.0.1 that answers every GET with its body and counts them."""

    daemon_threads = True

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.hits = 0
        super().__init__(("127.0.0.1", 0), _ModelHandler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])


class _ModelHandler(BaseHTTPRequestHandler):
    server: Model

    def do_GET(self) -> None:
        self.server.hits += 1
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.server.body)))
        self.end_headers()
        self.wfile.write(self.server.body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def model() -> Iterator[Model]:
    server = Model(b"the model speaks")
    with serving(server):
        yield server


@pytest.fixture
def stranger() -> Iterator[Model]:
    """A server on the host that is NOT an endpoint (think: the upstream fix)."""
    server = Model(b"the upstream fix")
    with serving(server):
        yield server


# -- running a script in the sandbox ---------------------------------------------------------


def bwrap(socket_dir: Path, argv: Sequence[str]) -> list[str]:
    return ["bwrap", "--dev-bind", "/", "/", "--proc", "/proc", "--unshare-net",
            "--unshare-pid", "--die-with-parent", "--bind", str(socket_dir), str(socket_dir),
            "--", *argv]  # fmt: skip


def sandboxed(
    socket_dir: Path, egress: EgressPlan, script: str
) -> tuple[list[str], dict[str, str]]:
    """The bwrap argv and environment that run ``script`` behind the forwarder."""
    sock = socket_dir / "egress.sock"
    argv = bwrap(socket_dir, [*egress.forwarder(sock), PYTHON, "-c", textwrap.dedent(script)])
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    return argv, {**env, **egress.env}


def run_inside(
    endpoints: Sequence[str], script: str, socket_dir: Path, egress: EgressPlan | None = None
) -> tuple[subprocess.CompletedProcess[str], EgressProxy]:
    """Run ``script`` in the sandbox, with egress to ``endpoints``; its result and the proxy."""
    egress = egress or plan(endpoints)
    argv, env = sandboxed(socket_dir, egress, script)
    with EgressProxy(endpoints, socket_dir / "egress.sock") as proxy:
        result = subprocess.run(
            argv, env=env, check=False, capture_output=True, text=True, timeout=60
        )
    return result, proxy


def processes_mentioning(token: str) -> list[int]:
    """Host pids whose command line contains ``token``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if token.encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
    return pids


# -- the sandbox, for real -------------------------------------------------------------------


@needs_bwrap
def test_http_endpoint_is_reachable_and_nothing_else(
    model: Model, stranger: Model, socket_dir: Path
) -> None:
    """(a) the model answers through the forwarder; (b) another host server is not even
    listened on; (d) stdout and the exit code come through; (f) the network is gone."""
    script = f"""
        import socket, urllib.request
        # First thing the child does: the forwarder must already be listening.
        print(urllib.request.urlopen("http://127.0.0.1:{model.port}/", timeout=10).read())
        for address in [("127.0.0.1", {stranger.port}), ("1.1.1.1", 53), ("1.1.1.1", 443)]:
            try:
                socket.create_connection(address, timeout=5)
                print("REACHED", address)
            except OSError as error:
                print("unreachable", address, type(error).__name__)
        raise SystemExit(7)
    """
    result, proxy = run_inside([f"http://127.0.0.1:{model.port}"], script, socket_dir)
    assert result.returncode == 7, result.stderr
    assert "b'the model speaks'" in result.stdout
    assert "REACHED" not in result.stdout
    assert f"unreachable ('127.0.0.1', {stranger.port}) ConnectionRefusedError" in result.stdout
    assert "unreachable ('1.1.1.1', 53)" in result.stdout
    assert (model.hits, stranger.hits) == (1, 0)
    assert proxy.connections == [f"127.0.0.1:{model.port}"]
    assert proxy.refused == []


@needs_bwrap
def test_a_hostile_process_cannot_ask_the_socket_for_other_targets(
    model: Model, stranger: Model, echo: Echo, socket_dir: Path
) -> None:
    """Speaking the protocol itself on the unix socket gets nothing the forwarder would not."""
    sock = socket_dir / "egress.sock"
    script = f"""
        import socket
        def ask(header):
            s = socket.socket(socket.AF_UNIX)
            s.connect({str(sock)!r})
            s.sendall(header)
            s.settimeout(10)
            reply = b""
            try:  # a refusal may come as a reset: unread bytes were left behind
                while chunk := s.recv(4096):
                    reply += chunk
            except ConnectionResetError:
                pass
            return reply
        print("stranger", ask(b"DIRECT 127.0.0.1:{stranger.port}\\nGET / HTTP/1.0\\r\\n\\r\\n"))
        print("tunnel-as-direct", ask(b"DIRECT 127.0.0.1:{echo.port}\\nhello"))
        print("garbage", ask(b"HELLO\\n"))
        get = b"GET http://127.0.0.1:{stranger.port}/ HTTP/1.0\\r\\n\\r\\n"
        print("proxy-get", ask(b"PROXY\\n" + get))
        print("connect-http", ask(b"PROXY\\nCONNECT 127.0.0.1:{model.port} HTTP/1.1\\r\\n\\r\\n"))
        print("smuggle", ask(b"PROXY\\nCONNECT 127.0.0.1:{echo.port}@x:1 HTTP/1.1\\r\\n\\r\\n"))
    """
    endpoints = [f"http://127.0.0.1:{model.port}", f"https://127.0.0.1:{echo.port}"]
    result, proxy = run_inside(endpoints, script, socket_dir)
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert lines["stranger"] == "b''"
    assert lines["tunnel-as-direct"] == "b''"
    assert lines["garbage"] == "b''"
    for name in ("proxy-get", "connect-http", "smuggle"):
        assert lines[name].startswith("b'HTTP/1.1 403 Forbidden"), lines[name]
    assert (model.hits, stranger.hits) == (0, 0)
    assert proxy.connections == []
    assert proxy.refused == [
        f"127.0.0.1:{stranger.port}",
        f"127.0.0.1:{echo.port}",
        "HELLO",
        f"GET http://127.0.0.1:{stranger.port}/ HTTP/1.0",
        f"127.0.0.1:{model.port}",
        f"127.0.0.1:{echo.port}@x:1",
    ]


@needs_bwrap
def test_https_endpoints_are_tunnelled_and_others_refused(
    echo: Echo, socket_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(c) CONNECT to an https endpoint is spliced (TLS or not, the proxy only relays bytes);
    CONNECT elsewhere gets 403, is recorded, and its host is never even resolved."""
    looked_up: list[str] = []
    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host: object, *args: object, **kwargs: object) -> object:
        looked_up.append(str(host))
        if host not in ("127.0.0.1", "localhost"):
            raise socket.gaierror(socket.EAI_NONAME, "no such host (test)")
        return real_getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    script = f"""
        import os, socket
        proxy = os.environ["HTTPS_PROXY"].removeprefix("http://")
        assert os.environ["https_proxy"] == os.environ["HTTPS_PROXY"]
        assert os.environ["NO_PROXY"] == "127.0.0.1,localhost"
        host, port = proxy.rsplit(":", 1)
        def connect(target):
            s = socket.create_connection((host, int(port)), timeout=10)
            s.sendall(f"CONNECT {{target}} HTTP/1.1\\r\\nHost: {{target}}\\r\\n\\r\\n".encode())
            head = b""
            while b"\\r\\n\\r\\n" not in head:
                head += s.recv(1)
            return s, head.split(b"\\r\\n")[0].decode()
        s, status = connect("blocked.example:443")
        print("blocked", status, s.recv(4096) != b"" and s.recv(1) == b"")
        s, status = connect("ALLOWED.example:443")
        print("allowed-unresolvable", status)
        s, status = connect("127.0.0.1:{echo.port}")
        s.sendall(b"ping")
        print("echo", status, s.recv(4096))
        s.shutdown(socket.SHUT_WR)
        print("eof", s.recv(4096))
    """
    endpoints = [f"https://127.0.0.1:{echo.port}", "https://allowed.example:443"]
    result, proxy = run_inside(endpoints, script, socket_dir)
    assert result.returncode == 0, result.stderr
    assert "blocked HTTP/1.1 403 Forbidden True" in result.stdout
    assert "allowed-unresolvable HTTP/1.1 502 Bad Gateway" in result.stdout
    assert "echo HTTP/1.1 200 Connection established b'ping'" in result.stdout
    assert "eof b''" in result.stdout
    assert proxy.refused == ["blocked.example:443"]
    assert proxy.connections == ["allowed.example:443", f"127.0.0.1:{echo.port}"]
    assert "blocked.example" not in looked_up
    assert "allowed.example" in looked_up


@needs_bwrap
def test_non_local_http_endpoints_are_served_at_a_rewritten_url(
    model: Model, socket_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ``http://`` endpoint on another host is listened on at a fresh local port."""
    real = socket.create_connection

    def create_connection(address: tuple[str, int], *args: object, **kw: object) -> socket.socket:
        if address == ("model.internal", 8080):  # "model.internal" is the test's model
            address = ("127.0.0.1", model.port)
        return real(address, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "create_connection", create_connection)
    endpoint = "http://model.internal:8080/v1"
    egress = plan([endpoint])
    inside = egress.urls[endpoint]
    assert inside.startswith("http://127.0.0.1:") and inside.endswith("/v1")
    script = f"""
        import urllib.request
        print(urllib.request.urlopen({inside!r}, timeout=10).read())
    """
    result, proxy = run_inside([endpoint], script, socket_dir, egress)
    assert result.returncode == 0, result.stderr
    assert "b'the model speaks'" in result.stdout
    assert proxy.connections == ["model.internal:8080"]


@needs_bwrap
@pytest.mark.parametrize(
    ("script", "code"),
    [
        ("import sys; print('out'); print('err', file=sys.stderr); sys.exit(42)", 42),
        ("import os, signal; print('out', flush=True); os.kill(os.getpid(), signal.SIGKILL)", 137),
    ],
)
def test_the_childs_output_and_exit_status_pass_through(
    script: str, code: int, socket_dir: Path
) -> None:
    """(d) stdout, stderr and the exit status (128 + n for signal n) come through."""
    result, _ = run_inside([], script, socket_dir)
    assert (result.returncode, result.stdout) == (code, "out\n")
    assert result.stderr.startswith("err") or code == 137


@needs_bwrap
def test_signals_reach_the_child(socket_dir: Path) -> None:
    """SIGTERM to the forwarder is passed to the child, whose death is the exit status."""
    script = """
        import signal, time
        signal.signal(signal.SIGTERM, lambda *_: (print("got SIGTERM", flush=True), exit(3)))
        print("ready", flush=True)
        time.sleep(60)
    """
    argv, env = sandboxed(socket_dir, plan([]), script)
    with (
        EgressProxy([], socket_dir / "egress.sock"),
        subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True) as process,
    ):
        assert process.stdout is not None
        assert process.stdout.readline() == "ready\n"
        (forwarder,) = [
            pid for pid in processes_mentioning(str(socket_dir))
            if b"forward.py" in Path(f"/proc/{pid}/cmdline").read_bytes()
            and not Path(f"/proc/{pid}/exe").resolve().name.startswith("bwrap")
        ]  # fmt: skip
        os.kill(forwarder, signal.SIGTERM)
        assert process.wait(timeout=20) == 3
        assert process.stdout.read() == "got SIGTERM\n"


@needs_bwrap
def test_nothing_outlives_the_child(echo: Echo, socket_dir: Path) -> None:
    """(e) when the child exits, the sandbox goes at once: listeners, open relays, and what
    the child left running in the background."""
    token = f"left-behind-{os.getpid()}-{time.monotonic_ns()}"
    script = f"""
        import socket, subprocess, sys
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", {token!r}],
                         start_new_session=True)
        s = socket.create_connection(("127.0.0.1", {echo.port}), timeout=10)
        s.sendall(b"held open")
        print(s.recv(4096).decode(), flush=True)
        sys.exit(0)  # leaving the relay open and the sleeper running
    """
    egress = plan([f"http://127.0.0.1:{echo.port}"])
    argv, env = sandboxed(socket_dir, egress, script)
    sock = socket_dir / "egress.sock"
    with EgressProxy([f"http://127.0.0.1:{echo.port}"], sock) as proxy:
        start = time.monotonic()
        result = subprocess.run(
            argv, env=env, check=False, capture_output=True, text=True, timeout=60
        )
        elapsed = time.monotonic() - start
        assert (result.returncode, result.stdout) == (0, "held open\n"), result.stderr
        assert elapsed < 10
        assert processes_mentioning(token) == []
        assert processes_mentioning(str(sock)) == []
        assert proxy.connections == [f"127.0.0.1:{echo.port}"]
    assert not sock.exists()
