"""The sandboxes' network, attacked for real: host services and daemons' sockets out of
reach without network, loopback and the egress socket kept, the resolver under /run."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bugbout.plugins.sandboxes import bubblewrap as bubblewrap_module
from bugbout.plugins.sandboxes.bubblewrap import Bubblewrap, BubblewrapOptions
from bugbout.plugins.sandboxes.seatbelt import Seatbelt
from sandbox_world import ENV, ON_LINUX, World, _make, _sh, python, run

# -- unix sockets: the daemons' in /run, the egress proxy's, the resolver's file ----------


@pytest.mark.skipif(not ON_LINUX or not os.access("/run", os.W_OK), reason="needs to write /run")
def test_the_daemons_sockets_in_run_are_out_of_reach(world: World) -> None:
    """A read-only mount does not stop connect() on a unix socket (docker's would give
    root and the network): /run is replaced by an empty directory."""
    path = Path(f"/run/bugbout-test-{uuid.uuid4().hex[:12]}.sock")
    connect = python(
        f"""
        import socket
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect({str(path)!r}); print("CONNECTED", s.recv(64).decode())
        except OSError as exc:
            print("REFUSED", exc)
        """
    )
    with _unix_server(path):
        hidden = run(_make("bubblewrap"), world.confinement(), connect)
        assert "REFUSED" in hidden.stdout and "daemon" not in hidden.stdout, hidden
        shared = run(Bubblewrap(BubblewrapOptions(hide_run=False)), world.confinement(), connect)
        assert "CONNECTED daemon" in shared.stdout, shared  # the hole hide_run closes


def test_a_host_socket_in_a_writable_directory_is_reachable_without_network(
    bwrap: Bubblewrap, world: World
) -> None:
    """The way out that bugbout.sandbox.egress relies on: its proxy listens on a unix
    socket in a directory the sandbox may write, and nothing else gets out."""
    path = world.logs / "egress.sock"
    connect = python(
        f"""
        import socket
        s = socket.socket(socket.AF_UNIX)
        s.connect({str(path)!r}); print("CONNECTED", s.recv(64).decode())
        """
    )
    with _unix_server(path):
        result = run(bwrap, world.confinement(network=False), connect)
    assert "CONNECTED daemon" in result.stdout, result


def test_a_hidden_run_keeps_the_resolver_configuration(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where /etc/resolv.conf points into /run (systemd-resolved), only that file is kept."""
    run_dir = world.root / "run"
    (run_dir / "resolve").mkdir(parents=True)
    (run_dir / "resolve" / "stub-resolv.conf").write_text("nameserver 127.0.0.53\n")
    (run_dir / "docker.sock").write_text(world.secret("daemon"))
    (world.root / "resolv.conf").symlink_to(run_dir / "resolve" / "stub-resolv.conf")
    monkeypatch.setattr(bubblewrap_module, "RUNTIME_DIRS", (str(run_dir),))
    monkeypatch.setattr(bubblewrap_module, "RESOLV_CONF", world.root / "resolv.conf")
    sandbox = _make("bubblewrap")
    result = run(
        sandbox,
        world.confinement(network=True),
        f"cat {_sh(str(world.root / 'resolv.conf'))}; find {_sh(str(run_dir))} -type f",
    )
    assert result.stdout.split() == [
        "nameserver",
        "127.0.0.53",
        str(run_dir / "resolve" / "stub-resolv.conf"),
    ], result


@contextlib.contextmanager
def _unix_server(path: Path) -> Iterator[None]:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    path.chmod(0o777)  # a daemon's socket that anyone may use, as docker's group may
    server.listen()
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                connection, _ = server.accept()
                connection.sendall(b"daemon")
                connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        server.close()
        path.unlink()


# -- host services over TCP, and loopback -------------------------------------------------


@contextlib.contextmanager
def _tcp_server() -> Iterator[int]:
    """A server on every host address that answers ``host-server``; yields its port."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("0.0.0.0", 0))
    server.listen()
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                connection, _ = server.accept()
                connection.sendall(b"host-server")
                connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        server.close()


def _host_addresses() -> list[str]:
    addresses = ["127.0.0.1"]
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("10.255.255.255", 9))  # no packet is sent
        address = probe.getsockname()[0]
        if not address.startswith("127.") and address != "0.0.0.0":
            addresses.append(address)
    return addresses


def _connect_script(addresses: list[str], port: int) -> str:
    return python(
        f"""
        import socket
        for address in {addresses!r}:
            try:
                with socket.create_connection((address, {port}), timeout=3) as s:
                    print(address, "CONNECTED", s.recv(64).decode())
            except OSError as exc:
                print(address, "FAILED", type(exc).__name__)
        """
    )


def test_host_services_are_unreachable_without_network(
    sandbox: Bubblewrap | Seatbelt, world: World
) -> None:
    addresses = _host_addresses()
    with _tcp_server() as port:
        control = subprocess.run(
            ["/bin/sh", "-c", _connect_script(addresses, port)],
            capture_output=True,
            text=True,
            env=ENV,
            check=False,
        )
        assert control.stdout.count("CONNECTED host-server") == len(addresses), control
        result = run(sandbox, world.confinement(network=False), _connect_script(addresses, port))
    assert "CONNECTED" not in result.stdout
    assert result.stdout.count("FAILED") == len(addresses), result


def test_host_services_are_reachable_with_network(
    sandbox: Bubblewrap | Seatbelt, world: World
) -> None:
    with _tcp_server() as port:
        result = run(sandbox, world.confinement(network=True), _connect_script(["127.0.0.1"], port))
    assert "127.0.0.1 CONNECTED host-server" in result.stdout, result


def test_loopback_works_inside_without_network(bwrap: Bubblewrap, world: World) -> None:
    script = python(
        """
        import socket, threading
        server = socket.create_server(("127.0.0.1", 0))
        def serve():
            connection, _ = server.accept()
            connection.sendall(connection.recv(64).upper())
        threading.Thread(target=serve).start()
        with socket.create_connection(server.getsockname(), timeout=5) as client:
            client.sendall(b"loopback")
            print(client.recv(64).decode())
        """
    )
    result = run(bwrap, world.confinement(network=False), script)
    assert result.stdout.strip() == "LOOPBACK", result
