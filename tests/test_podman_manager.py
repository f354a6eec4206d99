"""bugbout's podman manager: the configuration it writes, how it explains podman's
failures, and the runner's command line. The failures are podman's own, where it is
installed."""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bugbout.sandbox.podman import (
    INSTALL,
    Mount,
    Podman,
    RunSpec,
    containers_conf,
    explain,
    runner_argv,
    storage_conf,
)

needs_podman = pytest.mark.requires("podman")


def test_configuration_keeps_within_the_callers_limits(tmp_path: Path) -> None:
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    text = containers_conf(tmp_path / "run")
    if nofile != resource.RLIM_INFINITY:
        assert f'"nofile={nofile}:{nofile}"' in text
    assert 'runtime = "runc"' in text
    assert 'cgroup_manager = "cgroupfs"' in text
    assert 'netns = "none"' in text
    storage = storage_conf(tmp_path, "overlay", tmp_path / "run")
    assert f'graphroot = "{tmp_path / "storage"}"' in storage
    podman = Podman(tmp_path / "home", storage=tmp_path / ("a-rather-long-folder" * 4))
    variables = podman.environ()
    assert Path(variables["CONTAINERS_CONF"]).read_text() == containers_conf(podman.runroot)
    assert Path(variables["CONTAINERS_CONF"]).parent == tmp_path / "home" / "podman"
    assert len(str(podman.runroot)) < 60  # conmon's sockets live under it


def test_failures_are_explained_with_their_fix() -> None:
    config = Path("/x/podman")
    hybrid = "Error: crun: cgroups in hybrid mode not supported, drop all controllers from cgroupv2"
    assert "install runc" in explain(hybrid, config)
    rlimit = (
        "Error: runc: runc create failed: unable to start container process: error setting "
        "rlimit type 7: operation not permitted: OCI permission denied"
    )
    assert "ulimit -Hn" in explain(rlimit, config)
    assert "environment.driver=vfs" in explain(
        "Error: overlay: kernel does not support overlay", config
    )
    assert explain("Error: something new", config).startswith("podman cannot run a container")


def test_missing_podman_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert Podman(tmp_path).problem() == f"podman is not installed: {INSTALL}"
    socket = Podman(tmp_path, socket=str(tmp_path / "none.sock"))
    monkeypatch.setenv("PATH", os.defpath)
    if shutil.which("podman"):
        assert "no podman service answers" in (socket.problem() or "")


@needs_podman
def test_podmans_own_ulimit_failure_is_explained(tmp_path: Path) -> None:
    """podman as installed, without bugbout's ulimits: the real error, explained."""
    podman = Podman(tmp_path / "home", storage=Path("/var/tmp/bugbout-podman-tests"))
    variables = podman.environ()
    plain = tmp_path / "containers.conf"
    plain.write_text(
        Path(variables["CONTAINERS_CONF"]).read_text().replace("default_ulimits", "# no")
    )
    rootfs = tmp_path / "rootfs"
    (rootfs / "usr").mkdir(parents=True)
    for name in ("bin", "lib", "lib64", "sbin"):
        if Path("/", name).is_symlink():
            (rootfs / name).symlink_to(Path("/", name).readlink())
    result = subprocess.run(
        ["podman", "run", "--rm", "-v", "/usr:/usr:ro", "--rootfs", str(rootfs), "true"],
        env={**os.environ, **variables, "CONTAINERS_CONF": str(plain)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if resource.getrlimit(resource.RLIMIT_NOFILE)[1] >= 1048576:
        pytest.skip("the hard limit allows podman's default nofile")
    assert result.returncode != 0
    assert "ulimit -Hn" in explain(result.stderr, podman.config_dir)
    assert podman.problem() is None  # with bugbout's configuration it works


def test_the_runner_starts_isolated_and_round_trips_its_spec() -> None:
    spec = RunSpec(
        podman="/usr/bin/podman",
        config={"CONTAINERS_CONF": "/c/containers.conf"},
        url="unix:///s.sock",
        image="localhost/x:1",
        argv=["python", "-m", "pytest", "a b"],
        workdir="/t",
        mounts=[Mount("/t", "/t"), Mount("/p", "/p", read_only=True)],
        forward_fd="BUGBOUT_OUTCOMES_FD",
    )
    argv = runner_argv(spec)
    assert argv[:2] == [sys.executable, "-I"]
    assert RunSpec.from_json(argv[-1]) == spec


@needs_podman
def test_the_service_socket_is_out_of_a_sandboxs_reach(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not in TMPDIR, which a sandbox may leave readable (connecting needs no more), but on
    the runtime folder, which every sandbox hides."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    with Podman(tmp_path / "home", storage=Path("/var/tmp/bugbout-podman-tests")) as podman:
        socket = podman.socket_path
        assert socket.is_socket()
        assert socket.is_relative_to(podman.runtime_dir)
        assert not socket.is_relative_to(tmp_path)
    assert not socket.parent.exists()


def test_a_socket_that_is_not_podmans_is_explained(tmp_path: Path) -> None:
    """Something else answers on the named socket: the fix, not an HTTP traceback."""
    import socket
    import threading

    path = tmp_path / "other.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()

    def answer() -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = server.accept()
                with connection:
                    connection.recv(4096)
                    connection.sendall(b"not http\r\n\r\n")

    threading.Thread(target=answer, daemon=True).start()
    try:
        podman = Podman(tmp_path, socket=f"unix://{path}", executable=sys.executable)
        assert "no podman service answers" in (podman.problem() or "")
    finally:
        server.close()
