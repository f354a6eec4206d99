"""Hand-built matrices for the judge tests, and a judge's verdict on one, checked to rest only
on real cells."""

from __future__ import annotations

from typing import Any

from bugbout.core.contract.manager import Plugins
from bugbout.core.judge.judging import JudgeContext, outcome_of
from bugbout.core.store.verdict_records import Matrix, Verdict
from bugbout.testing.suites.judges import matrix

JUDGE_MODULES = ("majority", "unanimous", "strict", "cross_vendor")
POLICIES = ("majority", "unanimous", "strict", "cross-vendor")


def make(
    patches: list[str],
    tests: dict[str, str],
    *,
    vendors: dict[str, str | None] | None = None,
    task_id: str = "t1",
) -> Matrix:
    """A matrix from one row per test (:func:`bugbout.testing.suites.judges.matrix`), of
    task ``t1`` unless said."""
    return matrix(patches, tests, vendors=vendors, task_id=task_id)


def context(matrix: Matrix, **examiners: str) -> JudgeContext:
    return JudgeContext(task_id=matrix.task_id, examiners=examiners)


def judge(
    judges: Plugins, policy: str, matrix: Matrix, ctx: JudgeContext | None = None, **options: Any
) -> Verdict:
    """``policy``'s verdict on ``matrix``, checked to rest only on real cells."""
    verdict: Verdict = judges.create("judge", policy, options).judge(matrix, ctx or context(matrix))
    assert verdict.policy == policy
    assert verdict.task_id == matrix.task_id
    assert_real_cells(verdict, matrix)
    return verdict


def assert_real_cells(verdict: Verdict, matrix: Matrix) -> None:
    tests = {test for author in matrix.authors.values() for test in author}
    keys = [(cell.patch, cell.test) for cell in verdict.cells]
    assert len(keys) == len(set(keys)), "a cell is listed twice"
    for cell in verdict.cells:
        assert cell.patch in matrix.patches
        assert cell.test in tests
        assert cell.outcome == outcome_of(matrix, cell.patch, cell.test)
        if cell.outcome is not None and not matrix.runs:
            assert cell.outcome == matrix.outcome(cell.patch, cell.test)


def cells(verdict: Verdict) -> set[tuple[str, str]]:
    return {(cell.patch, cell.test) for cell in verdict.cells}
