"""`bugbout compare A B`: two bouts' stores paired per contestant on the tasks both scored
with the same ground truth, its statistics against an independent computation, and its
exit status as a CI gate."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bugbout.compare.pairing import BoutChange, compare_schema
from bugbout.core.report.report_store import load_report
from bugbout.core.store.race_records import AttemptStatus, Score
from bugbout.core.store.records import OracleSet
from bugbout.core.store.store import Store
from cli_runs import bugbout
from stored_bouts import Outcome, store_bout, task_ids

R, W = Score.RESOLVED, Score.WRONG_FIX
TASKS = task_ids(12)


def outcomes(resolved: int, *, start: int = 0) -> dict[str, Outcome]:
    """``resolved`` of the twelve tasks resolved, from task ``start`` on."""
    return {t: R if start <= i < start + resolved else W for i, t in enumerate(TASKS)}


def bout(path: Path, by_contestant: dict[str, dict[str, Outcome]]) -> Path:
    store_bout(path, by_contestant)
    return path


def compared(before: Path, after: Path, *flags: str) -> tuple[int, BoutChange, str]:
    result = bugbout("compare", str(before), str(after), "--format", "json", *flags, cwd=after)
    return result.returncode, BoutChange.model_validate_json(result.stdout), result.stderr


def test_a_significant_drop_beyond_the_threshold_fails_naming_the_contestant(
    tmp_path: Path,
) -> None:
    before = bout(tmp_path / "a", {"codex": outcomes(11), "steady": outcomes(6)})
    after = bout(tmp_path / "b", {"codex": outcomes(1), "steady": outcomes(6)})
    code, change, stderr = compared(before, after, "--fail-if-regressed", "5")
    assert code == 1
    assert change.regressed == ["codex"]
    (line,) = stderr.strip().splitlines()
    assert line.startswith("error: codex regressed: 11/12 (92%) in ")
    assert (
        "1/12 (8%) in " in line and "-83 points" in line and "p = 0.0039" in line
    )  # 10-0: 2/1024, over 2 contestants
    steady = next(c for c in change.contestants if c.contestant == "steady")
    assert not steady.regressed and steady.difference == 0


def test_no_regression_a_small_drop_or_no_flag_passes(tmp_path: Path) -> None:
    before = bout(tmp_path / "a", {"codex": outcomes(11)})
    same = bout(tmp_path / "same", {"codex": outcomes(11)})
    worse = bout(tmp_path / "worse", {"codex": outcomes(1)})
    assert compared(before, same, "--fail-if-regressed", "0")[0] == 0
    # a drop of 83 points is significant, but not more than a threshold of 90
    code, change, _ = compared(before, worse, "--fail-if-regressed", "90")
    assert code == 0 and change.regressed == [] and change.threshold == 90
    # without the flag the drop is reported, and never fails the command
    code, change, stderr = compared(before, worse)
    assert code == 0 and change.regressed == ["codex"] and stderr == ""


def test_a_drop_without_statistical_support_passes(tmp_path: Path) -> None:
    before = bout(tmp_path / "a", {"codex": outcomes(7)})
    after = bout(tmp_path / "b", {"codex": outcomes(5)})  # 2 lost, 0 gained: p = 0.5
    code, change, _ = compared(before, after, "--fail-if-regressed", "5")
    assert code == 0
    (codex,) = change.contestants
    assert (codex.only_before, codex.only_after, codex.p_value) == (2, 0, 0.5)
    assert codex.difference == pytest.approx(-2 / 12, abs=1e-4) and not codex.regressed


def test_statistics_match_an_independent_computation(tmp_path: Path) -> None:
    stats = pytest.importorskip("scipy.stats")
    before = bout(
        tmp_path / "a",
        {"a": outcomes(10), "b": outcomes(6), "c": outcomes(4, start=0)},
    )
    after = bout(
        tmp_path / "b",
        {"a": outcomes(2), "b": outcomes(6, start=3), "c": outcomes(4, start=0)},
    )
    _, change, _ = compared(before, after)
    found = {c.contestant: c for c in change.contestants}
    splits = {"a": (8, 0), "b": (3, 3), "c": (0, 0)}  # (lost, gained) of 12 paired tasks
    p_values = {
        name: stats.binomtest(lost, lost + gained, 0.5).pvalue if lost + gained else 1.0
        for name, (lost, gained) in splits.items()
    }
    order = sorted(p_values, key=p_values.get)  # Holm, step by step
    holm, running = {}, 0.0
    for rank, name in enumerate(order):
        running = max(running, min(1.0, (len(order) - rank) * p_values[name]))
        holm[name] = running
    for name, (lost, gained) in splits.items():
        c = found[name]
        assert (c.tasks, c.only_before, c.only_after) == (12, lost, gained)
        assert c.p_value == pytest.approx(p_values[name], abs=1e-6)
        assert c.p_adjusted == pytest.approx(holm[name], abs=1e-6)
        assert c.difference == pytest.approx((gained - lost) / 12, abs=1e-4)
        if lost + gained:  # Clopper-Pearson on the gains among the discordant, scaled
            alpha = 0.05 * p_values[name] / holm[name]
            n = lost + gained
            low = stats.beta.ppf(alpha / 2, gained, n - gained + 1) if gained else 0.0
            high = stats.beta.ppf(1 - alpha / 2, gained + 1, n - gained) if lost else 1.0
            assert c.low == pytest.approx((2 * low - 1) * n / 12, abs=1e-4)
            assert c.high == pytest.approx((2 * high - 1) * n / 12, abs=1e-4)
            assert c.level == pytest.approx(1 - alpha, abs=1e-6)
        assert c.before.resolved == sum(1 for t in outcomes(0) if before_resolved(name, t))
    assert change.regressed == ["a"]


def before_resolved(name: str, task: str) -> bool:
    resolved = {"a": 10, "b": 6, "c": 4}[name]
    return TASKS.index(task) < resolved


def test_only_tasks_with_the_same_id_and_ground_truth_key_are_paired(tmp_path: Path) -> None:
    before = bout(tmp_path / "a", {"codex": outcomes(12)})
    after = bout(
        tmp_path / "b",
        {"codex": {**outcomes(12), "t03": AttemptStatus.INFRA_ERROR}},
    )
    store = Store(after / ".bugbout")
    oracles = store.read("oracles.json", OracleSet)
    assert oracles is not None
    oracles.root["t00"] = oracles.root["t00"].model_copy(update={"key": "recomputed"})
    store.write("oracles.json", oracles)
    shutil.rmtree(before / ".bugbout" / "attempts" / "t11")  # t11: dropped from the first
    job = json.loads((before / ".bugbout" / "job.json").read_text())
    job["tasks"]["tasks"] = [t for t in job["tasks"]["tasks"] if t["id"] != "t11"]
    job["attempts"] = [a for a in job["attempts"] if a["task_id"] != "t11"]
    (before / ".bugbout" / "job.json").write_text(json.dumps(job))
    _, change, _ = compared(before, after)
    (codex,) = change.contestants
    assert codex.tasks == 9
    assert codex.left_out == {
        "ground truth differs": 1,
        "no counted score in the second": 1,
        "not a scored task of the first": 1,
    }


def test_a_contestant_without_paired_tasks_is_no_test_of_the_family(tmp_path: Path) -> None:
    unscored = dict.fromkeys(TASKS, AttemptStatus.INFRA_ERROR)
    before = bout(tmp_path / "a", {"codex": outcomes(11), "down": outcomes(3)})
    after = bout(tmp_path / "b", {"codex": outcomes(1), "down": unscored})
    _, change, _ = compared(before, after)
    codex, down = change.contestants
    assert down.tasks == 0 and down.left_out == {"no counted score in the second": 12}
    assert codex.p_adjusted == codex.p_value == pytest.approx(2 / 1024, abs=1e-6)
    assert codex.level == 0.95


def test_a_report_json_and_a_sweep_job_are_read_like_the_store(tmp_path: Path) -> None:
    before = bout(tmp_path / "a", {"codex": outcomes(11), "only-a": outcomes(3)})
    after = bout(tmp_path / "b", {"codex": outcomes(1), "only-b": outcomes(3)})
    store = before / ".bugbout"
    (store / "report.json").write_text(load_report(Store(store)).to_json())
    job = store / "sweeps" / "2026-01-01_00-00-00" / "0"
    job.mkdir(parents=True)
    for name in ("job.json", "resolutions.json", "verdicts.json"):
        shutil.move(store / name, job / name)
    from_report = compared(store / "report.json", after)[1]
    from_job = compared(job, after)[1]
    assert from_report.contestants == from_job.contestants
    assert from_report.regressed == ["codex"]
    assert (from_job.only_before, from_job.only_after) == (["only-a"], ["only-b"])
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(store / "report.json", alone / "report.json")
    result = bugbout("compare", str(alone / "report.json"), str(after), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "oracles.json" in result.stderr


def test_json_validates_against_the_shipped_schema(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    before = bout(tmp_path / "a", {"codex": outcomes(11), "x": outcomes(2)})
    after = bout(tmp_path / "b", {"codex": outcomes(1), "y": outcomes(2)})
    result = bugbout("compare", str(before), str(after), "--format", "json", cwd=tmp_path)
    document = json.loads(result.stdout)
    validator = jsonschema.Draft202012Validator(compare_schema())
    validator.validate(document)
    assert document["schema"] == "bugbout.compare/1"
    for key, value in (("regressed", "codex"), ("threshold", "5")):
        assert list(validator.iter_errors({**document, key: value}))
    assert list(validator.iter_errors({**document, "extra": 1}))
    fields = set(BoutChange.model_fields) - {"schema_version"} | {"schema"}
    assert set(compare_schema()["required"]) == fields


def test_markdown_and_terminal_show_the_change_and_bad_input_is_one_line(
    tmp_path: Path,
) -> None:
    before = bout(tmp_path / "a", {"codex": outcomes(11)})
    after = bout(tmp_path / "b", {"codex": outcomes(1)})
    markdown = bugbout("compare", str(before), str(after), "--format", "markdown", cwd=tmp_path)
    assert markdown.returncode == 0
    assert "| codex | 12 | 11/12 (92%) | 1/12 (8%) |" in markdown.stdout
    assert "REGRESSED" in markdown.stdout
    terminal = bugbout("compare", str(before), str(after), cwd=tmp_path)
    assert "REGRESSED" in terminal.stdout and "What changed" in terminal.stdout
    for args in (
        [str(before), str(tmp_path / "missing")],
        [str(before), str(tmp_path)],
        [str(before), str(after), "--format", "html"],
        [str(before), str(after), "--fail-if-regressed", "lots"],
    ):
        result = bugbout("compare", *args, cwd=tmp_path)
        assert result.returncode == 2, args
        assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, args


def test_the_documented_ci_step_fails_on_a_regression_only(tmp_path: Path) -> None:
    """The "Compare with main" step of docs/ci.md's workflow, run by bash as Actions
    would, on the artifact's layout: main's report.json and oracles.json in baseline/."""
    yaml = pytest.importorskip("yaml")
    page = (Path(__file__).parents[1] / "docs" / "ci.md").read_text()
    workflow = yaml.safe_load(page.split("```yaml\n", 1)[1].split("```", 1)[0])
    (step,) = [s for s in workflow["jobs"]["bout"]["steps"] if s.get("name") == "Compare with main"]
    main = bout(tmp_path / "main", {"codex": outcomes(11)})
    (main / ".bugbout" / "report.json").write_text(load_report(Store(main / ".bugbout")).to_json())
    statuses = {}
    for name, resolved in (("same", 11), ("worse", 1)):
        checkout = bout(tmp_path / name, {"codex": outcomes(resolved)})
        (checkout / "baseline").mkdir()
        for file in ("report.json", "oracles.json"):
            shutil.copy(main / ".bugbout" / file, checkout / "baseline" / file)
        summary = tmp_path / f"{name}-summary.md"
        env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary)}
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
        result = subprocess.run(
            ["bash", "-e", "-c", step["run"]], cwd=checkout, env=env, capture_output=True,
            text=True, check=False,
        )  # fmt: skip
        statuses[name] = result.returncode
        assert "| codex | 12 | 11/12 (92%) |" in summary.read_text()
        assert BoutChange.model_validate_json((checkout / "compare.json").read_text())
        if name == "worse":
            assert result.stderr.startswith("error: codex regressed: 11/12 (92%) in baseline")
    assert statuses == {"same": 0, "worse": 1}
