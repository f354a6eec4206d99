"""The conformance suite of sandboxes."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from bugbout.sandbox.confinement import Confinement
from bugbout.sandbox.identity import closed_folders, confined_owner
from bugbout.testing.suites.base import PluginSuite

TIMEOUT = 60.0
SHELL = "/bin/sh"
TEMPORARY = ("/tmp", "/var/tmp", "/run", "/dev", "/proc", "/private/tmp", "/private/var")
"""Places a sandbox may replace or let write anyway: the world is built elsewhere."""
PYTHON_PREFIXES = tuple(
    sorted(
        {
            Path(sys.prefix),
            Path(sys.base_prefix),
            Path(os.path.realpath(sys.executable)).parent.parent,
        }
    )
)
"""Where this interpreter lives, readable inside every confinement (it may be under a
masked or temporary directory)."""


@dataclass(frozen=True)
class World:
    """Directories a confined process runs among: its own, and others' secrets."""

    root: Path
    workdir: Path
    """The working directory (a checkout)."""
    logs: Path
    """A writable path besides the working directory."""
    masked: Path
    """A masked directory, holding ``secret.txt``."""
    masked_file: Path
    """A masked file."""
    outside: Path
    """A directory neither writable nor masked: readable, not writable."""
    secret: str

    def confinement(self, *, network: bool = False) -> Confinement:
        return Confinement(
            workdir=self.workdir,
            writable=(self.logs,),
            readable=PYTHON_PREFIXES,
            masked=(self.masked, self.masked_file),
            network=network,
        )


def _visible_base(fallback: Path) -> tuple[Path, bool]:
    """A directory outside the temporary ones (which a sandbox may replace wholesale), in
    folders the user a confined process runs as may enter (as root: not root's HOME),
    and whether it was made here; ``fallback`` when there is none."""
    owner = confined_owner()
    candidates = [Path.home() / ".cache" / "bugbout-tests", Path.cwd() / ".bugbout-tests"]
    if owner is not None:
        candidates.append(Path("/var/cache/bugbout-tests"))
    for candidate in candidates:
        real = Path(os.path.realpath(candidate))
        if any(real.is_relative_to(place) for place in TEMPORARY):
            continue
        if owner is not None and closed_folders([real / "world"], owner):
            continue
        made = not real.exists()
        try:
            real.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        return real, made
    return fallback, False


class SandboxSuite(PluginSuite):
    """Contract tests for a sandbox (``bugbout_sandboxes``).

    ``problem()`` is ``None`` when the sandbox works on this machine, else one line
    saying why not. When it works, a wrapped command runs in the working directory with
    its exit status kept, writes only in the working directory and the writable paths,
    cannot read a masked path, and has no network unless the confinement keeps it. The
    behavioural tests are skipped where ``problem()`` is not ``None``.

    A sandbox that deliberately confines nothing (``none``) sets :attr:`confines` to
    ``False``: only the tests that hold for every sandbox run.
    """

    kind: ClassVar[str] = "sandbox"
    confines: ClassVar[bool] = True
    """Whether the sandbox enforces the confinement (``False`` only for an opt-out)."""

    @pytest.fixture
    def sandbox(self, plugin_under_test: Any) -> Any:
        """The sandbox, skipping the test where it does not work."""
        problem = plugin_under_test.problem()
        if problem is not None:
            pytest.skip(f"{self.plugin} does not work here: {problem}")
        return plugin_under_test

    @pytest.fixture
    def confining(self, sandbox: Any) -> Any:
        """The sandbox, for the tests of what it forbids."""
        if not self.confines:
            pytest.skip(f"{self.plugin} confines nothing (confines = False)")
        return sandbox

    @pytest.fixture
    def world(self, tmp_path: Path) -> Iterator[World]:
        base, made = _visible_base(tmp_path)
        root = Path(tempfile.mkdtemp(prefix="sandbox-", dir=base))
        root.chmod(0o755)  # a machine's folders: what hides a secret is the masks
        secret = f"secret-{uuid.uuid4().hex}"
        world = World(
            root=root,
            workdir=root / "work",
            logs=root / "logs",
            masked=root / "masked",
            masked_file=root / "netrc",
            outside=root / "outside",
            secret=secret,
        )
        for directory in (world.workdir, world.logs, world.masked, world.outside):
            directory.mkdir()
        (world.masked / "secret.txt").write_text(secret + "\n")
        world.masked_file.write_text(secret + "\n")
        (world.outside / "plain.txt").write_text("visible\n")
        try:
            yield world
        finally:
            shutil.rmtree(root, ignore_errors=True)
            if made:
                with contextlib.suppress(OSError):
                    base.rmdir()

    def run(
        self, sandbox: Any, confinement: Confinement, argv: list[str]
    ) -> subprocess.CompletedProcess[str]:
        """``argv`` wrapped by ``sandbox``, started in the working directory as bugbout
        starts it."""
        wrapped = sandbox.wrap(list(argv), confinement)
        return subprocess.run(
            wrapped,
            cwd=confinement.workdir,
            env={"PATH": os.environ.get("PATH", os.defpath), "LC_ALL": "C"},
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )

    def sh(
        self, sandbox: Any, confinement: Confinement, script: str
    ) -> subprocess.CompletedProcess[str]:
        return self.run(sandbox, confinement, [SHELL, "-c", script])

    # -- for every sandbox --------------------------------------------------------------------

    def test_names_itself(self, plugin_under_test: Any) -> None:
        assert plugin_under_test.name == self.plugin

    def test_problem_is_none_or_one_line(self, plugin_under_test: Any) -> None:
        problem = plugin_under_test.problem()
        if problem is not None:
            assert isinstance(problem, str)
            assert problem.strip(), "an empty problem says nothing"
            assert "\n" not in problem.strip()
        assert plugin_under_test.problem() == problem, "problem() changed between calls"

    def test_wrap_returns_a_command_and_leaves_argv_alone(self, sandbox: Any, world: World) -> None:
        argv = [SHELL, "-c", "true"]
        wrapped = sandbox.wrap(argv, world.confinement())
        assert argv == [SHELL, "-c", "true"]
        assert isinstance(wrapped, list)
        assert wrapped
        assert all(isinstance(part, str) for part in wrapped)

    def test_runs_in_the_working_directory(self, sandbox: Any, world: World) -> None:
        result = self.sh(sandbox, world.confinement(), "pwd -P")
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == os.path.realpath(world.workdir)

    def test_keeps_the_exit_status(self, sandbox: Any, world: World) -> None:
        assert self.sh(sandbox, world.confinement(), "exit 3").returncode == 3
        assert self.sh(sandbox, world.confinement(), "exit 0").returncode == 0

    def test_writes_in_the_working_directory_and_writable_paths(
        self, sandbox: Any, world: World
    ) -> None:
        script = f"echo made > made.txt && echo logged > '{world.logs}/log.txt'"
        result = self.sh(sandbox, world.confinement(), script)
        assert result.returncode == 0, result.stderr
        assert (world.workdir / "made.txt").read_text() == "made\n"
        assert (world.logs / "log.txt").read_text() == "logged\n"

    def test_reads_what_is_not_masked(self, sandbox: Any, world: World) -> None:
        result = self.sh(sandbox, world.confinement(), f"cat '{world.outside}/plain.txt'")
        assert result.returncode == 0, result.stderr
        assert result.stdout == "visible\n"

    def test_keeps_the_network_when_the_confinement_does(self, sandbox: Any, world: World) -> None:
        with _listening() as port:
            result = self.run(sandbox, world.confinement(network=True), _connect(port))
        assert result.returncode == 0, f"cannot connect with network=True: {result.stderr}"

    # -- for a sandbox that confines ------------------------------------------------------------

    def test_cannot_write_outside_the_writable_paths(self, confining: Any, world: World) -> None:
        targets = [world.outside / "written.txt", world.root / "written.txt"]
        for target in targets:
            self.sh(confining, world.confinement(), f"echo written > '{target}'")
            assert not target.exists(), f"the sandboxed command wrote {target}"
        self.sh(confining, world.confinement(), f"rm -f '{world.outside}/plain.txt'")
        assert (world.outside / "plain.txt").exists(), "the sandboxed command deleted a file"

    def test_cannot_read_a_masked_path(self, confining: Any, world: World) -> None:
        for target in (world.masked / "secret.txt", world.masked_file):
            unconfined = subprocess.run(
                ["cat", str(target)], capture_output=True, text=True, check=False
            )
            assert world.secret in unconfined.stdout  # the control: the secret is there
            result = self.sh(confining, world.confinement(), f"cat '{target}'")
            assert world.secret not in result.stdout, f"{target} was read"
        listing = self.sh(confining, world.confinement(), f"ls -a '{world.masked}'")
        assert "secret.txt" not in listing.stdout, "a masked directory's names are visible"

    def test_cannot_write_a_masked_path(self, confining: Any, world: World) -> None:
        self.sh(confining, world.confinement(), f"echo x > '{world.masked}/new.txt'")
        self.sh(confining, world.confinement(), f"echo x > '{world.masked_file}'")
        assert not (world.masked / "new.txt").exists()
        assert world.masked_file.read_text() == world.secret + "\n"

    def test_has_no_network_without_it(self, confining: Any, world: World) -> None:
        with _listening() as port:
            result = self.run(confining, world.confinement(network=False), _connect(port))
        assert result.returncode != 0, "connected to a 127.0.0.1 server with network=False"

    def test_cannot_change_the_kernels_settings(self, confining: Any, world: World) -> None:
        """Not even as root: a uid 0 without capabilities may write most of ``/proc/sys``
        (``kernel.core_pattern`` runs a program as root on the host). Each knob is opened
        for appending and closed unwritten, which changes nothing."""
        script = (
            "for knob in /proc/sys/kernel/core_pattern /proc/sys/fs/lease-break-time "
            '/proc/sysrq-trigger; do [ -e "$knob" ] && (: >> "$knob") 2>/dev/null '
            '&& echo "$knob"; done; true'
        )
        result = self.sh(confining, world.confinement(), script)
        assert result.returncode == 0, result.stderr
        assert result.stdout == "", f"opened for writing: {result.stdout.split()}"


@contextlib.contextmanager
def _listening() -> Iterator[int]:
    """A TCP server on 127.0.0.1 (connections complete in the backlog): its port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]


def _connect(port: int) -> list[str]:
    """A command that exits 0 only if it connects to ``127.0.0.1:port``."""
    code = (
        "import socket, sys\n"
        f"socket.create_connection(('127.0.0.1', {port}), timeout=5).close()\n"
        "sys.exit(0)\n"
    )
    return [sys.executable, "-I", "-c", code]
