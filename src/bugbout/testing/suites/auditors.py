"""The conformance suite of auditors."""

from __future__ import annotations

from typing import Any, ClassVar

from bugbout.core.audit.auditing import AuditRequest
from bugbout.core.store.race_records import (
    Attempt,
    AttemptStatus,
    Audit,
    ChangeArea,
    ChangeKind,
    FileChange,
    Patch,
    Score,
)
from bugbout.core.store.records import Oracle, Outcome, RunStatus, Task, TaskIssue, TestRun
from bugbout.testing.suites.base import PluginSuite

TASK_ID = "conformance-task"
CONTESTANT = "alpha"
FIXED = "tests/test_ratio.py::test_ratio_of_nothing_is_zero"
"""The test the patch must make pass."""
KEPT = "tests/test_area.py::test_square"
"""A test that passes on the unfixed code."""
ALSO_KEPT = "tests/test_area.py::test_circle"
BROKEN_BEFORE = "tests/test_area.py::test_ratio"
"""A test that already fails on the unfixed code."""

SOURCE_DIFF = """\
diff --git a/src/shapes/area.py b/src/shapes/area.py
--- a/src/shapes/area.py
+++ b/src/shapes/area.py
@@ -12,2 +12,4 @@ def circle(radius):
 def ratio(shape, reference):
+    if reference == 0:
+        return 0.0
     return shape / reference
"""


def audit_task() -> Task:
    return Task(
        id=TASK_ID,
        sha="a" * 40,
        parent="b" * 40,
        date="2024-01-01T00:00:00+00:00",
        title="Fix crash in ratio() when the reference is zero (#12)",
        issue=TaskIssue(number=12, title="ratio() crashes when the reference area is zero"),
        problem_statement="ratio(5, 0) raises ZeroDivisionError; it should return 0.0.",
        source_files=["src/shapes/area.py"],
        test_files=["tests/test_ratio.py"],
        added_tests=[FIXED],
    )


def audit_attempt(*, empty: bool = False) -> Attempt:
    patch = (
        Patch()
        if empty
        else Patch(
            source=SOURCE_DIFF,
            files=[
                FileChange(
                    path="src/shapes/area.py", kind=ChangeKind.MODIFIED, area=ChangeArea.SOURCE
                )
            ],
        )
    )
    return Attempt(
        task_id=TASK_ID,
        contestant=CONTESTANT,
        key="conformance-key",
        agent="command",
        status=AttemptStatus.FINISHED,
        patch=patch,
    )


def run(label: str, outcomes: dict[str, Outcome]) -> TestRun:
    return TestRun(label=label, status=RunStatus.OK, exit_code=0, outcomes=outcomes)


BASELINE = {
    FIXED: Outcome.FAILED,
    KEPT: Outcome.PASSED,
    ALSO_KEPT: Outcome.PASSED,
    BROKEN_BEFORE: Outcome.FAILED,
}


def audit_request(
    gate: dict[str, Outcome], *, empty: bool = False, visible_only: bool = False
) -> AuditRequest:
    """A hidden audit (or a visible-only one) of a patch whose gate run had ``gate``'s
    outcomes, against the baseline :data:`BASELINE`."""
    task = audit_task()
    attempt = audit_attempt(empty=empty)
    gate_run, baseline = run("gate", gate), run("baseline", dict(BASELINE))
    if visible_only:
        return AuditRequest(
            task=task,
            attempt=attempt,
            must_pass=[FIXED],
            gate=gate_run,
            baseline=baseline,
            visible_only=True,
        )
    oracle = Oracle(task_id=TASK_ID, status="ok", fail_to_pass=[FIXED], pass_to_pass=[KEPT])
    return AuditRequest.hidden(task, oracle, attempt, gate=gate_run, baseline=baseline)


RESOLVING = {**BASELINE, FIXED: Outcome.PASSED}
"""The gate of a patch that fixes the bug and breaks nothing (a pre-existing failure
stays)."""
REGRESSING = {**RESOLVING, KEPT: Outcome.FAILED}
INEFFECTIVE = dict(BASELINE)


class AuditorSuite(PluginSuite):
    """Contract tests for an auditor (``bugbout_auditors``).

    The auditor reads an :class:`~bugbout.core.audit.auditing.AuditRequest` (the gate run with
    the patch and the baseline on the unfixed code) and returns an
    :class:`~bugbout.core.store.race_records.Audit` for the request's task and contestant: an empty
    patch is ``no-fix``; every must-pass test passing and no
    regression is ``resolved``; a regression or a must-pass test still failing is not. It
    never changes the request.
    """

    kind: ClassVar[str] = "auditor"

    def audit(self, plugin: Any, request: AuditRequest) -> Audit:
        audit = plugin.audit(request)
        assert isinstance(audit, Audit), f"audit() returned {type(audit).__name__}"
        assert audit.task_id == request.task.id
        assert audit.contestant == request.attempt.contestant
        return audit

    def test_names_itself(self, plugin_under_test: Any) -> None:
        assert plugin_under_test.name == self.plugin
        audit = self.audit(plugin_under_test, audit_request(RESOLVING))
        assert audit.auditor == self.plugin

    def test_returns_an_audit_of_the_requests_patch(self, plugin_under_test: Any) -> None:
        for gate in (RESOLVING, REGRESSING, INEFFECTIVE):
            for visible_only in (False, True):
                request = audit_request(gate, visible_only=visible_only)
                audit = self.audit(plugin_under_test, request)
                assert audit.visible_only is visible_only

    def test_an_empty_patch(self, plugin_under_test: Any) -> None:
        audit = self.audit(plugin_under_test, audit_request(RESOLVING, empty=True))
        assert audit.verdict == Score.NO_FIX

    def test_resolved_when_every_must_pass_test_passes_without_regressions(
        self, plugin_under_test: Any
    ) -> None:
        """A test that already failed on the unfixed code is not the patch's doing."""
        audit = self.audit(plugin_under_test, audit_request(RESOLVING))
        assert audit.verdict == Score.RESOLVED
        assert audit.regressions == []

    def test_a_regression_is_not_resolved(self, plugin_under_test: Any) -> None:
        audit = self.audit(plugin_under_test, audit_request(REGRESSING))
        assert audit.verdict != Score.RESOLVED
        assert KEPT in audit.regressions

    def test_a_test_that_did_not_run_with_the_patch_is_not_resolved(
        self, plugin_under_test: Any
    ) -> None:
        gate = {test: outcome for test, outcome in RESOLVING.items() if test != KEPT}
        audit = self.audit(plugin_under_test, audit_request(gate))
        assert audit.verdict != Score.RESOLVED

    def test_a_fix_that_misses_is_not_resolved(self, plugin_under_test: Any) -> None:
        audit = self.audit(plugin_under_test, audit_request(INEFFECTIVE))
        assert audit.verdict != Score.RESOLVED
        assert FIXED in audit.still_failing

    def test_does_not_change_the_request(self, plugin_under_test: Any) -> None:
        for gate in (RESOLVING, REGRESSING):
            request = audit_request(gate)
            before = request.model_dump()
            self.audit(plugin_under_test, request)
            assert request.model_dump() == before

    def test_is_deterministic(self, plugins: Any, plugin_under_test: Any) -> None:
        fresh = plugins.create(self.kind, self.plugin, dict(self.options))
        for gate in (RESOLVING, REGRESSING, INEFFECTIVE):
            first = self.audit(plugin_under_test, audit_request(gate))
            assert self.audit(plugin_under_test, audit_request(gate)) == first
            assert self.audit(fresh, audit_request(gate)) == first
