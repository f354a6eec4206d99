"""The sandboxes, attacked for real: bubblewrap on Linux (seatbelt on macOS runs the same
file and network attacks), seatbelt's profile as text, ``none`` and ``auto``.

The world the attacks run in lives outside ``/tmp`` (which the sandbox replaces anyway),
so only the confinement stands between a process and the secrets; a control test
shows that, without masks, the very same commands do read them.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import termios
import textwrap
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pluggy
import pytest

import components
from bugbout.core.contract import hookspecs
from bugbout.core.contract.errors import ConfigError, PluginError
from bugbout.core.contract.manager import Plugins
from bugbout.plugins.sandboxes import Access, layers
from bugbout.plugins.sandboxes import auto as auto_module
from bugbout.plugins.sandboxes import bubblewrap as bubblewrap_module
from bugbout.plugins.sandboxes import none as none_module
from bugbout.plugins.sandboxes import seatbelt as seatbelt_module
from bugbout.plugins.sandboxes.auto import Auto
from bugbout.plugins.sandboxes.bubblewrap import Bubblewrap, BubblewrapOptions
from bugbout.plugins.sandboxes.none import NoSandbox
from bugbout.plugins.sandboxes.seatbelt import Seatbelt, SeatbeltOptions, profile, quote
from bugbout.sandbox.confinement import Confinement

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
PYTHON = sys.executable
PYTHON_PREFIXES = tuple(
    sorted(
        {
            Path(sys.prefix),
            Path(sys.base_prefix),
            Path(os.path.realpath(sys.executable)).parent.parent,
        }
    )
)
"""Where this interpreter lives: it may be under /tmp (a virtualenv in a CI checkout),
which sandboxes hide, so every confinement that runs it re-exposes these read-only."""
ON_LINUX = sys.platform.startswith("linux")
HIDDEN_ANYWAY = ("/tmp", "/var/tmp", "/run", "/dev", "/proc", "/private/tmp", "/private/var")
"""Places a sandbox hides or lets write on its own: the attacked world must not be there."""


# -- the world under attack --------------------------------------------------------------


@dataclass
class World:
    root: Path
    marker: str
    repo: Path
    store: Path
    bugbout_home: Path
    workdir: Path
    logs: Path
    other_attempt: Path
    credentials: Path
    test_env: Path
    home: Path
    netrc: Path
    outside: Path

    def confinement(self, network: bool = False, **changes: object) -> Confinement:
        fields: dict[str, object] = {
            "workdir": self.workdir,
            "writable": (self.logs,),
            "readable": (self.test_env, *PYTHON_PREFIXES),
            "masked": (self.repo, self.store, self.bugbout_home, self.home, self.netrc),
            "network": network,
        }
        fields.update(changes)
        return Confinement.model_validate(fields)

    def secret(self, name: str) -> str:
        return f"{name}-{self.marker}"


def _visible_base() -> Path:
    for candidate in (Path.home() / ".cache" / "bugbout-tests", Path.cwd() / ".bugbout-tests"):
        real = Path(os.path.realpath(candidate))
        if any(real.is_relative_to(hidden) for hidden in HIDDEN_ANYWAY):
            continue
        try:
            real.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        return real
    pytest.skip("no writable directory outside the temporary directories to build the world in")


@pytest.fixture
def world() -> Iterator[World]:
    base = _visible_base()
    root = Path(tempfile.mkdtemp(prefix="sandbox-", dir=base))
    marker = uuid.uuid4().hex
    bugbout_home = root / "bugbout-home"
    w = World(
        root=root,
        marker=marker,
        repo=root / "project",
        store=root / "project" / ".bugbout",
        bugbout_home=bugbout_home,
        workdir=bugbout_home / "attempts" / "t1" / "agent-a" / "work",
        logs=bugbout_home / "attempts" / "t1" / "agent-a" / "logs",
        other_attempt=bugbout_home / "attempts" / "t1" / "agent-b" / "work",
        credentials=bugbout_home / "credentials",
        test_env=bugbout_home / "environments" / "py311",
        home=root / "home",
        netrc=root / "netrc",
        outside=root / "outside",
    )
    files = {
        w.repo / ".git" / "secret": w.secret("repo"),
        w.repo / ".git" / "objects" / "fix": w.secret("fix"),
        w.repo / "src" / "calc.py": w.secret("repo-source"),
        w.store / "tasks.json": w.secret("store"),
        w.workdir / "calc.py": "checkout\n",
        w.other_attempt / "patch.diff": w.secret("other-agent"),
        w.credentials / "token": w.secret("credentials"),
        w.test_env / "lib.txt": "environment\n",
        w.home / ".ssh" / "id_ed25519": w.secret("ssh-key"),
        w.netrc: w.secret("netrc"),
        w.outside / "plain.txt": "visible\n",
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    w.logs.mkdir(parents=True)
    try:
        yield w
    finally:
        shutil.rmtree(root, ignore_errors=True)
        with contextlib.suppress(OSError):
            base.rmdir()


def _make(name: str) -> Bubblewrap | Seatbelt:
    """A sandbox that works here; installed but broken is a failure, not a skip."""
    if name == "bubblewrap":
        if not ON_LINUX:
            pytest.skip("bubblewrap needs Linux")
        if shutil.which("bwrap") is None:
            components.missing("bubblewrap", "bwrap is not installed")
        sandbox: Bubblewrap | Seatbelt = Bubblewrap()
    else:
        if sys.platform != "darwin":
            pytest.skip("seatbelt needs macOS")
        sandbox = Seatbelt()
    problem = sandbox.problem()
    assert problem is None, problem
    return sandbox


@pytest.fixture(params=["bubblewrap", "seatbelt"])
def sandbox(request: pytest.FixtureRequest) -> Bubblewrap | Seatbelt:
    return _make(request.param)


@pytest.fixture
def bwrap() -> Bubblewrap:
    sandbox = _make("bubblewrap")
    assert isinstance(sandbox, Bubblewrap)
    return sandbox


def run(
    sandbox: Bubblewrap | Seatbelt | NoSandbox,
    confinement: Confinement,
    script: str,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """``script`` run by ``sh`` under ``sandbox``, started in the working directory."""
    argv = sandbox.wrap(["/bin/sh", "-c", script], confinement)
    return subprocess.run(
        argv,
        cwd=confinement.workdir,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def python(code: str) -> str:
    """A shell command running ``code`` with this interpreter."""
    return f"{PYTHON} -c {_sh(textwrap.dedent(code))}"


def _sh(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def survivors(world: World) -> list[Path]:
    """Files under the world that a test run must not have left behind."""
    return sorted(path for path in world.root.rglob("*") if "probe" in path.name)


# -- filesystem: the control, then the attacks ---------------------------------------------


def test_control_without_masks_the_same_commands_read_every_secret(
    sandbox: Bubblewrap | Seatbelt, world: World
) -> None:
    """Without masks, the sandbox reads the secrets: the attacks below can fail."""
    exposed = world.confinement(masked=(), readable=())
    result = run(sandbox, exposed, f"grep -rh {world.marker} {_sh(str(world.root))}")
    found = set(result.stdout.split())
    for name in ("repo", "fix", "store", "other-agent", "credentials", "ssh-key", "netrc"):
        assert world.secret(name) in found, result


def test_no_secret_anywhere_in_the_world_is_readable(
    sandbox: Bubblewrap | Seatbelt, world: World
) -> None:
    """A recursive search of the whole world finds no secret, and the checkout, the
    readable environment and the rest of the machine are still there."""
    script = (
        f"grep -rh {world.marker} {_sh(str(world.root))}; "
        f"cat {_sh(str(world.workdir / 'calc.py'))} {_sh(str(world.test_env / 'lib.txt'))} "
        f"{_sh(str(world.outside / 'plain.txt'))}"
    )
    result = run(sandbox, world.confinement(), script)
    assert world.marker not in result.stdout + result.stderr
    assert result.stdout.split() == ["checkout", "environment", "visible"], result


def test_the_original_repository_is_hidden(sandbox: Bubblewrap | Seatbelt, world: World) -> None:
    git = world.repo / ".git"
    for script in (
        f"cat {_sh(str(git / 'secret'))}",
        f"cat {_sh(str(git / 'objects' / 'fix'))}",
        f"ls -A {_sh(str(git))}",
        f"cd {_sh(str(world.repo))} && git log --all --oneline",
    ):
        result = run(sandbox, world.confinement(), script)
        assert world.marker not in result.stdout, script
        assert "secret" not in result.stdout and "objects" not in result.stdout, script
    assert run(sandbox, world.confinement(), f"cat {_sh(str(git / 'secret'))}").returncode != 0


def test_the_store_cannot_be_listed_or_read(sandbox: Bubblewrap | Seatbelt, world: World) -> None:
    listing = run(sandbox, world.confinement(), f"ls -A {_sh(str(world.store))}")
    assert "tasks.json" not in listing.stdout
    reading = run(sandbox, world.confinement(), f"cat {_sh(str(world.store / 'tasks.json'))}")
    assert reading.returncode != 0
    assert world.marker not in reading.stdout


def test_bugbout_home_shows_only_the_way_to_what_is_exposed(
    sandbox: Bubblewrap | Seatbelt, world: World
) -> None:
    """Other attempts and credentials in BUGBOUT_HOME are out of reach; the checkout,
    which lives inside it, is not."""
    for path in (world.other_attempt / "patch.diff", world.credentials / "token"):
        result = run(sandbox, world.confinement(), f"cat {_sh(str(path))}")
        assert result.returncode != 0 and world.marker not in result.stdout, path
    listing = run(
        sandbox,
        world.confinement(),
        f"ls -A {_sh(str(world.bugbout_home))} {_sh(str(world.workdir.parent.parent))}",
    )
    assert "credentials" not in listing.stdout and "agent-b" not in listing.stdout
    checkout = run(sandbox, world.confinement(), "cat calc.py && pwd")
    assert checkout.stdout.split() == ["checkout", os.path.realpath(world.workdir)], checkout


def test_home_and_a_masked_file_are_hidden(sandbox: Bubblewrap | Seatbelt, world: World) -> None:
    key = run(sandbox, world.confinement(), f"cat {_sh(str(world.home / '.ssh' / 'id_ed25519'))}")
    assert key.returncode != 0 and world.marker not in key.stdout
    netrc = run(sandbox, world.confinement(), f"cat {_sh(str(world.netrc))}")
    assert world.marker not in netrc.stdout  # empty (bubblewrap) or unreadable (seatbelt)


def test_a_link_in_the_checkout_does_not_reach_a_masked_file(
    sandbox: Bubblewrap | Seatbelt, world: World
) -> None:
    secret = world.repo / ".git" / "secret"
    (world.workdir / "link").symlink_to(secret)
    (world.workdir / "dir-link").symlink_to(world.repo)
    result = run(sandbox, world.confinement(), "cat link; cat dir-link/.git/secret; ls -A dir-link")
    assert world.marker not in result.stdout
    assert ".git" not in result.stdout


def test_the_readable_environment_can_be_read_not_changed(
    sandbox: Bubblewrap | Seatbelt, world: World
) -> None:
    env = _sh(str(world.test_env))
    result = run(
        sandbox,
        world.confinement(),
        f"cat {env}/lib.txt; touch {env}/probe; echo changed >> {env}/lib.txt; "
        f"rm -f {env}/lib.txt; mv {env}/lib.txt {env}/probe-moved; echo done",
    )
    assert result.stdout.split() == ["environment", "done"], result
    assert (world.test_env / "lib.txt").read_text() == "environment\n"
    assert survivors(world) == []


def test_the_checkout_and_the_logs_are_writable(
    sandbox: Bubblewrap | Seatbelt, world: World
) -> None:
    logs = _sh(str(world.logs))
    result = run(
        sandbox,
        world.confinement(),
        f"echo fixed > calc.py && mkdir -p pkg && echo new > pkg/mod.py && "
        f"echo log > {logs}/run.log",
    )
    assert result.returncode == 0, result
    assert (world.workdir / "calc.py").read_text() == "fixed\n"
    assert (world.workdir / "pkg" / "mod.py").read_text() == "new\n"
    assert (world.logs / "run.log").read_text() == "log\n"


def test_writes_anywhere_else_fail_and_leave_nothing(
    sandbox: Bubblewrap | Seatbelt, world: World
) -> None:
    targets = [
        Path("/etc/bugbout-probe"),
        Path("/usr/bugbout-probe"),
        Path.home() / "bugbout-probe",
        Path("/root/bugbout-probe"),
        world.root / "probe",
        world.outside / "probe",
        world.repo / "probe",
        world.repo / ".git" / "probe",
        world.store / "probe",
        world.bugbout_home / "probe",
        world.other_attempt / "probe",
        world.home / "probe",
        world.workdir.parent / "probe",
    ]
    script = "; ".join(
        f"(echo x > {_sh(str(t))}) 2>/dev/null && echo WROTE {_sh(str(t))}; "
        f"mkdir {_sh(str(t) + '-dir')} 2>/dev/null && echo MADE {_sh(str(t))}"
        for t in targets
    )
    outside = _sh(str(world.outside))
    script += (
        f"; rm -f {outside}/plain.txt; mv {outside}/plain.txt {outside}/probe-moved;"
        f" chmod 777 {outside}/plain.txt; echo ok > still-writable"
    )
    result = run(sandbox, world.confinement(), script)
    assert "WROTE" not in result.stdout and "MADE" not in result.stdout, result
    assert (world.workdir / "still-writable").read_text() == "ok\n", result  # not just broken
    for target in targets:
        assert not target.exists() and not Path(f"{target}-dir").exists(), target
    assert (world.outside / "plain.txt").read_text() == "visible\n"
    assert (world.outside / "plain.txt").stat().st_mode & 0o777 != 0o777
    assert survivors(world) == []


def test_symlinked_paths_are_resolved(sandbox: Bubblewrap | Seatbelt, world: World) -> None:
    """A confinement given through symbolic links confines the real paths."""
    (world.root / "repo-link").symlink_to(world.repo)
    (world.root / "work-link").symlink_to(world.workdir)
    confinement = world.confinement(
        workdir=world.root / "work-link",
        masked=(world.root / "repo-link", world.bugbout_home),
    )
    secret = world.repo / ".git" / "secret"
    result = run(sandbox, confinement, f"cat {_sh(str(secret))}; pwd; echo x > written")
    assert world.marker not in result.stdout
    assert os.path.realpath(world.workdir) in result.stdout.split(), result
    assert (world.workdir / "written").exists()


def test_a_masked_directory_inside_the_checkout_stays_hidden(
    sandbox: Bubblewrap | Seatbelt, world: World
) -> None:
    """The most specific path wins: a masked ``.git`` inside a writable checkout, a
    readable ``.venv`` inside it."""
    git, venv = world.workdir / ".git", world.workdir / ".venv"
    (git / "objects").mkdir(parents=True)
    (git / "objects" / "fix").write_text(world.secret("checkout-git"))
    venv.mkdir()
    (venv / "site.py").write_text("venv\n")
    confinement = world.confinement(
        masked=(*world.confinement().masked, git), readable=(world.test_env, venv)
    )
    result = run(
        sandbox,
        confinement,
        "cat .git/objects/fix; echo x > .git/probe; cat .venv/site.py; echo x > .venv/probe; "
        "mv .git probe-git; mv .venv probe-venv; cat probe-git/objects/fix; echo x > ok",
    )
    assert world.marker not in result.stdout
    assert "venv" in result.stdout.split()
    assert (world.workdir / "ok").exists(), result
    assert survivors(world) == []
    assert git.is_dir() and venv.is_dir()


# -- bubblewrap only: private directories, processes, namespaces ---------------------------


def test_tmp_is_private(bwrap: Bubblewrap, world: World) -> None:
    token = uuid.uuid4().hex
    host_file = Path(tempfile.gettempdir()) / f"bugbout-host-{token}"
    host_file.write_text(world.secret("host-tmp"))
    try:
        result = run(
            bwrap,
            world.confinement(),
            f"ls -A /tmp /var/tmp /dev/shm; cat {host_file}; "
            f"echo inner > /tmp/inner-{token} && echo inner > /var/tmp/inner-{token} && "
            f"echo inner > /dev/shm/inner-{token} && cat /tmp/inner-{token}",
        )
        assert world.marker not in result.stdout and host_file.name not in result.stdout
        assert result.stdout.split()[-1] == "inner", result  # writable inside...
        for directory in ("/tmp", "/var/tmp", "/dev/shm"):  # ...and gone outside
            assert not Path(directory, f"inner-{token}").exists()
    finally:
        host_file.unlink()


def test_masks_cannot_be_unmounted_even_as_root(bwrap: Bubblewrap, world: World) -> None:
    """With its capabilities (bwrap keeps them for root unless told), the process
    could unmount the tmpfs over the repository and read what is under it."""
    repo = _sh(str(world.repo))
    result = run(
        bwrap,
        world.confinement(),
        f"grep -E '^Cap(Eff|Prm)' /proc/self/status; umount {repo}; umount -l {repo}; "
        f"mount -o remount,rw /; mount -t tmpfs none /etc; "
        f"unshare -Urm sh -c 'umount -l {repo}; cat {repo}/.git/secret' ; "
        f"cat {repo}/.git/secret; echo x > /etc/bugbout-probe",
    )
    assert world.marker not in result.stdout, result
    capabilities = re.findall(r"Cap(?:Eff|Prm):\s+([0-9a-f]+)", result.stdout)
    assert capabilities and all(int(value, 16) == 0 for value in capabilities), result
    assert not Path("/etc/bugbout-probe").exists()


def test_no_host_process_is_visible(bwrap: Bubblewrap, world: World) -> None:
    """Other agents' environments (their API keys) are in /proc/<pid>/environ."""
    token = world.secret("agent-key")
    duration = f"{random.randint(3000, 9000)}.{random.randint(10**5, 10**6 - 1)}"
    host = subprocess.Popen(["sleep", duration], env={**ENV, "OTHER_AGENT_KEY": token})
    try:
        assert _wait_until(lambda: _processes(duration))  # the control: it can be found
        result = run(
            bwrap,
            world.confinement(),
            "cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n'; "
            "ls /proc | grep -c '^[0-9]'; kill -0 1 && echo SEES-INIT",
        )
        assert token not in result.stdout and duration not in result.stdout
        assert int(result.stdout.split()[-2]) < 10, result  # only the sandbox's own
    finally:
        host.kill()
        host.wait()


def _processes(token: str) -> list[int]:
    """Host processes whose command line contains ``token``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
    return found


def _wait_until(condition: object, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize(
    "how", ["group-sigkill", "group-sigterm", "bwrap-only-sigkill", "normal-exit"]
)
def test_every_process_of_the_sandbox_dies_with_it(
    bwrap: Bubblewrap, world: World, how: str
) -> None:
    """Background processes, even ones that left the session, do not outlive the run,
    however it ends (the caller kills its process group, or bwrap alone on a timeout)."""
    token = f"{random.randint(3000, 9000)}.{random.randint(10**5, 10**6 - 1)}"
    script = (
        f"sleep {token} & "
        f"setsid sh -c 'sleep {token}' </dev/null >/dev/null 2>&1 & "
        f"nohup sleep {token} </dev/null >/dev/null 2>&1 & "
        "echo ready; read line"
    )
    process = subprocess.Popen(
        bwrap.wrap(["/bin/sh", "-c", script], world.confinement()),
        cwd=world.workdir,
        env=ENV,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,
        text=True,
    )
    assert process.stdout is not None and process.stdin is not None
    try:
        assert process.stdout.readline().strip() == "ready"
        assert _wait_until(lambda: len(_processes(token)) >= 3), _processes(token)
        if how == "group-sigkill":
            os.killpg(process.pid, signal.SIGKILL)
        elif how == "group-sigterm":
            os.killpg(process.pid, signal.SIGTERM)
        elif how == "bwrap-only-sigkill":
            process.kill()
        else:
            process.stdin.write("done\n")
            process.stdin.flush()
        process.wait(timeout=20)
        assert _wait_until(lambda: not _processes(token)), _processes(token)
    finally:
        for pid in _processes(token):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def test_the_sandbox_has_no_controlling_terminal(bwrap: Bubblewrap, world: World) -> None:
    """No terminal, so no TIOCSTI: nothing can be typed into the user's shell."""
    script = "(exec 3<>/dev/tty) 2>/dev/null && echo HAS-TTY || echo NO-TTY"

    def on_terminal(argv: list[str]) -> str:
        controller, terminal = os.openpty()
        try:
            return subprocess.run(
                argv,
                cwd=world.workdir,
                env=ENV,
                stdin=terminal,
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
                start_new_session=True,
                preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
            ).stdout.strip()
        finally:
            os.close(controller)
            os.close(terminal)

    assert on_terminal(["/bin/sh", "-c", script]) == "HAS-TTY"  # the control
    assert on_terminal(bwrap.wrap(["/bin/sh", "-c", script], world.confinement())) == "NO-TTY"


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


def test_a_workdir_under_tmp_stays_the_real_one(bwrap: Bubblewrap, tmp_path: Path) -> None:
    """The private /tmp must not swallow a checkout that lives in the real one."""
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "sibling").write_text("host tmp\n")
    result = run(bwrap, Confinement(workdir=work), f"echo fixed > calc.py; ls -A {tmp_path}")
    assert (work / "calc.py").read_text() == "fixed\n", result
    assert result.stdout.split() == ["work"], result


@contextlib.contextmanager
def _unix_server(path: Path) -> Iterator[None]:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
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


# -- network -------------------------------------------------------------------------------


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


# -- bubblewrap: the command line and the diagnosis ---------------------------------------


def test_bwrap_command_layers_masks_before_what_they_expose(world: World) -> None:
    sandbox = Bubblewrap()
    argv = ["pytest", "-x", "a b"]
    command = sandbox.wrap(argv, world.confinement())
    assert command[-4:] == ["--", *argv]
    assert command[command.index("--chdir") + 1] == os.path.realpath(world.workdir)

    def position(*option: str) -> int:
        for index in range(len(command) - len(option) + 1):
            if tuple(command[index : index + len(option)]) == option:
                return index
        raise AssertionError(f"{option} not in {command}")

    home, work, env = str(world.bugbout_home), str(world.workdir), str(world.test_env)
    assert position("--ro-bind", "/", "/") < position("--tmpfs", "/tmp") < position("--tmpfs", home)
    assert position("--tmpfs", home) < position("--bind-try", work, work)
    assert position("--tmpfs", home) < position("--ro-bind-try", env, env)
    assert position("--bind-try", work, work) < position("--remount-ro", home)
    assert position("--ro-bind", "/dev/null", str(world.netrc)) > 0  # a file: /dev/null on it
    for option in ("--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts"):
        assert option in command
    assert "--die-with-parent" in command and "--new-session" in command
    assert ("--cap-drop" in command) == (os.geteuid() == 0)
    assert "--setenv" not in command and "--clearenv" not in command
    assert "--unshare-net" not in sandbox.wrap(argv, world.confinement(network=True))


def test_bwrap_skips_missing_masks_and_refuses_a_missing_workdir(world: World) -> None:
    missing = world.root / "does-not-exist"
    command = Bubblewrap().wrap(["true"], world.confinement(masked=(missing,)))
    assert str(missing) not in command
    with pytest.raises(PluginError, match="not a directory"):
        Bubblewrap().wrap(["true"], world.confinement(workdir=missing))


def test_layers_give_the_most_specific_path_the_last_word(tmp_path: Path) -> None:
    confinement = Confinement(
        workdir=tmp_path / "home" / "work",
        writable=(tmp_path / "home" / "work",),
        readable=(tmp_path / "home" / "work" / ".venv", tmp_path / "home"),
        masked=(tmp_path / "home", tmp_path / "home" / "work" / ".git"),
    )
    root = Path(os.path.realpath(tmp_path))
    assert [(layer.path.relative_to(root), layer.access) for layer in layers(confinement)] == [
        (Path("home"), Access.READABLE),  # listed masked and readable: re-exposing wins
        (Path("home/work"), Access.WRITABLE),
        (Path("home/work/.git"), Access.MASKED),
        (Path("home/work/.venv"), Access.READABLE),
    ]


def _fake_bwrap(tmp_path: Path, stderr: str) -> tuple[Path, Path]:
    calls = tmp_path / "calls"
    script = tmp_path / "fake-bwrap"
    script.write_text(f"#!/bin/sh\necho call >> {calls}\necho {_sh(stderr)} >&2\nexit 1\n")
    script.chmod(0o755)
    return script, calls


def test_bwrap_sizes_the_temporary_filesystems_and_keeps_dev_read_only(tmp_path: Path) -> None:
    sandbox = _make("bubblewrap")
    script = (
        "for place in /tmp /var/tmp /dev/shm; do "
        "dd if=/dev/zero of=$place/fill bs=1M count=8 2>/dev/null; "
        "echo $place $(stat -c %s $place/fill); done; "
        "touch /dev/fill 2>/dev/null || echo /dev read-only"
    )
    confinement = Confinement(workdir=tmp_path, tmp_size=3_000_000)
    result = subprocess.run(
        sandbox.wrap(["sh", "-c", script], confinement),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    sizes = dict(line.split() for line in result.stdout.splitlines() if line.startswith("/"))
    assert sizes.pop("/dev") == "read-only"
    assert set(sizes) == {"/tmp", "/var/tmp", "/dev/shm"}
    assert all(int(size) <= 3_000_000 + 4096 for size in sizes.values()), sizes  # whole pages


def test_a_bwrap_that_cannot_size_a_tmpfs_still_sandboxes(tmp_path: Path) -> None:
    real = _make("bubblewrap").executable
    old = tmp_path / "old-bwrap"
    old.write_text(
        '#!/bin/sh\nfor arg; do [ "$arg" = --size ] && '
        "{ echo 'bwrap: Unknown option --size' >&2; exit 1; }; done\n"
        f'exec {real} "$@"\n'
    )
    old.chmod(0o755)
    sandbox = Bubblewrap(BubblewrapOptions(executable=str(old)))
    assert sandbox.problem() is None
    wrapped = sandbox.wrap(["true"], Confinement(workdir=tmp_path, tmp_size=3_000_000))
    assert "--size" not in wrapped
    assert subprocess.run(wrapped, check=False, timeout=60).returncode == 0


def test_bwrap_problem_says_how_to_install_it() -> None:
    problem = Bubblewrap(BubblewrapOptions(executable="no-such-bwrap")).problem()
    assert problem is not None and "\n" not in problem
    assert "apt install bubblewrap" in problem and "sandbox=none" in problem


def test_bwrap_problem_names_apparmor_and_is_probed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script, calls = _fake_bwrap(tmp_path, "bwrap: setting up uid map: Permission denied")
    sysctl = tmp_path / "sys"
    (sysctl / "kernel").mkdir(parents=True)
    (sysctl / "kernel" / "apparmor_restrict_unprivileged_userns").write_text("1\n")
    monkeypatch.setattr(bubblewrap_module, "SYSCTL", sysctl)
    sandbox = Bubblewrap(BubblewrapOptions(executable=str(script)))
    problem = sandbox.problem()
    assert problem is not None and "\n" not in problem
    assert "setting up uid map: Permission denied" in problem
    assert "sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0" in problem
    assert "AppArmor profile" in problem and "sandbox=none" in problem
    assert sandbox.problem() == problem
    assert calls.read_text().count("call") == 1


def test_bwrap_problem_without_apparmor_names_the_other_switches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script, _ = _fake_bwrap(tmp_path, "bwrap: No permissions to create new namespace")
    sysctl = tmp_path / "sys"
    (sysctl / "kernel").mkdir(parents=True)
    (sysctl / "kernel" / "unprivileged_userns_clone").write_text("0\n")
    monkeypatch.setattr(bubblewrap_module, "SYSCTL", sysctl)
    problem = Bubblewrap(BubblewrapOptions(executable=str(script))).problem()
    assert problem is not None and "kernel.unprivileged_userns_clone=1" in problem
    (sysctl / "kernel" / "unprivileged_userns_clone").write_text("1\n")
    problem = Bubblewrap(BubblewrapOptions(executable=str(script))).problem()
    assert problem is not None and "container" in problem and "sandbox=none" in problem


# -- seatbelt: the profile as text ---------------------------------------------------------


class Str(str):
    """A string literal of a parsed profile (a plain ``str`` is a symbol)."""


class Regex(str):
    """A ``#"..."`` regular expression of a parsed profile."""


Form = list["Form | str"]


def parse(text: str) -> list[Form]:
    """The forms of a seatbelt profile (a Scheme subset: lists, symbols, strings, regexes)."""
    forms: list[Form] = []
    stack: list[Form] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char.isspace():
            index += 1
        elif char == ";":
            index = text.index("\n", index)
        elif char == "(":
            stack.append([])
            index += 1
        elif char == ")":
            form = stack.pop()
            (stack[-1] if stack else forms).append(form)
            index += 1
        elif char == '"' or text.startswith('#"', index):
            regex = char == "#"
            index += 2 if regex else 1
            value = []
            while text[index] != '"':
                if text[index] == "\\" and not regex:
                    index += 1
                    assert text[index] in '\\"', f"unexpected escape at {index}"
                value.append(text[index])
                index += 1
            index += 1
            stack[-1].append(Regex("".join(value)) if regex else Str("".join(value)))
        else:
            end = index
            while end < len(text) and not text[end].isspace() and text[end] not in "()":
                end += 1
            stack[-1].append(text[index:end])
            index = end
    assert not stack, "unbalanced parentheses"
    return forms


@dataclass(frozen=True)
class Request:
    operation: str
    path: str | None = None
    unix: str | None = None
    """``local`` (bind, accept) or ``remote`` (connect) for a unix socket at ``path``."""
    ip: str | None = None
    target: str | None = None


def decide(text: str, request: Request) -> str:
    """What the profile decides for ``request``: the last rule that matches wins."""
    decision = "unmatched"
    for form in parse(text):
        if form[0] not in ("allow", "deny"):
            continue
        operations = [item for item in form[1:] if isinstance(item, str)]
        filters = [item for item in form[1:] if isinstance(item, list)]
        if not any(_operation(rule, request.operation) for rule in operations):
            continue
        if filters and not any(_matches(item, request) for item in filters):
            continue
        decision = str(form[0])
    return decision


def _operation(rule: str, operation: str) -> bool:
    if rule in ("default", operation):
        return True
    return rule.endswith("*") and operation.startswith(rule[:-1])


def _matches(item: Form, request: Request) -> bool:
    head, *rest = item
    path = request.path
    if head == "subpath":
        return path is not None and (path == rest[0] or path.startswith(f"{rest[0]}/"))
    if head == "literal":
        return path == rest[0]
    if head == "regex":
        return path is not None and re.search(str(rest[0]), path) is not None
    if head in ("local", "remote") and rest[0] == "unix-socket":
        inner = [f for f in rest[1:] if isinstance(f, list)]
        return request.unix == head and (not inner or any(_matches(f, request) for f in inner))
    if head in ("local", "remote") and rest[0] == "ip":
        return request.ip == head
    if head == "target":
        return request.target == rest[0]
    raise AssertionError(f"the test does not know the filter {item}")


@pytest.fixture
def belted(tmp_path: Path) -> tuple[Confinement, dict[str, Path]]:
    """A confinement with awkward names: spaces, quotes, backslashes, accents."""
    root = Path(os.path.realpath(tmp_path)) / 'a "quoted" dir\\with spaces é'
    paths = {
        "repo": root / "repo",
        "store": root / "repo" / ".bugbout",
        "home": root / "bugbout home",
        "work": root / "bugbout home" / "attempts" / "t1" / "work",
        "logs": root / "bugbout home" / "attempts" / "t1" / "logs",
        "env": root / "bugbout home" / "envs" / "py311",
        "user": root / "user",
        "temp": root / "temporary",
    }
    confinement = Confinement(
        workdir=paths["work"],
        writable=(paths["logs"],),
        readable=(paths["env"],),
        masked=(paths["repo"], paths["store"], paths["home"], paths["user"]),
    )
    return confinement, paths


def test_seatbelt_profile_quotes_every_path_exactly(
    belted: tuple[Confinement, dict[str, Path]],
) -> None:
    confinement, paths = belted
    text = profile(confinement, [paths["temp"]])
    forms = parse(text)
    assert forms[0] == ["version", "1"] and forms[1] == ["allow", "default"]
    strings = {str(value) for value in _strings(forms)}
    for name in ("repo", "store", "home", "work", "logs", "env", "user", "temp"):
        assert str(paths[name]) in strings, name
    assert quote('a"b\\c') == '"a\\"b\\\\c"'
    with pytest.raises(PluginError, match="control character"):
        quote("evil\n(allow default)")
    with pytest.raises(PluginError, match="control character"):
        profile(confinement.model_copy(update={"masked": (paths["repo"] / "x\ny",)}))


def _strings(forms: list[Form]) -> Iterator[str]:
    for form in forms:
        for item in form:
            if isinstance(item, list):
                yield from _strings([item])
            elif isinstance(item, Str):
                yield item


def test_seatbelt_profile_orders_rules_from_general_to_specific(
    belted: tuple[Confinement, dict[str, Path]],
) -> None:
    confinement, paths = belted
    lines = profile(confinement).splitlines()

    def line(start: str, path: Path) -> int:
        wanted = f"{start} (subpath {quote(str(path))}))"
        index: int = lines.index(wanted)
        return index

    assert lines[:2] == ["(version 1)", "(allow default)"]
    assert line("(deny file-read*", paths["home"]) < line("(allow file-read*", paths["work"])
    assert line("(deny file-read*", paths["home"]) < line("(allow file-read*", paths["env"])
    assert line("(deny file-read*", paths["repo"]) < line("(deny file-read*", paths["store"])
    assert lines.index("(deny file-write*)") < line("(allow file-write*", paths["work"])
    assert lines.index("(deny network*)") < next(
        i for i, text in enumerate(lines) if text.startswith("(allow network-outbound")
    )


def test_seatbelt_profile_decides_like_the_confinement(
    belted: tuple[Confinement, dict[str, Path]],
) -> None:
    confinement, paths = belted
    text = profile(confinement, [paths["temp"]])

    def read(path: Path, operation: str = "file-read-data") -> str:
        return decide(text, Request(operation, str(path)))

    def write(path: Path, operation: str = "file-write-data") -> str:
        return decide(text, Request(operation, str(path)))

    assert read(paths["repo"] / ".git" / "secret") == "deny"
    assert read(paths["store"] / "tasks.json") == "deny"
    assert read(paths["home"] / "credentials" / "token") == "deny"
    assert read(paths["home"] / "attempts" / "t2" / "work" / "patch.diff") == "deny"
    assert read(paths["user"] / ".ssh" / "id_ed25519") == "deny"
    assert read(paths["home"], "file-read-data") == "deny"  # not even listed...
    assert read(paths["home"], "file-read-metadata") == "allow"  # ...but can be walked through
    assert read(paths["home"] / "credentials", "file-read-metadata") == "deny"
    assert read(paths["work"] / "calc.py") == "allow"
    assert read(paths["logs"] / "run.log") == "allow"
    assert read(paths["env"] / "lib.txt") == "allow"
    assert read(Path("/usr/lib/libc.dylib")) == "allow"

    assert write(paths["work"] / "calc.py") == "allow"
    assert write(paths["logs"] / "run.log", "file-write-create") == "allow"
    assert write(paths["temp"] / "x") == "allow"
    assert write(Path("/dev/null")) == "allow"
    assert write(Path("/dev/fd/3")) == "allow"
    assert write(paths["env"] / "lib.txt") == "deny"
    assert write(paths["home"] / "probe", "file-write-create") == "deny"
    assert write(paths["repo"] / ".git" / "config") == "deny"
    assert write(Path("/etc/hosts")) == "deny"
    assert write(Path("/Users/someone/.zshrc")) == "deny"
    assert write(Path("/dev/disk0")) == "deny"


def test_seatbelt_profile_keeps_what_is_inside_the_checkout(tmp_path: Path) -> None:
    """A masked ``.git`` and a readable ``.venv`` inside the writable checkout: neither
    written nor renamed away from their rules."""
    work = Path(os.path.realpath(tmp_path)) / "work"
    confinement = Confinement(
        workdir=work, masked=(work / "sub" / ".git",), readable=(work / ".venv",)
    )
    text = profile(confinement)
    assert decide(text, Request("file-read-data", str(work / "sub" / ".git" / "HEAD"))) == "deny"
    assert decide(text, Request("file-write-data", str(work / "sub" / ".git" / "HEAD"))) == "deny"
    assert decide(text, Request("file-write-data", str(work / ".venv" / "site.py"))) == "deny"
    assert decide(text, Request("file-read-data", str(work / ".venv" / "site.py"))) == "allow"
    for moved in (work / "sub", work / "sub" / ".git", work / ".venv"):
        assert decide(text, Request("file-write-unlink", str(moved))) == "deny", moved
    assert decide(text, Request("file-write-unlink", str(work / "calc.py"))) == "allow"
    assert decide(text, Request("file-write-data", str(work / "sub" / "calc.py"))) == "allow"


def test_seatbelt_profile_network_and_sockets(tmp_path: Path) -> None:
    work = Path(os.path.realpath(tmp_path)) / "work"
    masked = work / "secret"
    confinement = Confinement(workdir=work, masked=(masked,))
    agent_socket = "/private/tmp/com.apple.launchd.x/Listeners"
    docker = "/Users/me/.docker/run/docker.sock"
    resolver = seatbelt_module.RESOLVER_SOCKET
    for network in (False, True):
        text = profile(confinement.model_copy(update={"network": network}))
        expected = "allow" if network else "deny"
        assert decide(text, Request("network-outbound", ip="remote")) == expected
        assert decide(text, Request("network-bind", ip="local")) == expected
        assert decide(text, Request("network-outbound", resolver, unix="remote")) == expected
        for path in (agent_socket, docker, f"{masked}/s.sock"):
            assert decide(text, Request("network-outbound", path, unix="remote")) == "deny", path
        assert decide(text, Request("network-outbound", f"{work}/s", unix="remote")) == "allow"
        assert decide(text, Request("network-bind", f"{work}/s", unix="local")) == "allow"
        assert decide(text, Request("network-bind", f"{masked}/s", unix="local")) == "deny"
        assert decide(text, Request("signal", target="others")) == "deny"
        assert decide(text, Request("signal", target="same-sandbox")) == "allow"
        assert decide(text, Request("process-info-pidinfo", target="others")) == "deny"
        assert decide(text, Request("appleevent-send")) == "deny"


def test_seatbelt_wraps_with_sandbox_exec(world: World) -> None:
    sandbox = Seatbelt()
    command = sandbox.wrap(["pytest", "-x"], world.confinement())
    assert command == [
        "/usr/bin/sandbox-exec",
        "-p",
        profile(world.confinement(), SeatbeltOptions().temp_dirs),
        "pytest",
        "-x",
    ]


def test_seatbelt_problem_off_macos_and_without_sandbox_exec(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if sys.platform != "darwin":
        problem = Seatbelt().problem()
        assert problem is not None and problem.startswith("seatbelt needs macOS (sandbox-exec)")
    monkeypatch.setattr(seatbelt_module, "_on_macos", lambda: True)
    problem = Seatbelt(SeatbeltOptions(executable="/nowhere/sandbox-exec")).problem()
    assert problem is not None and "sandbox-exec is missing" in problem
    assert "/nowhere/sandbox-exec" in problem and "\n" not in problem


# -- none and auto -------------------------------------------------------------------------


def test_none_leaves_the_command_as_it_is(world: World) -> None:
    sandbox = NoSandbox()
    argv = ["sh", "-c", "echo 'a b'"]
    wrapped = sandbox.wrap(argv, world.confinement())
    assert wrapped == argv and wrapped is not argv
    assert sandbox.problem() is None and sandbox.name == "none"


@pytest.mark.skipif(not ON_LINUX, reason="auto picks bubblewrap on Linux")
def test_auto_chooses_bubblewrap_on_linux(world: World) -> None:
    if shutil.which("bwrap") is None:
        components.missing("bubblewrap", "bwrap is not installed")
    sandbox = Auto()
    assert sandbox.problem() is None
    assert sandbox.chosen is not None and sandbox.chosen.name == "bubblewrap"
    argv = ["true"]
    assert sandbox.wrap(argv, world.confinement()) == Bubblewrap().wrap(argv, world.confinement())


class _Broken:
    name = "broken"

    def __init__(self) -> None:
        self.probes = 0

    def problem(self) -> str | None:
        self.probes += 1
        return "it is broken: fix it"

    def wrap(self, argv: list[str], confinement: Confinement) -> list[str]:
        raise AssertionError("a broken sandbox must not wrap")


def test_auto_says_what_it_tried_and_never_runs_unconfined(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = _Broken()
    monkeypatch.setattr(auto_module, "candidates", lambda: [broken])
    sandbox = Auto()
    problem = sandbox.problem()
    assert problem is not None and "\n" not in problem
    assert "broken: it is broken: fix it" in problem
    assert sandbox.chosen is None
    with pytest.raises(PluginError, match="broken"):
        sandbox.wrap(["true"], world.confinement())
    assert broken.probes == 1


def test_auto_on_an_unknown_platform_points_to_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "sunos5")
    problem = Auto().problem()
    assert problem is not None and "sunos5" in problem and "sandbox=none" in problem


def test_the_plugins_register_with_their_options() -> None:
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    registry = Plugins(pm)
    for module in (bubblewrap_module, seatbelt_module, none_module, auto_module):
        registry.register(module, name=module.__name__)
    assert sorted(registry.of_kind("sandbox")) == ["auto", "bubblewrap", "none", "seatbelt"]
    built = registry.create("sandbox", "bubblewrap", {"hide-run": False, "executable": "bwrap"})
    assert isinstance(built, Bubblewrap) and built.options.hide_run is False
    assert isinstance(registry.create("sandbox", "seatbelt", {"temp-dirs": ["/x"]}), Seatbelt)
    assert isinstance(registry.create("sandbox", "none"), NoSandbox)
    assert isinstance(registry.create("sandbox", "auto"), Auto)
    with pytest.raises(ConfigError, match="hide-run"):
        registry.create("sandbox", "bubblewrap", {"hide_runs": True})
    for name in ("auto", "bubblewrap", "none", "seatbelt"):
        assert registry.get("sandbox", name).spec.description
