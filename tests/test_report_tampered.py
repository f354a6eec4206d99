"""Every tampered patch is in the report's Tampered section, wherever a run on it was
found tampered: a cross-examination run no judge's verdict mentions, or a score run
marked tampered under a score that is not."""

from __future__ import annotations

import json
from pathlib import Path

from bugbout.core.report.report_store import load_report
from bugbout.core.store.race_records import Score
from bugbout.core.store.records import RunStatus, TestRun
from bugbout.core.store.store import Store
from bugbout.core.store.verdict_records import UNFIXED, Job, Matrix, ResolutionSet
from cli_runs import bugbout
from stored_bouts import store_bout, task_ids

CANARY = "a canary test that must fail passed"


def _tampered_bout(project: Path) -> Store:
    """alpha's patch on t00 ran tampered in cross-examination (its score is a wrong fix,
    and no policy's verdict names it); beta's score run on t01 is tampered."""
    t0, t1 = task_ids(2)
    store = store_bout(
        project,
        {
            "alpha": {t0: Score.WRONG_FIX, t1: Score.RESOLVED},
            "beta": {t0: Score.RESOLVED, t1: Score.NO_FIX},
        },
    )
    tampered = TestRun(label="alpha", status=RunStatus.TAMPERED, tampering=[CANARY])
    clean = TestRun(label="beta", status=RunStatus.OK)
    store.write(
        f"matrices/{t0}.json",
        Matrix(
            task_id=t0, patches=["alpha", "beta", UNFIXED], runs={"alpha": tampered, "beta": clean}
        ),
    )
    scores = store.read("resolutions.json", ResolutionSet)
    assert scores is not None
    beta = scores.root[t1].patches["beta"]
    scores.root[t1].patches["beta"] = beta.model_copy(
        update={
            "run": TestRun(label="score", status=RunStatus.TAMPERED, tampering=["pytest changed"])
        }
    )
    store.write("resolutions.json", scores)
    assert store.read("job.json", Job) is not None
    return store


def test_a_patch_tampered_anywhere_is_in_the_tampered_section(tmp_path: Path) -> None:
    store = _tampered_bout(tmp_path)
    ran = bugbout("report", "--format", "json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    rows = {(row["task"], row["contestant"]): row for row in json.loads(ran.stdout)["tampered"]}
    t0, t1 = task_ids(2)
    assert rows[(t0, "alpha")]["found_by"] == ["cross-examination"]
    assert rows[(t0, "alpha")]["reasons"] == [CANARY]
    assert rows[(t1, "beta")]["found_by"] == ["score"]
    assert set(rows) == {(t0, "alpha"), (t1, "beta")}
    report = load_report(store)
    assert [(row.task, row.contestant) for row in report.tampered] == [(t0, "alpha"), (t1, "beta")]
