"""Auditing: the full test gate run on a patch, every failure classified against a
baseline captured on the unfixed code, and a verdict with the route a retry re-enters by.

An auditor reads an :class:`AuditRequest` and returns an
:class:`~bugbout.core.store.race_records.Audit`.
It never changes a tree: :func:`run_gate` runs the gate on two trees it makes for the
purpose (the unfixed code, and the same with the patch's source changes) and removes them.

What the patch must make pass is explicit, in :attr:`AuditRequest.must_pass`:

- a *hidden* audit (the verdict recorded for every patch) takes the fix's fail-to-pass
  tests from the oracle, and its gate includes the fix's test files
  (:meth:`AuditRequest.hidden`, ``run_gate(..., hidden=True)``);
- a *visible-only* audit (the one a retry round may act on) takes the examiners'
  reproductions, the tests they wrote that fail on the unfixed code, and its gate is the
  repository's own suite plus the examiners' tests, never the fix's
  (:meth:`AuditRequest.visible`, ``run_gate(..., hidden=False, examiners=...)``). It
  carries no oracle, so nothing hidden can reach the next round's prompt through its
  report.

:func:`classify` sorts every failing test into one of three groups:

- a ``must_pass`` test that does not pass: *still failing*;
- any other test that fails with the patch but not on the unfixed code: a *regression*
  (a test that passed on the unfixed code and did not run at all with the patch counts
  too: the gate cannot vouch for it);
- any other test that fails on the unfixed code as well: *pre-existing*, not counted.

and :func:`verdict_for` turns the counts into the verdict (a
:class:`~bugbout.core.store.race_records.Score`, as scoring's) and its route:

============================================  =====================  =======
the patch                                     verdict                route
============================================  =====================  =======
changes no source file                        ``no-fix``             craft
tampers with the gate run (or is flagged)     ``tampered``           none
passes every ``must_pass`` test, no regr.     ``resolved``           none
passes every ``must_pass`` test, regressions  ``fixed-but-broke``    craft
passes some ``must_pass`` tests, not all      ``partly-fixed``       recon
passes none of the ``must_pass`` tests        ``wrong-fix``          recon
============================================  =====================  =======

A patch is ``tampered`` when the gate run with it is: its canaries or outcome stream
show the code under test meddled with the outcomes, or the patch's source is flagged by
:mod:`bugbout.core.plumbing.tampering.tamper`. Nothing its run says is trusted, and it gets no other
round.

With nothing in ``must_pass`` (an examiner-less visible audit) every must-pass test
trivially passes, and regressions alone decide. A regression is routed to ``craft`` (the
diagnosis holds, the change is too broad); a fix that misses is routed to ``recon`` (the
diagnosis missed). :func:`escalate` applies the no-progress rule across rounds: a
regression gets one narrowing round, and a second ``craft`` in a row becomes ``recon``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Protocol, Self

from pydantic import model_validator

from bugbout.core.plumbing.testruns.test_runner import file_of
from bugbout.core.store.race_records import Attempt, Audit, ChangeArea, Route, Score
from bugbout.core.store.records import Oracle, Outcome, Record, RunStatus, Task, TestRun

FAILING = (Outcome.FAILED, Outcome.ERROR)
"""Outcomes that count as a failure (a skipped or expected failure does not)."""
GATE_LABEL = "gate"
BASELINE_LABEL = "baseline"
REPORT_LIMIT = 50
"""The most tests a section of the kill report lists by default."""


class AuditRequest(Record):
    """Everything an auditor needs about one patch; it runs nothing itself."""

    task: Task
    attempt: Attempt
    """The attempt whose patch is audited (only its source changes were applied)."""
    must_pass: list[str]
    """Node ids the patch must make pass: the oracle's fail-to-pass tests for a hidden
    audit, the examiners' reproductions for a visible-only one."""
    gate: TestRun
    """The full gate run on the unfixed code with the patch's source changes."""
    baseline: TestRun
    """The same gate on the unfixed code: the fail-on-base capture."""
    visible_only: bool = False
    """Made from visible evidence only (no hidden tests), as retry rounds require."""
    oracle: Oracle | None = None
    """The task's ground truth, for a hidden audit. A visible-only audit has none."""
    fix: str = ""
    """The maintainers' fix, its source files only, as a diff (hidden, like the oracle:
    only a hidden audit may carry it), for auditors that measure recall."""

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.attempt.task_id != self.task.id:
            raise ValueError(f"attempt is for task {self.attempt.task_id}, not {self.task.id}")
        if self.fix and self.visible_only:
            raise ValueError("a visible-only audit must not carry the maintainers' fix")
        if self.oracle is not None:
            if self.visible_only:
                raise ValueError("a visible-only audit must not carry the oracle (hidden tests)")
            if self.oracle.task_id != self.task.id:
                raise ValueError(f"oracle is for task {self.oracle.task_id}, not {self.task.id}")
        return self

    @classmethod
    def hidden(
        cls,
        task: Task,
        oracle: Oracle,
        attempt: Attempt,
        *,
        gate: TestRun,
        baseline: TestRun,
        fix: str = "",
    ) -> AuditRequest:
        """A hidden audit: the patch must make the oracle's fail-to-pass tests pass;
        ``fix`` is the maintainers' source diff
        (:func:`bugbout.core.audit.recall.fix_source_diff`)."""
        return cls(
            task=task,
            oracle=oracle,
            attempt=attempt,
            must_pass=list(oracle.fail_to_pass),
            gate=gate,
            baseline=baseline,
            fix=fix,
        )

    @classmethod
    def visible(
        cls,
        task: Task,
        attempt: Attempt,
        examiners: Iterable[Attempt],
        *,
        gate: TestRun,
        baseline: TestRun,
    ) -> AuditRequest:
        """A visible-only audit: the patch must make the examiners' reproductions pass (the
        gate must include their tests: ``run_gate(..., hidden=False, examiners=...)``)."""
        return cls(
            task=task,
            attempt=attempt,
            must_pass=reproductions(task, examiners),
            gate=gate,
            baseline=baseline,
            visible_only=True,
        )


def reproductions(task: Task, examiners: Iterable[Attempt]) -> list[str]:
    """The examiners' tests on ``task`` that failed on the unfixed code, sorted."""
    found: set[str] = set()
    for examiner in examiners:
        if examiner.role != "examiner" or examiner.task_id != task.id:
            raise ValueError(f"{examiner.contestant} is not an examiner of task {task.id}")
        if examiner.examination is not None:
            found.update(examiner.examination.reproductions)
    return sorted(found)


class Auditor(Protocol):
    """What an auditor plugin's factory returns."""

    name: str

    def audit(self, request: AuditRequest) -> Audit:
        """The verdict on ``request``'s patch, its route and kill report."""
        ...


# -- classifying -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Classification:
    """Every failing test of a gate run, sorted by :func:`classify`, and the verdict."""

    verdict: Score
    route: Route
    empty: bool = False
    """The patch changes no source file: nothing was classified."""
    tampering: list[str] = field(default_factory=list)
    """Why the gate run is not trusted: the verdict is ``tampered``, nothing classified."""
    passing: list[str] = field(default_factory=list)
    """``must_pass`` tests that pass with the patch."""
    still_failing: list[str] = field(default_factory=list)
    """``must_pass`` tests that do not pass with the patch."""
    regressions: list[str] = field(default_factory=list)
    """Other tests that fail with the patch (or did not run) but not on the unfixed code."""
    pre_existing: list[str] = field(default_factory=list)
    """Other tests that fail with the patch and on the unfixed code: not counted."""
    failures: dict[str, str] = field(default_factory=dict)
    """What is known of each failure above: its outcome, or the first line of its
    collection error, or why it did not run."""


def verdict_for(
    *, empty: bool, must_pass: int, passing: int, regressions: int, tampered: bool = False
) -> tuple[Score, Route]:
    """The verdict table: counts in, verdict and route out."""
    if tampered:
        return Score.TAMPERED, Route.NONE
    if empty:
        return Score.NO_FIX, Route.CRAFT
    if passing >= must_pass:
        if regressions:
            return Score.FIXED_BUT_BROKE, Route.CRAFT
        return Score.RESOLVED, Route.NONE
    if passing:
        return Score.PARTLY_FIXED, Route.RECON
    return Score.WRONG_FIX, Route.RECON


def is_empty(attempt: Attempt) -> bool:
    """Whether the attempt's patch changes no source file (only source changes are
    audited, so the audited tree would be the unfixed one)."""
    return not attempt.patch.source.strip()


def classify(request: AuditRequest) -> Classification:
    """Sort every failing test of the gate against the baseline; the verdict and route.

    Pure: it reads the request's runs and patch, nothing else."""
    if is_empty(request.attempt):
        verdict, route = verdict_for(empty=True, must_pass=0, passing=0, regressions=0)
        return Classification(verdict=verdict, route=route, empty=True)
    gate, baseline = request.gate, request.baseline
    if gate.status == RunStatus.TAMPERED:
        verdict, route = verdict_for(
            empty=False, must_pass=0, passing=0, regressions=0, tampered=True
        )
        return Classification(verdict=verdict, route=route, tampering=list(gate.tampering))
    must_pass = list(dict.fromkeys(request.must_pass))
    passing: list[str] = []
    still_failing: list[str] = []
    failures: dict[str, str] = {}
    for test in must_pass:
        if gate.outcomes.get(test) == Outcome.PASSED:
            passing.append(test)
        else:
            still_failing.append(test)
            failures[test] = _describe(gate, test)
    regressions: list[str] = []
    pre_existing: list[str] = []
    others = (gate.outcomes.keys() | baseline.outcomes.keys()) - set(must_pass)
    for test in sorted(others):
        now, before = _outcome(gate, test), _outcome(baseline, test)
        if now in FAILING or (before == Outcome.PASSED and now != Outcome.PASSED):
            (pre_existing if before in FAILING else regressions).append(test)
            failures[test] = _describe(gate, test)
    known = others | set(must_pass)
    for module, message in sorted(gate.collection_errors.items()):
        if any(_under(test, module) for test in known):
            continue  # its tests are classified above, each with this error
        (pre_existing if module in baseline.collection_errors else regressions).append(module)
        failures[module] = f"cannot be collected: {message}" if message else "cannot be collected"
    verdict, route = verdict_for(
        empty=False,
        must_pass=len(must_pass),
        passing=len(passing),
        regressions=len(regressions),
    )
    return Classification(
        verdict=verdict,
        route=route,
        passing=passing,
        still_failing=still_failing,
        regressions=regressions,
        pre_existing=pre_existing,
        failures=failures,
    )


def _outcome(run: TestRun, test: str) -> Outcome | None:
    """A test's outcome in ``run``; an error when it is absent because its module (or a
    directory above it) failed to collect; ``None`` when it did not run."""
    found = run.outcomes.get(test)
    if found is None and _collection_error(run, test) is not None:
        return Outcome.ERROR
    return found


def _collection_error(run: TestRun, test: str) -> str | None:
    for collector, message in run.collection_errors.items():
        if _under(test, collector):
            return message
    return None


def _under(test: str, collector: str) -> bool:
    """Whether ``test`` (a node id) belongs to the collector ``collector`` (a module, a
    directory, or the root: ``""``)."""
    path = file_of(test)
    return (
        not collector
        or test == collector
        or test.startswith(collector + "::")
        or path == collector
        or PurePosixPath(collector) in PurePosixPath(path).parents
    )


def _describe(run: TestRun, test: str) -> str:
    """What the gate tells of one failing or missing test: its outcome, or the first
    line of the collection error that kept it from running."""
    found = run.outcomes.get(test)
    if found is not None:
        reason = run.skips.get(test) if found == Outcome.SKIPPED else None
        return f"{found.value}: {reason}" if reason else found.value
    message = _collection_error(run, test)
    if message is not None:
        return f"error: cannot be collected: {message}" if message else "error: not collected"
    if run.status != RunStatus.OK:
        return f"did not run (the gate run ended: {run.status.value})"
    return "did not run"


# -- the kill report -------------------------------------------------------------------------


def kill_report(
    request: AuditRequest, classification: Classification, *, limit: int = REPORT_LIMIT
) -> str:
    """The audit as Markdown: what must pass and whether it does, the regressions, the
    failures not counted, what to do next; the verdict and route on the last two lines.

    A hidden audit's report names hidden tests: only a visible-only audit's report may go
    into a contestant's prompt."""
    c = classification
    task, attempt = request.task, request.attempt
    evidence = (
        "visible evidence only: the repository's suite and the examiners' reproductions"
        if request.visible_only
        else "the fix's tests (hidden) and the repository's suite"
    )
    lines = [f"# Audit of {attempt.contestant} on {task.id}", "", f"Evidence: {evidence}."]
    for run in (request.gate, request.baseline):
        if run.status != RunStatus.OK:
            lines.append(f"Warning: the {run.label} run ended with status `{run.status.value}`.")
    if c.empty:
        changed = len(attempt.patch.files)
        lines += [
            "",
            "## Kill report",
            "",
            "The patch changes no source file, so there is nothing to audit."
            + (
                f" It changes {changed} other file(s); only changes to the source are tested."
                if changed
                else ""
            ),
        ]
        return _finish(lines, c)
    if c.verdict == Score.TAMPERED:
        lines += ["", "## Kill report", "", "TAMPERED: the patch meddles with the test run, so "
                  "none of its outcomes is trusted:", *_listed(c.tampering, limit)]  # fmt: skip
        return _finish(lines, c)
    what = "the examiners' reproductions" if request.visible_only else "fail-to-pass"
    lines += ["", f"## Must pass ({what}: {len(c.passing)} of {len(request.must_pass)} pass)"]
    if request.must_pass:
        statuses = [(test, "PASS") for test in c.passing]
        statuses += [(test, f"FAIL ({c.failures[test]})") for test in c.still_failing]
        lines += _listed([f"`{test}`: {status}" for test, status in sorted(statuses)], limit)
    else:
        lines.append("- none given: the verdict rests on regressions alone")
    lines += ["", "## Regressions (passed on the unfixed code, fail with the patch)"]
    lines += _listed([f"`{test}`: {c.failures[test]}" for test in c.regressions], limit)
    lines += ["", "## Pre-existing failures (failing on the unfixed code too; not counted)"]
    lines += _listed([f"`{test}`" for test in c.pre_existing], limit)
    if c.route == Route.CRAFT:
        sources = [change.path for change in attempt.patch.area(ChangeArea.SOURCE)]
        lines += [
            "",
            "## Kill report",
            "",
            f"Every test the fix must pass passes, but {len(c.regressions)} test(s) that passed "
            "on the unfixed code now fail. The diagnosis stands; narrow the change so that "
            "they pass again without losing the fix.",
            "The patch changed: " + ", ".join(f"`{path}`" for path in sources) + ".",
        ]
    elif c.route == Route.RECON:
        lines += [
            "",
            "## Kill report",
            "",
            f"{len(c.still_failing)} of {len(request.must_pass)} test(s) the fix must pass "
            "still fail: the change does not reach what they exercise. Diagnose again from "
            "their failures:",
            *_listed([f"`{test}`: {c.failures[test]}" for test in c.still_failing], limit),
        ]
    return _finish(lines, c)


def _listed(items: Sequence[str], limit: int) -> list[str]:
    if not items:
        return ["- none"]
    shown = [f"- {item}" for item in items[:limit]]
    if len(items) > limit:
        shown.append(f"- ... and {len(items) - limit} more")
    return shown


def _finish(lines: list[str], classification: Classification) -> str:
    lines += [
        "",
        f"VERDICT: {classification.verdict.value}",
        f"RE-ENTER: {classification.route.value}",
    ]
    return "\n".join(lines) + "\n"


def make_audit(
    request: AuditRequest, *, auditor: str, limit: int = REPORT_LIMIT
) -> tuple[Audit, Classification]:
    """The ``Audit`` record of ``request``, from :func:`classify` and :func:`kill_report`."""
    classification = classify(request)
    audit = Audit(
        task_id=request.task.id,
        contestant=request.attempt.contestant,
        auditor=auditor,
        verdict=classification.verdict,
        route=classification.route,
        still_failing=classification.still_failing,
        regressions=classification.regressions,
        pre_existing=classification.pre_existing,
        report=kill_report(request, classification, limit=limit),
        visible_only=request.visible_only,
        tampering=classification.tampering,
    )
    return audit, classification


# -- rounds -----------------------------------------------------------------------------------


def escalate(route: Route, previous_routes: Sequence[Route]) -> Route:
    """The route the next round takes, with the no-progress rule: a regression gets one
    narrowing round, so ``craft`` right after ``craft`` becomes ``recon``.

    ``previous_routes`` are the earlier rounds' routes, oldest first, either as the audits
    gave them or as this function returned them: a ``craft`` after an escalated ``recon``
    is a fresh regression, and gets its narrowing round again."""
    taken: Route | None = None
    for previous in previous_routes:
        taken = _escalate_once(previous, taken)
    return _escalate_once(route, taken)


def _escalate_once(route: Route, last: Route | None) -> Route:
    return Route.RECON if route == Route.CRAFT and last == Route.CRAFT else route
