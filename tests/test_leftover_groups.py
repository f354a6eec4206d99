"""A run's record ends what its process group left once its leader is gone: a member
still running is killed, and an empty group is passed over (no look at every process)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bugbout.core.plumbing.confinement import leftovers
from bugbout.core.plumbing.confinement.leftovers import Leftovers

# The leader starts a member of its own group that outlives it, prints its pid, and exits.
LEADER = (
    "import subprocess, sys\n"
    "member = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
    "print(member.pid, flush=True)\n"
)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    return state == "Z"


def test_a_member_left_by_a_gone_leader_is_killed(tmp_path: Path) -> None:
    leader = subprocess.Popen(
        [sys.executable, "-c", LEADER], stdout=subprocess.PIPE, start_new_session=True
    )
    record = Leftovers(tmp_path / "run.leftovers")
    record.add_process(leader.pid)
    assert leader.stdout is not None
    member = int(leader.stdout.readline())
    leader.wait()
    try:
        assert not _gone(member)
        record.end()
        deadline = time.monotonic() + 10
        while not _gone(member) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone(member), "the member the leader left still runs"
    finally:
        if not _gone(member):
            os.kill(member, 9)


def test_an_empty_group_is_passed_over_without_looking_at_every_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    leader = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
    record = Leftovers(tmp_path / "run.leftovers")
    record.add_process(leader.pid)
    leader.wait()
    looked: list[Path] = []
    real = Path.iterdir

    def iterdir(path: Path) -> Iterator[Path]:
        looked.append(path)
        return real(path)

    monkeypatch.setattr(leftovers.Path, "iterdir", iterdir)
    record.end()
    assert Path("/proc") not in looked
    assert not record.path.exists()
