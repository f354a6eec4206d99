"""What entering an overlay costs a run in processes: a command that is a script of the
overlay's own shell (the sandbox's seccomp opener, ``/bin/sh -c``) runs in the shell that
mounted the overlay, as it would have run in a shell of its own: its name, its arguments,
the mount's view, and (in a sandbox) its seccomp filter."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bugbout.sandbox.confinement import Confinement
from bugbout.sandbox.overlay import Overlay, enter, overlay_problem
from sandbox_world import _make

SCRIPT = 'echo "$0|$#|$1|$2"; cat from-lower; echo written > new; tr "\\0" " " < /proc/$$/cmdline'


def _overlay(root: Path) -> Overlay:
    problem = overlay_problem(root / "scratch")
    if problem is not None:
        pytest.fail(f"an overlay does not mount here: {problem}")
    overlay = Overlay(
        lower=root / "lower", upper=root / "upper", work=root / "work", target=root / "mnt"
    )
    for folder in (overlay.lower, overlay.upper, overlay.work, overlay.target):
        folder.mkdir()
    (overlay.lower / "from-lower").write_text("lower's\n")
    return overlay


def _shells(argv: list[str]) -> int:
    return sum(os.path.basename(arg) in ("sh", "dash", "bash") for arg in argv)


@pytest.mark.skipif(os.geteuid() != 0, reason="an ordinary user's command runs in a nested user")
def test_a_script_of_the_same_shell_runs_in_the_shell_that_mounted(tmp_path: Path) -> None:
    overlay = _overlay(tmp_path)
    argv = enter(overlay, ["/bin/sh", "-c", SCRIPT, "named", "a b", "c"])

    result = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)

    assert _shells(argv) == 1, argv
    assert result.returncode == 0, result.stderr
    name, lower, running = result.stdout.splitlines()
    assert (name, lower) == ("named|2|a b|c", "lower's")
    assert "mount -t overlay" in running  # the mounting shell itself ran the script
    assert (overlay.upper / "new").read_text() == "written\n"


def test_any_other_command_is_started_as_it_is(tmp_path: Path) -> None:
    overlay = _overlay(tmp_path)
    for command in (["sh", "-c", SCRIPT, "n"], ["/bin/sh", "-e", SCRIPT], ["/bin/sh", "-c"]):
        argv = enter(overlay, command)
        assert argv[-len(command) :] == command


def test_a_sandboxed_run_in_an_overlay_keeps_its_seccomp_filter(tmp_path: Path) -> None:
    overlay = _overlay(tmp_path)
    sandbox = _make("bubblewrap")
    wrapped = sandbox.wrap(
        ["sh", "-c", "grep Seccomp: /proc/self/status; cat from-lower"],
        Confinement(workdir=overlay.target, writable=(overlay.upper,)),
    )

    result = subprocess.run(
        enter(overlay, wrapped), capture_output=True, text=True, timeout=60, check=False
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["Seccomp:", "2", "lower's"]
