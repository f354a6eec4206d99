"""A test run's record from the reports its outcome stream holds: one outcome per test
from its phases, the run's status from pytest's exit status, the first line of each
failure, and the test running when the run ended."""

from __future__ import annotations

from bugbout.core.store.records import Outcome, RunStatus, TestRun

FAILURE_LINE = 300
"""The most characters kept of a failed test's first error line (untrusted text)."""


def running_test(reports: list[dict[str, str]]) -> str | None:
    """The test that started and never reached its teardown: the one running at the end."""
    running = None
    for report in reports:
        if report["when"] == "start":
            running = report["nodeid"]
        elif report["when"] == "teardown" and report["nodeid"] == running:
            running = None
    return running


def summarise(
    reports: list[dict[str, str]], *, label: str, exit_code: int | None, duration: float
) -> TestRun:
    """One outcome per node id from the phase reports, and the run's status. A test that
    passed with a failed subtest failed."""
    phases: dict[str, dict[str, str]] = {}
    failed_subtests: set[str] = set()
    collection_errors: dict[str, str] = {}
    skipped_modules: dict[str, str] = {}
    failures: dict[str, str] = {}
    skips: dict[str, str] = {}
    for report in reports:
        if report["when"] == "collect" and report["outcome"] == "skipped":
            skipped_modules[report["nodeid"]] = report.get("message", "")
        elif report["when"] == "collect":
            collection_errors[report["nodeid"]] = report.get("message", "")
        elif report["when"] != "start":
            if report.get("subtest") == "True":
                if report["outcome"] == "failed":
                    failed_subtests.add(report["nodeid"])
            else:
                phases.setdefault(report["nodeid"], {})[report["when"]] = report["outcome"]
            if report["outcome"] == "failed" and report["nodeid"] not in failures:
                failures[report["nodeid"]] = first_line(report.get("message", ""))
            elif report["outcome"] == "skipped" and report["nodeid"] not in skips:
                skips[report["nodeid"]] = first_line(report.get("message", ""))
    outcomes = {nodeid: _outcome(by_phase) for nodeid, by_phase in phases.items()}
    for nodeid in failed_subtests & set(outcomes):
        if outcomes[nodeid] == Outcome.PASSED:
            outcomes[nodeid] = Outcome.FAILED
    if exit_code in (0, 1) or (exit_code == 2 and outcomes):
        status = RunStatus.OK
    elif exit_code == 5:
        status = RunStatus.NO_TESTS
    elif exit_code == 2 and collection_errors:
        status = RunStatus.COLLECTION_FAILED
    else:
        status = RunStatus.CRASHED
    if status == RunStatus.OK and collection_errors and not outcomes:
        status = RunStatus.COLLECTION_FAILED
    return TestRun(
        label=label,
        status=status,
        exit_code=exit_code,
        duration=round(duration, 3),
        outcomes=outcomes,
        collection_errors=collection_errors,
        skipped_modules=skipped_modules,
        failures={nodeid: line for nodeid, line in failures.items() if nodeid in outcomes},
        skips={
            nodeid: line
            for nodeid, line in skips.items()
            if outcomes.get(nodeid) == Outcome.SKIPPED
        },
    )


def first_line(text: str) -> str:
    """``text``'s first non-blank line, stripped, at most ``FAILURE_LINE`` characters."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= FAILURE_LINE else line[: FAILURE_LINE - 1] + "…"


def _outcome(by_phase: dict[str, str]) -> Outcome:
    setup = by_phase.get("setup")
    call = by_phase.get("call")
    teardown = by_phase.get("teardown")
    if setup == "failed":
        return Outcome.ERROR
    if call is None:
        return Outcome.XFAILED if setup == "xfailed" else Outcome.SKIPPED
    if call in ("xfailed", "xpassed"):
        return Outcome(call)
    if teardown == "failed":
        return Outcome.ERROR
    if call == "skipped":  # pytest.skip, unittest's skip decorators and skipTest
        return Outcome.SKIPPED
    return Outcome.PASSED if call == "passed" else Outcome.FAILED
