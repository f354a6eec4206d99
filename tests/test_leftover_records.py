"""Records of what test runs started, kept where a crash leaves them: the next bugbout
ends what a dead one left (real processes), never what a live one is running."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from bugbout.core.plumbing.confinement.leftovers import Leftovers, end_orphans, started

SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]


def _owner_that_died() -> tuple[int, int]:
    """The pid and start of a process that has ended (as a bugbout killed with kill -9)."""
    process = subprocess.Popen(SLEEPER)
    start = started(process.pid)
    process.kill()
    process.wait()
    assert start is not None
    return process.pid, start


def test_a_dead_bugbouts_test_run_is_ended_and_a_live_ones_is_not(tmp_path: Path) -> None:
    orphan = subprocess.Popen(SLEEPER, start_new_session=True)
    alive = subprocess.Popen(SLEEPER, start_new_session=True)
    try:
        pid, start = _owner_that_died()
        dead_record = Leftovers(tmp_path / f"{pid}-{start}-a.leftovers")
        dead_record.add_process(orphan.pid)
        live_record = Leftovers.of_this_process(tmp_path)
        live_record.add_process(alive.pid)
        end_orphans(tmp_path)
        deadline = time.monotonic() + 10
        while orphan.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert orphan.poll() is not None, "the dead bugbout's test run still runs"
        assert not dead_record.path.exists()
        assert alive.poll() is None, "a live bugbout's test run was ended"
        assert live_record.path.exists()
    finally:
        for process in (orphan, alive):
            process.kill()
            process.wait()
