"""Waiting for a child process: its exit status as soon as it ends, or a timeout."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bugbout.core.plumbing.confinement.process import wait


def test_wait_gives_the_exit_status_of_a_process_that_ends() -> None:
    process = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(3)"])
    assert wait(process, 60) == 3
    assert wait(process, 60) == 3  # reaped already: the same status


def test_wait_gives_up_at_the_timeout_and_leaves_the_process_running() -> None:
    process = subprocess.Popen(["sleep", "60"])
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            wait(process, 0.2)
        assert process.poll() is None
    finally:
        process.kill()
        process.wait()
