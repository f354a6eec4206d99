"""Kill reports: what a failed audit sends back and where it routes; a second craft in a row
escalates to recon."""

from __future__ import annotations

from audit_requests import BASE, F2P, LEGACY, OTHER, P2P, request
from bugbout.core.audit.auditing import classify, escalate, kill_report
from bugbout.core.store.race_records import ChangeArea, ChangeKind, FileChange, Patch, Route


def test_kill_report_for_a_regression_routes_to_craft_with_the_evidence() -> None:
    gate = {F2P[0]: "passed", F2P[1]: "passed", P2P: "failed", LEGACY: "failed"}
    req = request(gate, collection_errors={"tests/test_util.py": "ImportError: spread"})
    result = classify(req)
    report = kill_report(req, result)
    assert report.startswith("# Audit of alice on abc123\n")
    assert f"- `{F2P[0]}`: PASS" in report
    assert f"- `{P2P}`: failed" in report
    assert f"- `{OTHER}`: error: cannot be collected: ImportError: spread" in report
    pre_existing = "## Pre-existing failures (failing on the unfixed code too; not counted)"
    assert f"{pre_existing}\n- `{LEGACY}`\n" in report
    assert "## Kill report" in report
    assert "2 test(s) that passed on the unfixed code now fail" in report
    assert "The patch changed: `src/mid/core.py`." in report
    assert report.splitlines()[-2:] == [
        "VERDICT: fixed-but-broke",
        "RE-ENTER: craft",
    ]


def test_kill_report_for_an_ineffective_fix_routes_to_recon_with_what_still_fails() -> None:
    gate = BASE | {F2P[0]: "passed"}
    gate.pop(F2P[1])
    req = request(gate, collection_errors={"tests/test_core.py::test_pair": "TypeError: pair"})
    report = kill_report(req, classify(req))
    assert "## Must pass (fail-to-pass: 1 of 2 pass)" in report
    assert f"- `{F2P[1]}`: FAIL (error: cannot be collected: TypeError: pair)" in report
    assert "1 of 2 test(s) the fix must pass still fail" in report
    assert "## Regressions (passed on the unfixed code, fail with the patch)\n- none" in report
    assert report.endswith("VERDICT: partly-fixed\nRE-ENTER: recon\n")


def test_kill_report_when_resolved_and_when_empty() -> None:
    req = request(BASE | {F2P[0]: "passed", F2P[1]: "passed"})
    resolved = kill_report(req, classify(req))
    assert "## Kill report" not in resolved
    assert resolved.endswith("\nVERDICT: resolved\nRE-ENTER: none\n")
    other = Patch(
        other="diff --git a/README b/README\n",
        files=[FileChange(path="README", kind=ChangeKind.MODIFIED, area=ChangeArea.OTHER)],
    )
    empty_req = request(BASE, patch=other)
    empty = kill_report(empty_req, classify(empty_req))
    assert "changes no source file" in empty
    assert "It changes 1 other file(s)" in empty
    assert "## Must pass" not in empty
    assert empty.endswith("VERDICT: no-fix\nRE-ENTER: craft\n")


def test_kill_report_lists_at_most_the_limit() -> None:
    many = {f"tests/test_many.py::test_{i:02}": "passed" for i in range(10)}
    base = BASE | many
    gate = base | {F2P[0]: "passed", F2P[1]: "passed"} | dict.fromkeys(many, "failed")
    req = request(gate, base)
    report = kill_report(req, classify(req), limit=3)
    assert "- `tests/test_many.py::test_02`: failed\n- ... and 7 more" in report
    assert "test_many.py::test_03" not in report


# -- rounds ------------------------------------------------------------------------------------


def test_escalation_sends_a_second_craft_in_a_row_to_recon() -> None:
    assert escalate(Route.CRAFT, []) == Route.CRAFT
    assert escalate(Route.CRAFT, [Route.CRAFT]) == Route.RECON
    assert escalate(Route.CRAFT, [Route.RECON]) == Route.CRAFT
    assert escalate(Route.RECON, [Route.CRAFT]) == Route.RECON
    assert escalate(Route.NONE, [Route.CRAFT]) == Route.NONE
    # after the escalated re-diagnosis a new regression gets its narrowing round again,
    # whether earlier rounds are given as the audits emitted them or as escalated
    assert escalate(Route.CRAFT, [Route.CRAFT, Route.CRAFT]) == Route.CRAFT
    assert escalate(Route.CRAFT, [Route.CRAFT, Route.RECON]) == Route.CRAFT
    assert escalate(Route.CRAFT, [Route.CRAFT, Route.CRAFT, Route.CRAFT]) == Route.RECON
