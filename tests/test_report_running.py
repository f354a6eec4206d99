"""`bugbout report` while a bout runs on the store says so, from the command line and
from Python, instead of passing a bout's first records off as its report."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bugbout.core.report.report_store import load_report
from bugbout.core.store.race_records import Score
from bugbout.core.store.store import Store
from cli_runs import bugbout
from stored_bouts import store_bout, task_ids

HOLD = """
import sys, time
from bugbout.core.store.store import Store
with Store(__import__("pathlib").Path(sys.argv[1])).lock():
    print("held", flush=True)
    time.sleep(120)
"""


def _holding(store: Path) -> subprocess.Popen[str]:
    """Another process holding the store as a running bout does."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(store)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_a_report_made_while_a_bout_runs_says_it_is_partial(tmp_path: Path) -> None:
    store_bout(tmp_path, {"alpha": dict.fromkeys(task_ids(2), Score.NO_FIX)})
    assert load_report(Store(tmp_path / ".bugbout")).running is None
    holder = _holding(tmp_path / ".bugbout")
    try:
        ran = bugbout("report", "--format", "markdown", cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr
        lines = ran.stdout.splitlines()[1:]  # under the title and the decision's heading
        first = next(line for line in lines if line.strip() and not line.startswith("## "))
        assert first.startswith("**A bout is running on "), first
        assert f"pid {holder.pid} " in first and "holds only what it has finished" in first
        terminal = bugbout("report", cwd=tmp_path)
        assert "A bout is running on" in " ".join(terminal.stdout.split())
        report = load_report(Store(tmp_path / ".bugbout"))
        assert report.running is not None and f"pid {holder.pid} " in report.running

        (tmp_path / ".bugbout" / "job.json").unlink()  # still racing: no job yet
        early = bugbout("report", cwd=tmp_path)
        assert early.returncode == 2
        assert "no report yet: a bout is running on" in early.stderr, early.stderr
    finally:
        holder.kill()
        holder.wait()
    assert os.path.exists(tmp_path / ".bugbout" / "lock")
