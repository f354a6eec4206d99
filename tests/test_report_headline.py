"""The report's headline and its statistics, read as a user reads them: `bugbout report`
on a stored bout, and `load_report` from Python. The leader is ranked over the tasks both
were scored on; the interval of a difference agrees with its exact test; several pairs
are Holm-adjusted; a tie names everyone in it; a judge that abstains is not a loser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bugbout.cli import main
from bugbout.core.report.confidence import Confidence
from bugbout.core.report.report_store import load_report
from bugbout.core.store.race_records import AttemptStatus, Score
from bugbout.core.store.store import Store
from cli_runs import bugbout
from stored_bouts import Outcome, store_bout, task_ids

R, W = Score.RESOLVED, Score.WRONG_FIX
INFRA = AttemptStatus.INFRA_ERROR


def _report_json(project: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    """``bugbout report --format json`` in ``project``, as a user runs it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(project)
        assert main(["report", "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert isinstance(document, dict)
    return document


def _sure(project: Path) -> Confidence:
    """The report's "how sure", from Python."""
    return load_report(Store(project / ".bugbout")).confidence


def _by_task(resolved: str, tasks: list[str]) -> dict[str, Outcome]:
    """Outcomes from a string: ``R`` resolved, ``W`` wrong fix, ``-`` an infra error."""
    kinds: dict[str, Outcome] = {"R": R, "W": W, "-": INFRA}
    return {t: kinds[mark] for t, mark in zip(tasks, resolved, strict=True)}


def test_the_leader_is_ranked_over_the_tasks_both_were_scored_on(tmp_path: Path) -> None:
    """The issue's bout: beta 10/20; delta 6/6 with 14 infrastructure errors left out, and
    5-0 against beta on the 6 tasks both were scored on. Counting named beta, 10/20."""
    ids = task_ids(20)
    store_bout(
        tmp_path,
        {
            "beta": _by_task("R" * 10 + "W" * 10, ids),
            "delta": _by_task("-" * 9 + "R" * 6 + "-" * 5, ids),
        },
    )
    ran = bugbout("report", "--format", "markdown", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    headline = next(line for line in ran.stdout.splitlines() if "leads" in line)
    assert headline.startswith("delta leads: on the 6 tasks both delta and beta"), headline

    sure = _sure(tmp_path)
    assert sure.leader == ["delta"]
    assert sure.headline == (
        "delta leads: on the 6 tasks both delta and beta were scored on, delta resolved 6 "
        "and beta 1, a difference of +83% (95% CI -4% to +83%); not distinguishable "
        "(exact McNemar p = 0.062)."
    )


def test_a_real_difference_is_never_claimed_for_the_agent_the_evidence_is_against(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """alpha resolved 15 of 30, b 6 of 6 (the rest infrastructure errors), every one of
    them a task alpha got wrong: p = 0.031 favours b, which the count-based headline
    called a real difference in alpha's favour."""
    ids = task_ids(30)
    store_bout(
        tmp_path,
        {
            "alpha": _by_task("R" * 15 + "W" * 15, ids),
            "b": _by_task("-" * 15 + "R" * 6 + "-" * 9, ids),
        },
    )
    sure = _report_json(tmp_path, capsys)["confidence"]
    assert isinstance(sure, dict)
    assert sure["leader"] == ["b"]
    assert sure["headline"].startswith("b leads: on the 6 tasks both b and alpha")
    assert sure["headline"].endswith("; a real difference (exact McNemar p = 0.031).")
    assert _sure(tmp_path).headline == sure["headline"]


def test_many_pairs_are_holm_adjusted_and_intervals_agree_with_the_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """a beats b and c 6-0 (p = 0.031 each); three pairs: Holm makes it 0.094, so the
    headline says not distinguishable and every interval holds 0."""
    ids = task_ids(6)
    store_bout(
        tmp_path,
        {"a": _by_task("RRRRRR", ids), "b": _by_task("WWWWWW", ids), "c": _by_task("WWWWWW", ids)},
    )
    document = _report_json(tmp_path, capsys)
    sure = document["confidence"]
    assert isinstance(sure, dict)
    assert sure["leader"] == ["a"]
    assert "not distinguishable" in sure["headline"]
    assert "Holm-adjusted 0.094 over 3 comparisons" in sure["headline"]
    for pair in sure["pairs"]:
        excludes_zero = pair["low"] > 0 or pair["high"] < 0
        assert excludes_zero == (pair["p_adjusted"] < 0.05), pair
        assert pair["level"] >= 0.95
    ab = next(p for p in sure["pairs"] if (p["a"], p["b"]) == ("a", "b"))
    assert (ab["p_value"], ab["p_adjusted"]) == (0.03125, 0.09375)
    assert ab["low"] < 0 < ab["high"]
    assert "a is better" not in ab["sentence"] and "not distinguishable" in ab["sentence"]


def test_the_interval_never_contradicts_the_exact_test(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's two contradictions: 0-2 on two tasks shown as -100% (-100% to -100%)
    beside p = 0.5, and a 5-0 split with an interval without 0 beside p = 0.0625."""
    ids = task_ids(7)
    store_bout(
        tmp_path,
        {
            "x": _by_task("WW-----", ids),
            "y": _by_task("RR-----", ids),
        },
    )
    (pair,) = _report_json(tmp_path, capsys)["confidence"]["pairs"]  # type: ignore[index]
    assert (pair["difference"], pair["p_value"]) == (-1.0, 0.5)
    assert pair["low"] == -1.0 and pair["high"] > 0, "0 is inside, as p = 0.5 says"
    store_bout(tmp_path, {"x": _by_task("RRRRRWW", ids), "y": _by_task("WWWWWWW", ids)})
    (pair,) = _sure(tmp_path).pairs
    assert (pair.only_a, pair.only_b, pair.p_value) == (5, 0, 0.0625)
    assert pair.low < 0 < pair.high


def test_a_tie_names_every_contestant_in_it(tmp_path: Path) -> None:
    """Three agents, each resolving a task the other two did not: all three lead."""
    ids = task_ids(3)
    store_bout(
        tmp_path,
        {"a": _by_task("RWW", ids), "b": _by_task("WRW", ids), "c": _by_task("WWR", ids)},
    )
    ran = bugbout("report", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "a, b and c share the lead" in " ".join(ran.stdout.split())
    sure = _sure(tmp_path)
    assert sure.leader == ["a", "b", "c"]
    assert sure.headline.startswith("a, b and c share the lead")


def test_an_abstaining_judge_is_described_as_abstaining_not_losing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """strict abstains on every task: no pick is not a wrong pick, and alpha is not
    "better" than a judge that picked nothing."""
    ids = task_ids(6)
    store_bout(
        tmp_path,
        {"alpha": _by_task("RRRRRR", ids), "beta": _by_task("WWWWWW", ids)},
        picks={"strict": dict.fromkeys(ids), "majority": dict.fromkeys(ids, "alpha")},
    )
    judges = {row["a"]: row for row in _report_json(tmp_path, capsys)["confidence"]["judges"]}  # type: ignore[index]
    strict = judges["judge strict"]
    assert (strict["tasks"], strict["abstained"], strict["only_b"]) == (0, 6, 0)
    assert strict["sentence"] == (
        "judge strict abstained on 6 of the 6 tasks alpha was scored on (no pick, not a wrong one)."
    )
    assert "better" not in strict["sentence"]
    majority = judges["judge majority"]
    assert (majority["tasks"], majority["abstained"]) == (6, 0)
    assert majority["sentence"] == "judge majority and alpha resolved the same bugs."
