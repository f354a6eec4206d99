"""The audit's verdict table, row by row, and every failing test classified against the
unfixed code."""

from __future__ import annotations

import pytest

from audit_requests import BASE, F2P, LEGACY, ORACLE, OTHER, P2P, PATCH, TASK, attempt, request, run
from bugbout.core.audit.auditing import AuditRequest, classify, verdict_for
from bugbout.core.store.race_records import ChangeArea, ChangeKind, FileChange, Patch, Route, Score
from bugbout.core.store.records import RunStatus

# -- the verdict table, row by row -------------------------------------------------------------


@pytest.mark.parametrize(
    ("gate", "patch", "verdict", "route"),
    [
        pytest.param(BASE, Patch(), Score.NO_FIX, Route.CRAFT, id="empty patch"),
        pytest.param(
            BASE | {F2P[0]: "passed", F2P[1]: "passed"},
            PATCH, Score.RESOLVED, Route.NONE, id="all pass, no regression",
        ),
        pytest.param(
            BASE | {F2P[0]: "passed", F2P[1]: "passed", P2P: "failed"},
            PATCH, Score.FIXED_BUT_BROKE, Route.CRAFT, id="all pass, a regression",
        ),
        pytest.param(
            BASE | {F2P[0]: "passed"},
            PATCH, Score.PARTLY_FIXED, Route.RECON, id="some pass",
        ),
        pytest.param(
            BASE | {F2P[0]: "passed", P2P: "error"},
            PATCH, Score.PARTLY_FIXED, Route.RECON, id="some pass, a regression",
        ),
        pytest.param(BASE, PATCH, Score.WRONG_FIX, Route.RECON, id="none pass"),
        pytest.param(
            BASE | {OTHER: "failed"},
            PATCH, Score.WRONG_FIX, Route.RECON, id="none pass, a regression",
        ),
    ],
)  # fmt: skip
def test_the_verdict_table(
    gate: dict[str, str], patch: Patch, verdict: Score, route: Route
) -> None:
    result = classify(request(gate, patch=patch))
    assert (result.verdict, result.route) == (verdict, route)


def test_verdict_for_counts() -> None:
    assert verdict_for(empty=True, must_pass=2, passing=2, regressions=0) == (
        Score.NO_FIX,
        Route.CRAFT,
    )
    assert verdict_for(empty=False, must_pass=2, passing=2, regressions=0)[0] == "resolved"
    assert verdict_for(empty=False, must_pass=2, passing=2, regressions=3) == (
        Score.FIXED_BUT_BROKE,
        Route.CRAFT,
    )
    assert verdict_for(empty=False, must_pass=2, passing=1, regressions=0)[1] == Route.RECON
    assert verdict_for(empty=False, must_pass=2, passing=0, regressions=0) == (
        Score.WRONG_FIX,
        Route.RECON,
    )
    # nothing to pass: regressions alone decide
    assert verdict_for(empty=False, must_pass=0, passing=0, regressions=0)[0] == "resolved"
    assert verdict_for(empty=False, must_pass=0, passing=0, regressions=1)[1] == Route.CRAFT


def test_a_patch_that_changes_only_tests_or_other_files_is_empty() -> None:
    tests_only = Patch(
        tests="diff --git a/tests/test_x.py b/tests/test_x.py\n",
        other="diff --git a/setup.cfg b/setup.cfg\n",
        files=[
            FileChange(path="tests/test_x.py", kind=ChangeKind.ADDED, area=ChangeArea.TEST),
            FileChange(path="setup.cfg", kind=ChangeKind.MODIFIED, area=ChangeArea.OTHER),
        ],
    )
    fixed = BASE | {F2P[0]: "passed", F2P[1]: "passed"}
    result = classify(request(fixed, patch=tests_only))
    assert (result.verdict, result.route, result.empty) == (Score.NO_FIX, Route.CRAFT, True)
    assert (result.still_failing, result.regressions, result.pre_existing) == ([], [], [])


# -- every failing test classified -------------------------------------------------------------


def test_pre_existing_failures_are_listed_and_not_counted() -> None:
    gate = BASE | {F2P[0]: "passed", F2P[1]: "passed", LEGACY: "error"}
    result = classify(request(gate))
    assert result.verdict == Score.RESOLVED
    assert result.pre_existing == [LEGACY]
    assert result.regressions == []
    assert result.passing == F2P
    assert result.failures == {LEGACY: "error"}


def test_regressions_are_failures_that_were_not_red_on_the_unfixed_code() -> None:
    skipped = "tests/test_util.py::test_skipped_before"
    xfailed = "tests/test_util.py::test_xfailed_before"
    base = BASE | {skipped: "skipped", xfailed: "xfailed"}
    gate = base | {F2P[0]: "passed", F2P[1]: "passed", P2P: "failed", skipped: "error"}
    gate[xfailed] = "xpassed"  # not a failure
    result = classify(request(gate, base))
    assert result.regressions == [P2P, skipped]
    assert result.pre_existing == [LEGACY]
    assert result.failures[P2P] == "failed"
    assert result.failures[skipped] == "error"
    assert (result.verdict, result.route) == (Score.FIXED_BUT_BROKE, Route.CRAFT)


def test_a_module_the_patch_broke_at_collection_is_a_regression_with_its_error() -> None:
    gate = {F2P[0]: "passed", F2P[1]: "passed", P2P: "passed", LEGACY: "failed"}  # OTHER gone
    errors = {"tests/test_util.py": "ImportError: cannot import name 'spread'"}
    result = classify(request(gate, collection_errors=errors))
    assert result.regressions == [OTHER]
    assert result.failures[OTHER] == (
        "error: cannot be collected: ImportError: cannot import name 'spread'"
    )
    assert result.verdict == Score.FIXED_BUT_BROKE


def test_tests_that_passed_and_did_not_run_with_the_patch_are_regressions() -> None:
    gate = {F2P[0]: "passed", F2P[1]: "passed"}  # the run was killed before the rest
    result = classify(request(gate, status=RunStatus.TIMEOUT))
    assert result.regressions == [P2P, OTHER]
    assert result.pre_existing == []  # LEGACY did not run and was red already: no evidence
    assert result.failures[P2P] == "did not run (the gate run ended: timeout)"


def test_failing_on_the_unfixed_code_through_a_collection_error_is_pre_existing() -> None:
    base = {F2P[0]: "failed", F2P[1]: "failed", P2P: "passed"}
    base_errors = {"tests/test_legacy.py": "SyntaxError: invalid syntax"}
    gate = {F2P[0]: "passed", F2P[1]: "passed", P2P: "passed", LEGACY: "failed"}
    req = AuditRequest.hidden(
        TASK,
        ORACLE,
        attempt(),
        gate=run("gate", gate),
        baseline=run("baseline", base, collection_errors=base_errors),
    )
    result = classify(req)
    assert (result.pre_existing, result.regressions) == ([LEGACY], [])
    assert result.verdict == Score.RESOLVED


def test_modules_failing_to_collect_without_known_tests_are_classified_too() -> None:
    gate = BASE | {F2P[0]: "passed", F2P[1]: "passed"}
    errors = {"tests/test_new_break.py": "NameError: x", "tests/test_old_break.py": "E"}
    req = AuditRequest.hidden(
        TASK,
        ORACLE,
        attempt(),
        gate=run("gate", gate, collection_errors=errors),
        baseline=run("baseline", BASE, collection_errors={"tests/test_old_break.py": "E"}),
    )
    result = classify(req)
    assert result.regressions == ["tests/test_new_break.py"]
    assert result.pre_existing == [LEGACY, "tests/test_old_break.py"]
    assert result.failures["tests/test_new_break.py"] == "cannot be collected: NameError: x"


def test_a_must_pass_test_passes_only_when_it_passed() -> None:
    gate = BASE | {F2P[0]: "skipped"}  # F2P[1] still failed
    gate.pop(F2P[1])
    result = classify(request(gate))
    assert result.still_failing == F2P
    assert result.failures == {F2P[0]: "skipped", F2P[1]: "did not run", LEGACY: "failed"}
    assert result.verdict == Score.WRONG_FIX
