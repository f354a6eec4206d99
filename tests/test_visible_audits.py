"""Visible-only audits: the examiners' reproductions must pass, and no hidden test is ever
carried."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from audit_requests import F2P, LEGACY, ORACLE, P2P, TASK, attempt, run
from bugbout.core.audit.auditing import AuditRequest, reproductions
from bugbout.core.store.race_records import Attempt, Examination, Patch, Route, Score
from bugbout.plugins.auditors.gate import Gate

REPRO = "tests/test_examined.py::test_even_examined"


def examiner(
    contestant: str = "bob", assignment: str = "reproduce", reproductions: Sequence[str] = (REPRO,)
) -> Attempt:
    examination = Examination(
        assignment=assignment,
        reproductions=list(reproductions),
        rejected_tests=["tests/test_examined.py::test_weak"],
    )
    return attempt(Patch(), contestant=contestant, role="examiner", examination=examination)


def test_a_visible_audit_must_pass_the_examiners_reproductions() -> None:
    spec = examiner(contestant="carol", assignment="specify", reproductions=[REPRO, "t::x"])
    assert reproductions(TASK, [examiner(), spec]) == ["t::x", REPRO]
    base = {REPRO: "failed", P2P: "passed", LEGACY: "failed"}
    gate = {REPRO: "passed", P2P: "passed", LEGACY: "failed"}
    req = AuditRequest.visible(
        TASK, attempt(), [examiner()], gate=run("gate", gate), baseline=run("baseline", base)
    )
    assert (req.must_pass, req.visible_only, req.oracle) == ([REPRO], True, None)
    audit = Gate().audit(req)
    assert (audit.verdict, audit.route, audit.visible_only) == (
        Score.RESOLVED,
        Route.NONE,
        True,
    )
    assert "visible evidence only" in audit.report
    assert "## Must pass (the examiners' reproductions: 1 of 1 pass)" in audit.report
    assert not any(test in audit.report for test in F2P)
    still = AuditRequest.visible(
        TASK, attempt(), [examiner()], gate=run("gate", base), baseline=run("baseline", base)
    )
    assert Gate().audit(still).verdict == Score.WRONG_FIX


def test_a_visible_audit_without_reproductions_rests_on_regressions() -> None:
    base = {P2P: "passed"}
    req = AuditRequest.visible(
        TASK, attempt(), [], gate=run("gate", {P2P: "failed"}), baseline=run("baseline", base)
    )
    audit = Gate().audit(req)
    assert (audit.verdict, audit.route) == (Score.FIXED_BUT_BROKE, Route.CRAFT)
    assert "none given: the verdict rests on regressions alone" in audit.report


def test_visible_audits_never_carry_hidden_tests() -> None:
    with pytest.raises(ValueError, match="must not carry the oracle"):
        AuditRequest(
            task=TASK, oracle=ORACLE, attempt=attempt(), must_pass=[REPRO],
            gate=run("gate", {}), baseline=run("baseline", {}), visible_only=True,
        )  # fmt: skip
    with pytest.raises(ValueError, match="not an examiner"):
        reproductions(TASK, [attempt()])
    with pytest.raises(ValueError, match="attempt is for task other"):
        AuditRequest(
            task=TASK, attempt=attempt(task_id="other"), must_pass=[],
            gate=run("gate", {}), baseline=run("baseline", {}),
        )  # fmt: skip
