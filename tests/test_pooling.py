"""Several repositories, one answer: the last bouts of two real repositories pooled into
one report (every rate over all their tasks, each contestant's split by repository),
through the command line and the Python API; what cannot be pooled says why in one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bugbout import BugboutError, pool_reports, render_report
from bugbout.example import build_example
from cli_runs import bugbout
from one_bug import AGENTS, command_bout

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The demo after a whole bout, and a one-bug repository raced by a contestant named
    as the demo's `correct` (a right fix) and one named `empty` (no change)."""
    demo = build_example(tmp_path_factory.mktemp("pool") / "tally")
    ran = bugbout("run", cwd=demo)
    assert ran.returncode == 0, ran.stderr
    other = command_bout(
        tmp_path_factory.mktemp("pool"), {"correct": AGENTS["good"], "empty": AGENTS["empty"]}
    )
    return demo, other


def test_two_repositories_pool_into_one_report_split_by_repository(
    two: tuple[Path, Path],
) -> None:
    demo, other = two
    report = pool_reports([demo, other])
    assert report.pooled == sorted([demo.name, other.name])
    rows = {row.contestant: row for row in report.agents}
    demo_tasks = len([t for t in report.tasks if t.repository == demo.name and t.scored])
    assert demo_tasks > 0 and [t.repository for t in report.tasks].count(other.name) == 1
    correct = rows["correct"]
    assert correct.scored == demo_tasks + 1 and correct.resolved == correct.scored
    assert {name: (s.resolved, s.scored) for name, s in correct.repositories.items()} == {
        demo.name: (demo_tasks, demo_tasks),
        other.name: (1, 1),
    }
    assert rows["empty"].resolved == 0 and rows["empty"].scored == demo_tasks + 1
    assert set(rows["wrong"].repositories) == {demo.name}  # raced in the demo only
    assert report.found.scored == demo_tasks + 1
    text = render_report(report, "markdown")
    assert "## By repository" in text and other.name in text


def test_the_command_line_pools_this_repository_with_others(two: tuple[Path, Path]) -> None:
    demo, other = two
    result = bugbout("report", "--format", "json", "--pool", str(other), cwd=demo)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["pooled"] == sorted([demo.name, other.name])
    single = json.loads(bugbout("report", "--format", "json", cwd=demo).stdout)
    assert single["pooled"] == [] and len(report["tasks"]) == len(single["tasks"]) + 1


def test_what_cannot_be_pooled_says_why(two: tuple[Path, Path], tmp_path: Path) -> None:
    demo, _ = two
    twin = tmp_path / "tally-copy"
    shutil.copytree(demo, twin, symlinks=True)  # the same commits: its evidence twice
    with pytest.raises(BugboutError, match="pool each commit's repository once"):
        pool_reports([demo, twin])
    fresh = build_example(tmp_path / "fresh")
    with pytest.raises(BugboutError, match="run `bugbout run` there first"):
        pool_reports([demo, fresh])
    with pytest.raises(BugboutError, match="two repositories or more"):
        pool_reports([demo])
    result = bugbout("report", "--pool", str(twin), cwd=demo)
    assert result.returncode != 0
    assert "pool each commit's repository once" in result.stderr
    assert "Traceback" not in result.stderr
