"""A stopped bout kills uv and the builds it started: uv runs in a process group of its
own, handed to the stop (a uv building an old sdist outlived an interrupted bout)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bugbout.core.plumbing.environments import uv_program
from bugbout.core.plumbing.environments.uv_program import UvFailure, run_uv
from bugbout.core.plumbing.runtime.stopping import Stop


def _live(marker: str) -> bool:
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, check=False)
    return bool(found.stdout.split())


def test_a_killed_stop_kills_uv_and_its_children(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = f"bugbout-uv-stop-{os.getpid()}"
    fake = tmp_path / "uv"
    build = f"{sys.executable} -c 'import time; time.sleep(600)' {marker}"
    fake.write_text(f"#!/bin/sh\n{build} &\nwait\n")  # a build it waits for
    fake.chmod(0o755)
    monkeypatch.setattr(uv_program, "uv_binary", lambda: str(fake))
    failures: list[UvFailure] = []

    def install() -> None:
        try:
            run_uv(["pip", "install", "x"], timeout=600, what="installing", cwd=tmp_path)
        except UvFailure as failure:
            failures.append(failure)

    stop = Stop(grace=0, notify=lambda _: None)
    with stop.installed():
        worker = threading.Thread(target=install)
        worker.start()
        deadline = time.monotonic() + 10
        while not _live(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _live(marker)
        stop.kill()
        worker.join(timeout=20)
    assert not worker.is_alive()
    assert failures  # uv was killed: it failed, not returned
    deadline = time.monotonic() + 10
    while _live(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _live(marker)  # its child went with the group


def test_uv_output_and_errors_are_read_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "uv"
    fake.write_text('#!/bin/sh\nif [ "$1" = ok ]; then echo "a==1"; exit 0; fi\n'
                    'echo "error: No solution found" >&2\nexit 2\n')  # fmt: skip
    fake.chmod(0o755)
    monkeypatch.setattr(uv_program, "uv_binary", lambda: str(fake))
    assert run_uv(["ok"], timeout=30, what="resolving", cwd=tmp_path) == "a==1\n"
    with pytest.raises(UvFailure, match="resolving failed: No solution found"):
        run_uv(["no"], timeout=30, what="resolving", cwd=tmp_path)
