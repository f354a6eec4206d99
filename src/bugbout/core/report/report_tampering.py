"""The report's account of tampering: every patch found meddling with a test run, where
(its score or an earlier round's, its audit, a cross-examination run, its tests left out
of one, an examiner's run of its tests on the unfixed code, a judge's verdict) and why.
Pure, like the rest of the report."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from bugbout.core.store.race_records import Attempt, Audit, Score
from bugbout.core.store.records import Record, RunStatus
from bugbout.core.store.verdict_records import UNFIXED, Matrix, PatchResolution, Verdict

LEFT_OUT = (
    "its tests were left out of the cross-examination where, run alone, they tampered "
    "with the test run"
)
"""What the report says first of an author whose tests were left out."""

REASONS_SHOWN = 5
"""The most reasons a row of the section shows (the JSON report keeps them all)."""


class TamperedRow(Record):
    """One patch found tampering with a test run on one task."""

    task: str
    contestant: str
    found_by: list[str] = Field(default_factory=list)
    """``score``, ``an earlier round's score``, ``audit``,
    ``cross-examination``, ``validation``, and each judge policy that left it out."""
    reasons: list[str] = Field(default_factory=list)


def tampered_rows(  # noqa: PLR0917 - the records in pipeline order
    resolutions: list[PatchResolution],
    audits: list[Audit],
    verdicts: list[Verdict],
    matrices: Sequence[Matrix] = (),
    attempts: Sequence[Attempt] = (),
    round_scores: Sequence[PatchResolution] = (),
) -> list[TamperedRow]:
    """Every tampered patch, sorted by task and contestant: wherever a run on it was
    found tampered, whether or not its final score says so."""
    rows: dict[tuple[str, str], TamperedRow] = {}

    def add(task: str, contestant: str, by: str, reasons: list[str]) -> None:
        row = rows.setdefault((task, contestant), TamperedRow(task=task, contestant=contestant))
        if by not in row.found_by:
            row.found_by.append(by)
        row.reasons += [reason for reason in reasons if reason not in row.reasons]

    for found_by, scores in (("score", resolutions), ("an earlier round's score", round_scores)):
        for resolution in scores:
            run = resolution.run
            if resolution.score == Score.TAMPERED or (run and run.status == RunStatus.TAMPERED):
                reasons = run.tampering if run is not None else []
                add(resolution.task_id, resolution.contestant, found_by, reasons)
    for matrix in matrices:
        for patch, run in sorted(matrix.runs.items()):
            if patch != UNFIXED and run.status == RunStatus.TAMPERED:
                add(matrix.task_id, patch, "cross-examination", run.tampering)
        for author, reasons in sorted(matrix.left_out.items()):
            add(matrix.task_id, author, "cross-examination", [LEFT_OUT, *reasons])
    for attempt in attempts:
        run = attempt.examination.validation if attempt.examination else None
        if run is not None and run.status == RunStatus.TAMPERED:
            add(attempt.task_id, attempt.contestant, "validation", run.tampering)
    for audit in audits:
        if audit.verdict == Score.TAMPERED:
            add(audit.task_id, audit.contestant, "audit", audit.tampering)
    for verdict in verdicts:
        for name, reasons in verdict.tampered.items():
            if name != UNFIXED:
                add(verdict.task_id, name, f"judge {verdict.policy}", reasons)
    return [rows[key] for key in sorted(rows)]
