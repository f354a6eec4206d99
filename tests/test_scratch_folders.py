"""The folders a test run writes in beside its tree (its HOME, the guard's): a bugbout
killed with kill -9 in the middle of a real test run leaves them, the next bugbout's first
test run removes them, and a live bugbout's stay until its run is over."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bugbout.core.plumbing.confinement.scratch import scratch_folder, sweep

RUN = """
import sys
from pathlib import Path

from bugbout.core.contract.manager import make_plugins
from bugbout.core.contract.settings import ProjectSettings
from bugbout.core.plumbing.environments.environment import EnvironmentRequest
from bugbout.core.plumbing.testruns.testrun import run_tests

tree = Path(sys.argv[1])
project = ProjectSettings(source="pkg", tests="tests")
builder = make_plugins(kinds=["environment"]).create("environment", "interpreter")
request = EnvironmentRequest(project=project, tree=tree, home=tree.parent / "environment")
run = run_tests(builder.build(request), tree, ["tests"], project=project, label="run", timeout=300)
print(run.status.value, sorted(outcome.value for outcome in run.outcomes.values()))
"""
"""A bugbout process: one real pytest run of a tree's tests."""

WAITING = """
import os
import pathlib
import time

MARKS = pathlib.Path({marks!r})


def test_waits():
    (MARKS / "home-{name}").write_text(os.environ["HOME"])
    while not (MARKS / "release").exists():
        time.sleep(0.05)
"""
"""A test that says where its HOME is, then waits to be released."""


def _tree(root: Path, name: str, test: str) -> Path:
    tree = root / name
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "tests").mkdir()
    (tree / "tests" / "test_it.py").write_text(test)
    return tree


def _bugbout(tree: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", RUN, str(tree)], env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip


def _home_of(marks: Path, name: str, process: subprocess.Popen[str]) -> Path:
    """The HOME the waiting test of run ``name`` reports, once it runs."""
    mark = marks / f"home-{name}"
    deadline = time.monotonic() + 120
    while not mark.exists() or not mark.read_text():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"the test run {name} never started"
        time.sleep(0.05)
    return Path(mark.read_text())


def _scratch(folder: Path, pid: int) -> list[Path]:
    return sorted(folder.glob(f"bugbout-*-{pid}-*"))


def test_a_killed_bugbouts_folders_go_at_the_next_run_and_a_live_ones_stay(
    tmp_path: Path,
) -> None:
    temporary, marks = tmp_path / "tmp", tmp_path / "marks"
    temporary.mkdir()
    marks.mkdir()
    env = {**os.environ, "TMPDIR": str(temporary), "BUGBOUT_HOME": str(tmp_path / "home")}
    killed = _bugbout(_tree(tmp_path, "a", WAITING.format(marks=str(marks), name="a")), env)
    live = _bugbout(_tree(tmp_path, "b", WAITING.format(marks=str(marks), name="b")), env)
    try:
        killed_home = _home_of(marks, "a", killed)
        killed_folders = _scratch(temporary, killed.pid)
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()
        assert killed_home.is_dir(), "a bugbout killed mid-run removed its test run's HOME"
        assert killed_home in killed_folders
        assert len(killed_folders) == 2, killed_folders  # its HOME and the guard's

        live_home = _home_of(marks, "b", live)
        live_folders = _scratch(temporary, live.pid)
        quick = _tree(tmp_path, "c", "def test_passes():\n    pass\n")
        following = subprocess.run(
            [sys.executable, "-c", RUN, str(quick)], env=env, capture_output=True, text=True,
            timeout=300, check=False,
        )  # fmt: skip
        assert following.stdout.startswith("ok"), following.stdout + following.stderr
        assert not any(path.exists() for path in killed_folders), "the next run left them"
        assert live_home.is_dir() and all(path.is_dir() for path in live_folders), (
            "the next run removed the folders of a bugbout still running"
        )

        (marks / "release").touch()
        out, err = live.communicate(timeout=120)
        assert out.startswith("ok ['passed']"), out + err
        assert not live_home.exists()
        assert not any(temporary.iterdir()), sorted(temporary.iterdir())
    finally:
        (marks / "release").touch()
        for process in (killed, live):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def test_what_a_run_made_unwritable_is_removed_with_its_folder(tmp_path: Path) -> None:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        pid = process.pid
        start = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[19].decode()
        left = tmp_path / f"bugbout-home-{pid}-{start}-abcdefgh"
        locked = left / "cache" / "locked"
        locked.mkdir(parents=True)
        (locked / "file").write_text("x")
        locked.chmod(0o000)
        (left / "cache").chmod(0o500)
        sweep(tmp_path)
        assert left.is_dir(), "the folder of a live process was removed"
    finally:
        process.kill()
        process.wait()
    sweep(tmp_path)
    assert not left.exists(), "the folder of a process that is gone stayed"


def test_a_folder_is_for_a_use_bugbout_knows() -> None:
    with pytest.raises(ValueError, match="guard, home"), scratch_folder("cache"):
        pass
