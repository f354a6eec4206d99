"""A test run's scratch folder is removed while bugbout goes on, never left behind: the
run does not wait for its HOME's removal, and the process waits for it before it exits."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bugbout.core.plumbing.confinement import scratch
from bugbout.core.plumbing.confinement.scratch import scratch_folder


def test_the_run_goes_on_while_its_folder_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(scratch.tempfile, "tempdir", None)
    went_on = threading.Event()
    removed_after: list[bool] = []
    real = shutil.rmtree

    def slow(path: str, *args: object, **kwargs: object) -> None:
        removed_after.append(went_on.wait(timeout=3))  # the disk is slow until bugbout went on
        real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(shutil, "rmtree", slow)
    with scratch_folder("home") as home:
        Path(home, "pytest-of-nobody", "pytest-0").mkdir(parents=True)
        Path(home, "pytest-of-nobody", "pytest-0", "file").write_text("x")
        os.chmod(Path(home, "pytest-of-nobody"), 0o500)  # a folder the tests locked
    went_on.set()
    for thread in threading.enumerate():
        if thread.name.startswith("remove "):
            thread.join(timeout=30)
    assert removed_after == [True], "the run waited for its folder's removal"
    assert not Path(home).exists()


def test_a_bugbout_that_ends_leaves_no_scratch_folder(tmp_path: Path) -> None:
    program = (
        "from pathlib import Path\n"
        "from bugbout.core.plumbing.confinement.scratch import scratch_folder\n"
        "for _ in range(3):\n"
        "    with scratch_folder('home') as home:\n"
        "        for n in range(200):\n"
        "            Path(home, f'f{n}').write_text('x')\n"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    subprocess.run([sys.executable, "-c", program], env=env, check=True, timeout=120)
    assert not any(tmp_path.iterdir()), sorted(tmp_path.iterdir())


def test_a_folder_no_thread_can_remove_is_removed_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(scratch.tempfile, "tempdir", None)

    def refused(self: threading.Thread) -> None:
        raise RuntimeError("can't create new thread at interpreter shutdown")

    monkeypatch.setattr(threading.Thread, "start", refused)
    with scratch_folder("home") as home:
        Path(home, "file").write_text("x")
    assert not Path(home).exists()
