"""The report's account of tampering: every patch found meddling with a test run, where
(its score, its audit, a judge's verdict) and why. Pure, like the rest of the report."""

from __future__ import annotations

from pydantic import Field

from bugbout.core.store.records import (
    UNFIXED,
    Audit,
    AuditVerdict,
    Record,
    Resolution,
    Score,
    Verdict,
)

REASONS_SHOWN = 5
"""The most reasons a row of the section shows (the JSON report keeps them all)."""


class TamperedRow(Record):
    """One patch found tampering with a test run on one task."""

    task: str
    contestant: str
    found_by: list[str] = Field(default_factory=list)
    """``score``, ``audit``, and each judge policy that left it out."""
    reasons: list[str] = Field(default_factory=list)


def tampered_rows(
    resolutions: list[Resolution], audits: list[Audit], verdicts: list[Verdict]
) -> list[TamperedRow]:
    """Every tampered patch, sorted by task and contestant."""
    rows: dict[tuple[str, str], TamperedRow] = {}

    def add(task: str, contestant: str, by: str, reasons: list[str]) -> None:
        row = rows.setdefault((task, contestant), TamperedRow(task=task, contestant=contestant))
        if by not in row.found_by:
            row.found_by.append(by)
        row.reasons += [reason for reason in reasons if reason not in row.reasons]

    for resolution in resolutions:
        if resolution.score == Score.TAMPERED:
            reasons = resolution.run.tampering if resolution.run is not None else []
            add(resolution.task_id, resolution.contestant, "score", reasons)
    for audit in audits:
        if audit.verdict == AuditVerdict.TAMPERED:
            add(audit.task_id, audit.contestant, "audit", audit.tampering)
    for verdict in verdicts:
        for name, reasons in verdict.tampered.items():
            if name != UNFIXED:
                add(verdict.task_id, name, f"judge {verdict.policy}", reasons)
    return [rows[key] for key in sorted(rows)]
