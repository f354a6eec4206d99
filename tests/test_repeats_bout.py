"""A demo bout with ``run.repeats=3``: every repeat its own stored, reused attempt, and a
report whose pass@k, pass^k, clustered intervals and paired tests agree with an
independent computation from the stored attempts (subsets counted one by one, scipy)."""

from __future__ import annotations

import json
import subprocess
import sys
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from bugbout.cli.dry_run import plan, sweep_runs
from bugbout.config import compose_settings
from bugbout.example import build_example

pytestmark = pytest.mark.slow  # a whole demo bout, three times over

COIN = (
    "import random, sys\n"
    "from bugbout.example.agents import correct, empty, which_bug\n"
    "bug = which_bug(sys.stdin.read())\n"
    "(correct if random.random() < 0.5 else empty)(bug)\n"
)
"""A contestant that fixes the bug half the time: its repeats differ."""


def bugbout(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bugbout", *args],
        cwd=cwd, capture_output=True, text=True, timeout=1200, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def bout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo repository with contestants correct, wrong and coin after a bout with
    three repeats."""
    repo = build_example(tmp_path_factory.mktemp("repeats") / "tally")
    config = repo / "bugbout.yaml"
    text = "".join(
        line
        for line in config.read_text().splitlines(keepends=True)
        if not line.startswith(("  breaking:", "  empty:"))
    )
    coin = json.dumps([sys.executable, "-c", COIN])
    text = text.replace(
        "contestants:\n", f"contestants:\n  coin: {{agent: command, command: {coin}}}\n", 1
    )
    config.write_text(text)
    result = bugbout("run", "run.repeats=3", cwd=repo)
    assert result.returncode == 0, result.stderr
    (repo / "terminal.txt").write_text(result.stdout)
    return repo


def _attempts(repo: Path) -> dict[str, float]:
    """Every stored attempt file and its modification time."""
    return {str(p): p.stat().st_mtime for p in (repo / ".bugbout" / "attempts").rglob("*.json")}


def _samples(repo: Path, name: str) -> dict[str, list[bool]]:
    """Each task's samples of ``name`` from its stored attempts: the demo's scripted fix
    resolves its bug, an empty patch does not."""
    found: dict[str, list[bool]] = {}
    for path in sorted((repo / ".bugbout" / "attempts").glob(f"*/{name}/*.json")):
        attempt = json.loads(path.read_text())
        assert attempt["status"] == "finished"
        found.setdefault(attempt["task_id"], []).append(bool(attempt["patch"]["source"]))
    return found


def _share(samples: list[bool], k: int, which: object) -> float:
    drawn = list(combinations(samples, k))
    return sum(bool(which(d)) for d in drawn) / len(drawn)


def test_each_repeat_is_its_own_attempt_and_the_report_says_pass_at_k(bout: Path) -> None:
    job = json.loads((bout / ".bugbout" / "job.json").read_text())
    # 3 tasks x (3 contestants x 3 repeats + 1 examiner)
    assert len(job["attempts"]) == len({a["path"] for a in job["attempts"]}) == 30
    report = json.loads((bout / ".bugbout" / "report.json").read_text())
    repeats = report["repeats"]
    assert repeats["k"] == 3
    agents = {agent["contestant"]: agent for agent in repeats["agents"]}
    assert agents["correct"]["rate"] == 1.0
    assert [at["value"] for at in agents["correct"]["pass_all"]] == [1.0, 1.0, 1.0]
    assert [at["value"] for at in agents["wrong"]["pass_at"]] == [0.0, 0.0, 0.0]
    samples = _samples(bout, "coin")
    assert sorted(samples) == sorted(r["task"] for r in agents["coin"]["per_task"])
    assert all(len(s) == 3 for s in samples.values())
    coin = agents["coin"]
    for row in coin["per_task"]:
        assert (row["resolved"], row["samples"]) == (sum(samples[row["task"]]), 3)
    rates = [sum(s) / 3 for _, s in sorted(samples.items())]
    assert coin["rate"] == pytest.approx(np.mean(rates))
    if np.std(rates) > 0:
        low, high = stats.t.interval(
            0.95, len(rates) - 1, loc=np.mean(rates), scale=stats.sem(rates)
        )
        assert coin["low"] == pytest.approx(max(0.0, low))
        assert coin["high"] == pytest.approx(min(1.0, high))
    for k in (1, 2, 3):
        at_k = np.mean([_share(s, k, any) for _, s in sorted(samples.items())])
        hat_k = np.mean([_share(s, k, all) for _, s in sorted(samples.items())])
        assert coin["pass_at"][k - 1]["value"] == pytest.approx(at_k)
        assert coin["pass_all"][k - 1]["value"] == pytest.approx(hat_k)
    pair = next(p for p in repeats["pairs"] if {p["first"], p["second"]} == {"coin", "correct"})
    ones = [1.0] * len(rates)
    mine, theirs = (rates, ones) if pair["first"] == "coin" else (ones, rates)
    assert pair["difference"] == pytest.approx(np.mean(np.subtract(mine, theirs)))
    if np.std(rates) > 0:
        assert pair["p_value"] == pytest.approx(stats.ttest_rel(mine, theirs).pvalue)
    for name in ("report.md", "report.html"):
        text = (bout / ".bugbout" / name).read_text()
        assert "Repeats (3 per task and contestant)" in text
        assert "pass@3" in text and "pass^3" in text
    assert "Repeats (3 per task and contestant)" in (bout / "terminal.txt").read_text()


def test_repeats_are_reused_and_repeat_one_is_todays_attempt(bout: Path) -> None:
    before = _attempts(bout)
    again = bugbout("run", "run.repeats=3", cwd=bout)
    assert again.returncode == 0, again.stderr
    assert _attempts(bout) == before  # every repeat found in the store, none run again
    dry = bugbout("run", "--dry-run", "run.repeats=4", cwd=bout)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[0].startswith(
        "dry run (nothing runs): 3 task(s) x (3 contestant(s) x 4 repeats + 1 examiner(s)) "
        "= 39 attempt(s); 30 in the store (reused, free), 9 to run"
    ), dry.stdout
    plans = [plan(*compose_settings(bout, [f"run.repeats={k}"])) for k in (3, 4, 5)]
    assert sweep_runs(plans).startswith("sweep: 3 job(s) will make 18 agent run(s)")
    one = bugbout("run", cwd=bout)  # run.repeats=1: the first repeat alone, as before
    assert one.returncode == 0, one.stderr
    assert _attempts(bout) == before
    job = json.loads((bout / ".bugbout" / "job.json").read_text())
    assert len(job["attempts"]) == 3 * 4
    report = json.loads((bout / ".bugbout" / "report.json").read_text())
    assert report["repeats"]["k"] == 1
    assert report["repeats"]["agents"] == []
    assert "Repeats" not in (bout / ".bugbout" / "report.md").read_text()


def test_each_repeat_gets_its_own_retry_rounds(tmp_path: Path) -> None:
    """Rounds stay feedback: a repeat not approved gets its own next round, and its
    sample is its last round; the retry rounds section is the first repeat's."""
    repo = build_example(tmp_path / "tally")
    result = bugbout(
        "run", "run.rounds=2", "run.repeats=2", "miner.limit=1", "verdicts.run-suite=false",
        "contestant=[correct,wrong]", cwd=repo,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (task,) = (repo / ".bugbout" / "attempts").iterdir()
    wrong = sorted(p.name for p in (task / "wrong").iterdir())
    latest = [name for name in wrong if ".round" not in name]
    assert len(latest) == 2  # two repeats, each its own key
    assert sorted(wrong) == sorted([*latest, *(n.replace(".json", ".round1.json") for n in latest)])
    records = [json.loads((task / "wrong" / name).read_text()) for name in latest]
    assert sorted((r["repeat"], r["round"]) for r in records) == [(1, 2), (2, 2)]
    assert len(list((task / "correct").iterdir())) == 2  # approved: one round each
    report = json.loads((repo / ".bugbout" / "report.json").read_text())
    rounds = {row["contestant"]: row["tasks"] for row in report["rounds"]["agents"]}
    assert rounds == {"correct": 1, "wrong": 1}  # the first repeat's rounds
    samples = {
        agent["contestant"]: (agent["samples"], agent["resolved"])
        for agent in report["repeats"]["agents"]
    }
    assert samples == {"correct": (2, 2), "wrong": (2, 0)}
