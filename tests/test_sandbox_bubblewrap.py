"""Bubblewrap's command line (how its layers are ordered and sized) and its diagnosis of
a bwrap that is missing or cannot run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from bugbout.core.contract.errors import PluginError
from bugbout.plugins.sandboxes import bubblewrap as bubblewrap_module
from bugbout.plugins.sandboxes.bubblewrap import Bubblewrap, BubblewrapOptions
from bugbout.sandbox.confinement import Confinement
from bugbout.sandboxes import Access, layers
from sandbox_world import World, _make, _sh


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


def test_the_seccomp_filter_leaves_the_callers_descriptors_alone(
    bwrap: Bubblewrap, tmp_path: Path
) -> None:
    """A caller passes descriptors on (a test run, its outcome file): the filter is read
    from one the caller does not use, whichever those are."""
    for number in (3, 8, 9):
        (tmp_path / f"fd{number}").write_text(f"descriptor {number}\n")
    inside = "cat <&3; cat <&8; cat <&9; grep '^Seccomp:' /proc/self/status"
    wrapped = bwrap.wrap(["sh", "-c", inside], Confinement(workdir=tmp_path))
    result = subprocess.run(
        ["sh", "-c", 'exec "$@" 3<fd3 8<fd8 9<fd9', "caller", *wrapped],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:3] == ["descriptor 3", "descriptor 8", "descriptor 9"]
    assert lines[3].split() == ["Seccomp:", "2"]
