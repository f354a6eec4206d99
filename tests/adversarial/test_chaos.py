"""Chaos in the test suite: bouts killed with ``kill -9`` at 10 random points lose
nothing (``nox -s chaos`` does 100); and the checks it relies on do catch a lost, changed
or rerun attempt and an unreadable record."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

import chaos
import pytest

from bugbout.core.store.race_records import Attempt, AttemptStatus


@pytest.mark.slow
def test_ten_kill_points_lose_nothing(tmp_path: Path) -> None:
    seed = int(os.environ.get("BUGBOUT_CHAOS_SEED", random.randrange(1 << 32)))
    outcome = chaos.run_chaos(tmp_path, kills=10, seed=seed, log=print)  # shown on failure
    assert outcome.problems == [], f"seed {seed}"
    assert outcome.kills >= 10  # a bout is resumed until it completes: a few more may come
    assert outcome.bouts >= 1
    assert outcome.agent_runs >= 3 * outcome.bouts  # every contestant ran in every bout


def _attempt(bout: chaos.Bout, contestant: str) -> Path:
    """A stored attempt of ``contestant``, and the marker of its agent's one run."""
    path = bout.repo / ".bugbout" / "attempts" / "task" / contestant / "key.json"
    path.parent.mkdir(parents=True)
    record = Attempt(task_id="task", contestant=contestant, key="key", agent="command",
                     status=AttemptStatus.FINISHED)  # fmt: skip
    path.write_text(record.model_dump_json(by_alias=True))
    (bout.marks / f"task.{contestant}.1.1.start").touch()
    return path


def test_the_checks_catch_what_a_kill_could_break(tmp_path: Path) -> None:
    chaos.build(tmp_path / "template")
    bout = chaos.Bout(tmp_path / "template", tmp_path / "bout")
    lost, changed = _attempt(bout, "lost"), _attempt(bout, "changed")
    _attempt(bout, "rerun")
    (bout.repo / ".bugbout" / "tasks.json").write_text('{"tasks": [')
    (bout.repo / ".bugbout" / "job.json").write_text(json.dumps({"judge": "majority"}))
    assert [problem.split(":")[0] for problem in sorted(bout.check())] == [
        "unreadable record job.json",
        "unreadable record tasks.json",
    ]
    lost.unlink()
    changed.write_text(changed.read_text().replace("finished", "timeout"))
    (bout.marks / "task.rerun.2.2.start").touch()
    (bout.repo / ".bugbout" / "tasks.json").unlink()
    (bout.repo / ".bugbout" / "job.json").unlink()
    assert sorted(bout.check()) == [
        "finished attempt attempts/task/rerun/key.json: its agent ran again",
        "stored attempt attempts/task/changed/key.json was changed",
        "stored attempt attempts/task/lost/key.json was lost",
    ]
    orphan = subprocess.Popen(  # an agent's daemon, left running
        ["sleep", "60"], env={**os.environ, "CHAOS_TAG": bout.tag}, start_new_session=True
    )
    try:
        problems = bout.check()
    finally:
        orphan.kill()
        orphan.wait()
    outlived = [p for p in problems if p.startswith("process outlived its bout: ")]
    assert [p.split(":")[1].strip() for p in outlived] == [str(orphan.pid)]


def test_reports_are_compared_without_times_and_paths() -> None:
    report = {"wall_time": 3.2, "tasks": [{"logdir": "/x/y", "title": "in /root/a"}], "n": 1}
    assert chaos.normalized(report, ("/root",)) == {"tasks": [{"title": "in <root>/a"}], "n": 1}
