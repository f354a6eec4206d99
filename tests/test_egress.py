"""The egress proxy, attacked for real: a process in bubblewrap with no network reaches its
model endpoints through the forwarder and the proxy, and nothing else.

The bwrap command is built here (the whole machine, a fresh network and pid namespace), so
these tests stand on their own: the sandbox plugins only add masks around the same thing.
The protocol's refusals are also checked without a sandbox, by talking to the unix socket
the way a hostile process in the sandbox could.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import socketserver
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bugbout.sandbox import egress as egress_module
from bugbout.sandbox import forward
from bugbout.sandbox.egress import EgressPlan, EgressProxy, plan

PYTHON = sys.executable


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


@pytest.fixture
def echo() -> Iterator[Echo]:
    server = Echo()
    with serving(server):
        yield server


@pytest.fixture
def socket_dir() -> Iterator[Path]:
    """A short directory for the unix socket (``sun_path`` is short)."""
    with tempfile.TemporaryDirectory(prefix="bb-egress-") as path:
        yield Path(path)


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


# -- the plan --------------------------------------------------------------------------------


def test_plan_for_mixed_endpoints() -> None:
    endpoints = [
        "http://127.0.0.1:4321",
        "http://localhost:5000/v1",
        "http://10.1.2.3:8080",
        "https://api.anthropic.com",
        "https://generativelanguage.googleapis.com:443",
    ]
    egress = plan(endpoints)
    assert egress.urls["http://127.0.0.1:4321"] == "http://127.0.0.1:4321"
    assert egress.urls["http://localhost:5000/v1"] == "http://localhost:5000/v1"
    assert egress.urls["https://api.anthropic.com"] == "https://api.anthropic.com"
    rewritten = egress.urls["http://10.1.2.3:8080"]
    assert rewritten.startswith("http://127.0.0.1:")
    assert egress.direct[:2] == (("127.0.0.1:4321", "127.0.0.1:4321"),
                                 ("127.0.0.1:5000", "localhost:5000"))  # fmt: skip
    assert egress.direct[2] == (rewritten.removeprefix("http://"), "10.1.2.3:8080")
    assert egress.proxy is not None
    ports = {int(listen.rsplit(":", 1)[1]) for listen, _ in egress.direct}
    assert len(ports) == 3 and int(egress.proxy.rsplit(":", 1)[1]) not in ports
    assert egress.env == {
        "HTTPS_PROXY": f"http://{egress.proxy}",
        "https_proxy": f"http://{egress.proxy}",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    argv = egress.forwarder(Path("/s/egress.sock"))
    assert argv[:4] == [sys.executable, "-I", "-S", str(Path(forward.__file__).resolve())]
    assert argv[4:] == ["--socket", "/s/egress.sock", "--direct", "127.0.0.1:4321=127.0.0.1:4321",
                        "--direct", "127.0.0.1:5000=localhost:5000",
                        "--direct", f"{egress.direct[2][0]}=10.1.2.3:8080",
                        "--proxy", egress.proxy, "--"]  # fmt: skip


def test_plan_without_https_sets_no_proxy_variables() -> None:
    egress = plan(["http://127.0.0.1:4321"])
    assert (egress.proxy, egress.env) == (None, {})
    assert plan([]) == EgressPlan()


@pytest.mark.parametrize("bad", ["ftp://x", "api.anthropic.com", "https://", "http://h:99999"])
def test_bad_endpoints_are_rejected(bad: str) -> None:
    with pytest.raises(ValueError):
        plan([bad])
    with pytest.raises(ValueError):
        EgressProxy([bad], Path("/nonexistent/s"))


# -- the protocol, without a sandbox ---------------------------------------------------------


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
