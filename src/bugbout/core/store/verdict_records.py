"""The records of the stages after the race: the cross-examination's matrix, the judge's
verdicts, the scores, the audits, and the job that ran them (``job.json``), serialised
as JSON in the store like every record (:mod:`bugbout.core.store.records`)."""

from __future__ import annotations

from pydantic import Field

from bugbout.core.store.filenames import TestId
from bugbout.core.store.race_records import Audit, Score
from bugbout.core.store.records import Outcome, Record, RecordRoot, TaskSet, TestRun, Versioned

UNFIXED = "(unfixed)"
"""The matrix column of the code before the fix, with no patch applied."""
SUITE = "(suite)"
"""The author of the repository's own tests in a matrix."""


class Matrix(Versioned):
    """Cross-examination of one task: every author's tests run against every patch.

    ``outcomes[patch][test]`` is the executed outcome of ``test`` on the code with
    ``patch``'s source changes (``UNFIXED``: none). Each test id is the node id of the
    author's test as installed under a module of its own; ``authors[author]`` lists them
    (``SUITE`` for the repository's own tests).
    """

    task_id: str
    key: str = ""
    """What determined it (the attempts examined, the suite setting)."""
    patches: list[str]
    """Contestant names whose patch was examined, plus ``UNFIXED``."""
    authors: dict[str, list[TestId]] = Field(default_factory=dict)
    vendors: dict[str, str | None] = Field(default_factory=dict)
    """Each author's (and patch's) vendor, for policies that keep vendors apart."""
    outcomes: dict[str, dict[TestId, Outcome]] = Field(default_factory=dict)
    runs: dict[str, TestRun] = Field(default_factory=dict)
    """The pytest process behind each column (one per patch)."""
    left_out: dict[str, list[str]] = Field(default_factory=dict)
    """Authors whose tests were left out because, run alone on the unfixed code, they
    tampered with the run; and how (:mod:`bugbout.core.crossexam.tainting`)."""

    def outcome(self, patch: str, test: str) -> Outcome | None:
        return self.outcomes.get(patch, {}).get(test)


class Cell(Record):
    """One matrix cell a verdict rests on."""

    patch: str
    test: TestId
    outcome: Outcome | None
    tampered: bool = False
    """The column's run was tampered with: its outcome proves nothing."""


class Verdict(Versioned):
    """A judge policy's decision on one task: a pick, or an abstention, and why."""

    task_id: str
    policy: str
    pick: str | None = None
    """The contestant whose patch is picked; ``None`` is an abstention."""
    reason: str
    approved: list[str] = Field(default_factory=list)
    """Every patch the policy would approve on its own (the merge gate view)."""
    support: dict[str, float] = Field(default_factory=dict)
    """Each patch's support score under the policy."""
    cells: list[Cell] = Field(default_factory=list)
    tampered: dict[str, list[str]] = Field(default_factory=dict)
    """Patches left out because their column's run was tampered with, and why."""


class PatchResolution(Versioned):
    """How one patch scored against the task's hidden tests."""

    task_id: str
    contestant: str
    key: str = ""
    """The scored attempt's key: a new attempt is scored again."""
    confinement: str = ""
    """How its test run was confined (the sandbox and ``limits.tests``): a score computed
    under other ones is computed again."""
    score: Score
    fail_to_pass: dict[TestId, Outcome | None] = Field(default_factory=dict)
    pass_to_pass_failing: list[TestId] = Field(default_factory=list)
    run: TestRun | None = None


class TaskResolutions(Record):
    """A task's scores: every patch's, and each judge policy's pick's."""

    patches: dict[str, PatchResolution] = Field(default_factory=dict)
    picks: dict[str, Score] = Field(default_factory=dict)
    """Policy → the score of its pick (``no-fix`` for an abstention)."""


class ResolutionSet(RecordRoot[dict[str, TaskResolutions]]):
    """``resolutions.json``: scores by task id."""

    root: dict[str, TaskResolutions] = Field(default_factory=dict)


class VerdictSet(RecordRoot[dict[str, dict[str, Verdict]]]):
    """``verdicts.json``: by task id, then by policy."""

    root: dict[str, dict[str, Verdict]] = Field(default_factory=dict)


class AuditSet(RecordRoot[dict[str, dict[str, Audit]]]):
    """``audits.json``: by task id, then by contestant."""

    root: dict[str, dict[str, Audit]] = Field(default_factory=dict)


class JobAttempt(Record):
    """One attempt a job used: where it is stored and whether the job ran it."""

    task_id: str
    contestant: str
    path: str
    """Relative to the shared store."""
    reused: bool
    """Found in the store (run by an earlier bout or another sweep job), not run now."""


class Job(Record):
    """One bout's (or one sweep job's) run: ``job.json`` beside its report.

    The report of a job covers exactly these attempts, so sweep jobs sharing one store
    each report on their own contestants."""

    overrides: list[str] = Field(default_factory=list)
    """The job's command-line overrides (a sweep job's own choices)."""
    judge: str
    auditor: str
    contestants: list[str] = Field(default_factory=list)
    examiners: list[str] = Field(default_factory=list)
    cutoffs: dict[str, str] = Field(default_factory=dict)
    """Knowledge cutoffs the contestants declared (``knowledge-cutoff``), by name; the
    others' come from the packaged defaults for their model."""
    tasks: TaskSet = Field(default_factory=TaskSet)
    """What the bout mined, its tasks scored: its report covers these, whatever later
    bouts with other settings mine into the shared ``tasks.json``."""
    attempts: list[JobAttempt] = Field(default_factory=list)
    started: str
    wall_time: float = 0.0
    """Seconds from the job's start to its reports."""
    evidence_made: int = 0
    """Matrices, scores and audits the job computed (each one or more pytest runs)."""
    evidence_reused: int = 0
    """Those it found in the store, computed by an earlier bout or sweep job."""
    truths_made: int = 0
    """Ground truths (oracles) the job computed: new tasks, or an environment error
    tried again (each two runs of each tree, with the default tasks.reruns, or more)."""
    truths_reused: int = 0
    """Those it found in the store."""
    reports: list[str] = Field(default_factory=list)
    """The report files it wrote beside it; the next job there removes those it does not
    write again (a reporter taken out of ``reporters:``)."""

    @property
    def attempts_run(self) -> int:
        return sum(not attempt.reused for attempt in self.attempts)

    @property
    def attempts_reused(self) -> int:
        return sum(attempt.reused for attempt in self.attempts)
