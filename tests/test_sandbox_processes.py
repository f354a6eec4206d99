"""Bubblewrap's private directories, processes and namespaces, attacked for real: private
/tmp, masks that stay mounted, no host process seen or left behind, no terminal."""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import re
import signal
import subprocess
import tempfile
import termios
import time
import uuid
from pathlib import Path

import pytest

from bugbout.plugins.sandboxes.bubblewrap import Bubblewrap
from bugbout.sandbox.confinement import Confinement
from sandbox_world import ENV, World, _sh, run


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
            "ls /proc | grep -c '^[0-9]'",
        )
        assert token not in result.stdout and duration not in result.stdout
        assert int(result.stdout.split()[-1]) < 10, result  # only the sandbox's own
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


def test_a_workdir_under_tmp_stays_the_real_one(bwrap: Bubblewrap, tmp_path: Path) -> None:
    """The private /tmp must not swallow a checkout that lives in the real one."""
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "sibling").write_text("host tmp\n")
    result = run(bwrap, Confinement(workdir=work), f"echo fixed > calc.py; ls -A {tmp_path}")
    assert (work / "calc.py").read_text() == "fixed\n", result
    assert result.stdout.split() == ["work"], result
