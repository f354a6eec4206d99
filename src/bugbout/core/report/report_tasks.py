"""The report's page per task: the evidence behind each task's figures.

:func:`task_pages` gathers, from the records alone, what a reader needs to check one
task: the maintainers' fix, each agent's patch with its status and score, the audit's
verdict with its failing tests and their first error line, the cross-examination as a
grid (each patch against each author's tests) and each judge policy's pick with its
reason. Diffs are bounded (:data:`MAX_DIFF`); what is cut is counted, never hidden.

Two things come from outside the records, read by the caller and passed in: the fix's
diff (:func:`fix_diffs`, from the project's git repository) and where each attempt's
record and logs lie relative to the report (:func:`attempt_links`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Literal
from urllib.parse import quote

from pydantic import Field

from bugbout.core.contract.transcript import TranscriptReader
from bugbout.core.plumbing.trees.git import Git, GitError
from bugbout.core.report.transcripts import Transcript, transcripts
from bugbout.core.store.race_records import (
    RETRYABLE,
    Attempt,
    AttemptStatus,
    Audit,
    AuditScore,
    Score,
)
from bugbout.core.store.records import (
    FAILING,
    Oracle,
    Outcome,
    Record,
    TaskSet,
    TestRun,
    suite_note,
)
from bugbout.core.store.verdict_records import Matrix, PatchResolution, Verdict

MAX_DIFF = 100_000
"""The most characters of one diff a report holds."""
MAX_LINE = 300
"""The most characters of a one-line reason."""
MAX_FAILING = 50
"""The most failing tests listed per audit, and per matrix cell."""


class Diff(Record):
    """A diff in ``git apply`` format, cut at :data:`MAX_DIFF` characters."""

    text: str = ""
    truncated: int = 0
    """Characters left out at its end."""


class FailingTest(Record):
    """A test the audit found failing with the patch."""

    test: str
    kind: Literal["still failing", "regression"]
    line: str = ""
    """The first line of its error (untrusted: written by the code under test)."""


class AuditView(Record):
    """The audit of one patch."""

    auditor: str
    verdict: AuditScore
    visible_only: bool = False
    failing: list[FailingTest] = Field(default_factory=list)
    tampering: list[str] = Field(default_factory=list)


class PatchView(Record):
    """One agent's last attempt on the task."""

    name: str
    role: Literal["contestant", "examiner"]
    round: int = 1
    status: AttemptStatus
    reason: str | None = None
    """Why it did not finish, in one line (``None`` when it finished)."""
    counted: bool = True
    """Whether its score counts (not when it ended on a quota or the infrastructure)."""
    score: Score | None = None
    diff: Diff = Field(default_factory=Diff)
    audit: AuditView | None = None
    record: str | None = None
    """Its record, as a link relative to the report's folder (``None``: unknown)."""
    logs: str | None = None
    """Its logs folder, as a link relative to the report's folder (``None``: not on disk)."""
    transcript: Transcript | None = None
    """What the agent did, from its logs (``None``: not on disk)."""
    fail_to_pass: dict[str, Outcome | None] = Field(default_factory=dict)
    """Its outcome on each hidden fail-to-pass test (``None``: it did not run)."""


class GridCell(Record):
    """One author's tests run on one patch."""

    tests: int = 0
    """The author's tests with an outcome on the patch."""
    failed: int = 0
    missing: int = 0
    """The author's tests with no outcome on the patch."""
    failing: list[str] = Field(default_factory=list)
    """The failing tests' ids (at most :data:`MAX_FAILING`)."""


class GridRow(Record):
    """One patch (or the unfixed code) against every author's tests."""

    patch: str
    cells: list[GridCell] = Field(default_factory=list)
    """One per author, in :attr:`Grid.authors` order."""


class Grid(Record):
    """The cross-examination: who broke whom (rows patches, columns authors' tests)."""

    authors: list[str] = Field(default_factory=list)
    rows: list[GridRow] = Field(default_factory=list)


class PickView(Record):
    """One judge policy's decision on the task."""

    policy: str
    pick: str | None = None
    """``None``: it abstained."""
    reason: str = ""


class TaskPage(Record):
    """Everything the report shows on one task's page."""

    id: str
    environment: str = ""
    """What its ground truth ran in: the oracle's environment line (empty: unknown)."""
    versions: dict[str, str] = Field(default_factory=dict)
    """The resolved versions that matter there: ``python``, pytest and its plugins, the
    project's direct dependencies."""
    suite: list[str] = Field(default_factory=list)
    """Where the repository's tests were at the fix, when not at ``project.tests``."""
    fix: Diff | None = None
    """The maintainers' fix (``None``: the repository was not read)."""
    fail_to_pass: list[str] = Field(default_factory=list)
    """The hidden tests that fail before the fix and pass after it."""
    patches: list[PatchView] = Field(default_factory=list)
    matrix: Grid | None = None
    picks: list[PickView] = Field(default_factory=list)


class AttemptLinks(Record):
    """Where an attempt's record and logs lie, relative to the report's folder."""

    record: str | None = None
    logs: str | None = None
    transcript: Transcript | None = None


# -- building the pages -------------------------------------------------------------------


def task_pages(  # noqa: PLR0917 - the records in pipeline order
    tasks: TaskSet,
    attempts: list[Attempt],
    resolutions: list[PatchResolution],
    verdicts: list[Verdict],
    audits: list[Audit],
    matrices: list[Matrix],
    *,
    fixes: Mapping[str, str] | None = None,
    links: Mapping[str, AttemptLinks] | None = None,
    oracles: Mapping[str, Oracle] | None = None,
) -> list[TaskPage]:
    """One page per task, from the records (pure). ``fixes``: the fix's diff by task id;
    ``links``: each attempt's files by its revision (:attr:`Attempt.revision`);
    ``oracles``: each task's ground truth, for the environment it ran in."""
    last: dict[tuple[str, str, str], Attempt] = {}
    for attempt in attempts:
        who = (attempt.task_id, attempt.role, attempt.contestant)
        if who not in last or attempt.round >= last[who].round:
            last[who] = attempt
    resolution_of = {(r.task_id, r.contestant): r for r in resolutions}
    audit_of: dict[tuple[str, str], Audit] = {}
    for audit in audits:  # the hidden-tests audit wins over a round's review
        key = (audit.task_id, audit.contestant)
        if key not in audit_of or audit_of[key].visible_only or not audit.visible_only:
            audit_of[key] = audit
    matrix_of = {matrix.task_id: matrix for matrix in matrices}
    fixes, links, oracles = fixes or {}, links or {}, oracles or {}
    pages = []
    for task in tasks.tasks:
        matrix = matrix_of.get(task.id)
        patches = []
        for (task_id, _, name), attempt in sorted(last.items()):
            if task_id != task.id:
                continue
            resolution = resolution_of.get((task.id, name))
            found = audit_of.get((task.id, name))
            files = links.get(attempt.revision, AttemptLinks())
            runs = [
                resolution.run if resolution else None,
                matrix.runs.get(name) if matrix else None,
            ]
            patches.append(
                PatchView(
                    name=name,
                    role=attempt.role,
                    round=attempt.round,
                    status=attempt.status,
                    reason=_reason(attempt),
                    counted=attempt.status not in RETRYABLE,
                    score=resolution.score if resolution and attempt.role == "contestant" else None,
                    diff=bounded(attempt.patch.source + attempt.patch.tests + attempt.patch.other),
                    audit=_audit_view(found, [run for run in runs if run]) if found else None,
                    record=files.record,
                    logs=files.logs,
                    transcript=files.transcript,
                    fail_to_pass=dict(resolution.fail_to_pass) if resolution else {},
                )
            )
        pages.append(
            TaskPage(
                id=task.id,
                environment=oracles[task.id].environment if task.id in oracles else "",
                versions=oracles[task.id].versions if task.id in oracles else {},
                suite=oracles[task.id].suite if task.id in oracles else [],
                fix=bounded(fixes[task.id]) if task.id in fixes else None,
                fail_to_pass=oracles[task.id].fail_to_pass if task.id in oracles else [],
                patches=patches,
                matrix=_grid(matrix) if matrix else None,
                picks=[
                    PickView(policy=v.policy, pick=v.pick, reason=v.reason[:MAX_DIFF])
                    for v in sorted(verdicts, key=lambda v: v.policy)
                    if v.task_id == task.id
                ],
            )
        )
    return pages


def environment_line(page: TaskPage) -> str:
    """What a task's ground truth ran in, in one line: the environment, its versions and
    where the tests were, when not at ``project.tests``."""
    from bugbout.core.plumbing.environments.backtrack import listing

    versions = listing(page.versions)
    where = suite_note("", page.suite)
    return "; ".join(
        part for part in (page.environment, versions and f"versions: {versions}", where) if part
    )


def bounded(text: str) -> Diff:
    """``text`` as a :class:`Diff`, cut at :data:`MAX_DIFF` characters."""
    if len(text) <= MAX_DIFF:
        return Diff(text=text)
    cut = text.rfind("\n", 0, MAX_DIFF) + 1 or MAX_DIFF
    return Diff(text=text[:cut], truncated=len(text) - cut)


def one_line(text: str) -> str:
    """``text``'s first non-blank line, at most :data:`MAX_LINE` characters."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"


def _reason(attempt: Attempt) -> str | None:
    if attempt.status == AttemptStatus.FINISHED:
        return None
    return one_line(attempt.error or "") or None


def _audit_view(audit: Audit, runs: list[TestRun]) -> AuditView:
    failing = [
        FailingTest(test=test, kind=kind, line=_failure_line(test, runs))
        for kind, tests in (
            ("still failing", audit.still_failing),
            ("regression", audit.regressions),
        )
        for test in tests[:MAX_FAILING]
    ]
    return AuditView(
        auditor=audit.auditor,
        verdict=audit.verdict,
        visible_only=audit.visible_only,
        failing=failing,
        tampering=[one_line(reason) for reason in audit.tampering],
    )


def _failure_line(test: str, runs: Iterable[TestRun]) -> str:
    """The first error line the runs hold for ``test``: its own, or its module's
    collection error, else its outcome."""
    for run in runs:
        if test in run.failures:
            return one_line(run.failures[test])
        module = test.split("::", 1)[0]
        if module in run.collection_errors:
            return one_line(f"cannot be collected: {run.collection_errors[module]}")
    for run in runs:
        if test in run.outcomes:
            return run.outcomes[test].value
    return "did not run"


def _grid(matrix: Matrix) -> Grid:
    authors = list(matrix.authors)
    rows = []
    for patch in matrix.patches:
        cells = []
        for author in authors:
            cell = GridCell()
            for test in matrix.authors[author]:
                outcome = matrix.outcome(patch, test)
                if outcome is None:
                    cell.missing += 1
                    continue
                cell.tests += 1
                if outcome in FAILING:
                    cell.failed += 1
                    if len(cell.failing) < MAX_FAILING:
                        cell.failing.append(test)
            cells.append(cell)
        rows.append(GridRow(patch=patch, cells=cells))
    return Grid(authors=authors, rows=rows)


# -- what the caller reads for them -------------------------------------------------------


def fix_diffs(repository: Path, tasks: TaskSet) -> dict[str, str]:
    """Each task's fix as ``git diff parent sha`` in ``repository``; tasks whose commits
    are not there are left out."""
    diffs: dict[str, str] = {}
    with Git(repository) as git:
        for task in tasks.tasks:
            with contextlib.suppress(GitError, OSError):
                diffs[task.id] = git.run(
                    "diff", "--no-color", "--no-ext-diff", "--binary", task.parent, task.sha
                )
    return diffs


def attempt_links(
    stored: Iterable[tuple[str, Attempt]],
    store: Path,
    report_folder: Path,
    transcript: TranscriptReader | None,
) -> dict[str, AttemptLinks]:
    """Each attempt's record (``stored``: its path in the store with the attempt) and
    logs folder, as links relative to ``report_folder``, and its transcript (steps as
    ``transcript`` reads them: :func:`transcripts`); logs no longer on disk are left out."""
    links = {}
    stored = list(stored)
    read = transcripts((attempt for _, attempt in stored), transcript)
    for name, attempt in stored:
        logs = Path(attempt.logdir) if attempt.logdir else None
        links[attempt.revision] = AttemptLinks(
            record=_link(store / name, report_folder),
            logs=_link(logs, report_folder) + "/" if logs and logs.is_dir() else None,
            transcript=read.get(attempt.revision),
        )
    return links


def _link(target: Path, folder: Path) -> str:
    return quote(Path(os.path.relpath(target, folder)).as_posix())
