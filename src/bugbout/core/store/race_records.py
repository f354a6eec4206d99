"""The records of the race: what an attempt changed (its patch), how it ended, what an
examiner's showed; and the audit of a patch (an attempt's review is one), with the one
vocabulary a patch's score and an auditor's verdict share. Serialised as JSON in the store
like every record (:mod:`bugbout.core.store.records`)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from bugbout.core.store.filenames import FileName, TestId
from bugbout.core.store.records import Record, TestRun, Versioned, digest

# -- the race -----------------------------------------------------------------------------


class ChangeKind(StrEnum):
    ADDED = "added"
    MODIFIED = "modified"
    DELETED = "deleted"


class ChangeArea(StrEnum):
    """Where a changed file lies: what scoring does with it."""

    SOURCE = "source"
    """Inside the package: applied when the patch is scored."""
    TEST = "test"
    """A test file: the agent's tests, kept apart, never applied when scoring."""
    OTHER = "other"
    """Anywhere else (setup files, docs): reported, not applied when scoring."""


class FileChange(Record):
    """One file an attempt changed."""

    path: FileName
    kind: ChangeKind
    area: ChangeArea
    binary: bool = False
    symlink: bool = False


class Patch(Record):
    """What an attempt changed on disk, against the base tree, split by area.

    Each diff is in ``git apply`` format (binary files as git binary patches).
    """

    source: str = ""
    tests: str = ""
    other: str = ""
    files: list[FileChange] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.files

    def area(self, area: ChangeArea) -> list[FileChange]:
        return [change for change in self.files if change.area == area]


class AttemptStatus(StrEnum):
    """How an attempt ended."""

    FINISHED = "finished"
    """The agent exited on its own; its patch may be empty."""
    TIMEOUT = "timeout"
    QUOTA = "quota"
    """The agent stopped on a usage limit without producing anything."""
    AGENT_ERROR = "agent-error"
    INFRA_ERROR = "infra-error"
    """bugbout could not run the agent (missing CLI, sandbox, checkout...)."""
    INTERRUPTED = "interrupted"
    """The bout was stopped (Ctrl-C, SIGTERM) and killed the agent: run again on resume."""


RETRYABLE = (AttemptStatus.QUOTA, AttemptStatus.INFRA_ERROR, AttemptStatus.INTERRUPTED)
"""Statuses that are not the agent's doing: never counted in its resolve rate, and run
again by ``--retry-failed`` (``interrupted``: by every run)."""


class Examination(Record):
    """What an examiner's attempt is asked and shows beyond its patch: its assignment and
    its tests run on the unfixed code."""

    assignment: str
    """``reproduce``, ``specify``, or a plugin's (empty in a record written without one)."""
    validation: TestRun | None = None
    """Its tests run on the unfixed code; ``None`` when it wrote no test module."""
    reproductions: list[TestId] = Field(default_factory=list)
    """Its tests that fail on the unfixed code, as a reproduction must."""
    rejected_tests: list[TestId] = Field(default_factory=list)
    """For an assignment whose tests must all fail there (``reproduce``): its tests that
    pass on the unfixed code (not evidence)."""


_FLAT_EXAMINATION = ("assignment", "validation", "reproductions", "rejected_tests")
"""An examiner attempt's fields as a record wrote them before ``examination`` held them,
at its top level."""


class Attempt(Versioned):
    """One agent's run on one task, written the moment it ends."""

    task_id: str
    contestant: str
    role: Literal["contestant", "examiner"] = "contestant"
    key: str
    """What determines the attempt (task, agent, model, options, prompt version)."""
    agent: str
    model: str | None = None
    vendor: str | None = None
    status: AttemptStatus
    patch: Patch = Field(default_factory=Patch)
    summary: str = ""
    usage: dict[str, int] = Field(default_factory=dict)
    wall_time: float = 0.0
    exit_code: int | None = None
    error: str | None = None
    logdir: str = ""
    started: str = ""
    """When it started, ISO 8601."""
    round: int = 1
    repeat: int = 1
    """Which of the contestant's independent attempts on the task (``run.repeats``)."""
    examination: Examination | None = None
    """For an examiner: its assignment and its tests on the unfixed code; ``None`` for a
    contestant (and for an examiner bugbout could not run)."""
    review: Audit | None = None
    """With ``run.rounds`` > 1: the audit of this attempt on visible evidence only, which
    decided whether it got another round."""
    guidance_read: bool | None = None
    """Whether the agent said the code seeded into the instruction files it was given
    (its arm's or its native setup's), in its transcript or else its closing summary;
    ``None``: it was given none, or bugbout could not run it."""
    opened: list[str] = Field(default_factory=list)
    """The endpoints its native setup's MCP servers reach, opened for it in the egress
    allow-list beside its model's."""

    @model_validator(mode="before")
    @classmethod
    def _examination_as_written(cls, data: Any) -> Any:
        """An attempt written with its examiner fields at its top level (before
        ``examination`` held them) is read with them there; a contestant's were empty."""
        if not isinstance(data, dict) or not any(f in data for f in _FLAT_EXAMINATION):
            return data
        data = dict(data)
        flat = {field: data.pop(field) for field in _FLAT_EXAMINATION if field in data}
        if any(flat.values()):
            data["examination"] = {**flat, "assignment": flat.get("assignment") or ""}
        return data

    @property
    def revision(self) -> str:
        """What the records built on the attempt (matrix, score, audit) are computed from:
        its key and round, who made it (name, role, vendor, assignment), how it ended and
        its patch, every byte of it (source, tests, other). An attempt run again under the
        same settings with another patch has another revision."""
        assignment = self.examination.assignment if self.examination else ""
        who = (self.contestant, self.role, self.vendor or "", assignment)
        ended = f"round {self.round}: {self.status}"
        return digest(self.key, ended, *who, self.patch.model_dump_json())


# -- a patch's score, and an auditor's verdict: one vocabulary --------------------------


class Score(StrEnum):
    """How a patch does against the tests it must make pass: its score against the hidden
    tests, and an auditor's verdict on it, in one vocabulary."""

    RESOLVED = "resolved"
    """Makes every test it must pass pass, and breaks none that passed."""
    FIXED_BUT_BROKE = "fixed-but-broke"
    """Makes every test it must pass pass, but one that passed no longer does."""
    PARTLY_FIXED = "partly-fixed"
    """Makes some of the tests it must pass pass, not all: an auditor says so (a score
    says ``wrong-fix``)."""
    WRONG_FIX = "wrong-fix"
    """Leaves a test it must pass not passing (an auditor: every one), or does not apply."""
    NO_FIX = "no-fix"
    """Changes no source file."""
    TAMPERED = "tampered"
    """The patch meddled with the test run: never resolved, whatever its outcomes."""


_AUDIT_WORDS_BEFORE = {
    "RESOLVED": Score.RESOLVED,
    "NOT_RESOLVED — regressions": Score.FIXED_BUT_BROKE,
    "PARTIAL": Score.PARTLY_FIXED,
    "NOT_RESOLVED — fix ineffective": Score.WRONG_FIX,
    "NOT_RESOLVED — empty patch": Score.NO_FIX,
    "TAMPERED": Score.TAMPERED,
}
"""An auditor's verdicts as records wrote them before audits and scores shared one
vocabulary."""


def _verdict_as_written(value: Any) -> Any:
    return _AUDIT_WORDS_BEFORE.get(value, value) if isinstance(value, str) else value


AuditScore = Annotated[Score, BeforeValidator(_verdict_as_written)]
"""An auditor's verdict: a :class:`Score`; one written in the words audits had before is
read as the score it is."""


# -- the audit (an attempt's review is one) ---------------------------------------------


class Route(StrEnum):
    CRAFT = "craft"
    RECON = "recon"
    NONE = "none"


class Similarity(Record):
    """How close a patch's source change is to the maintainers' own fix
    (:mod:`bugbout.core.audit.recall`)."""

    measure: str
    """What computed it (the auditor), so figures from different measures are not mixed."""
    five_gram: float
    """Overlap of the normalised token 5-grams of the two changes' lines (Dice, 0 to 1)."""
    identical_lines: float
    """Share of changed lines identical in both, after whitespace (Dice, 0 to 1)."""
    threshold: float
    """The ``five_gram`` overlap at or above which the patch counts as recalled."""
    recalled: bool
    """The patch looks recalled from the public fix rather than written."""


class Audit(Versioned):
    """An auditor's verdict on one patch, with its route and kill report. Audits never
    change a tree."""

    task_id: str
    contestant: str
    key: str = ""
    """The audited attempt's key and the auditor: either changing audits again."""
    auditor: str
    verdict: AuditScore
    route: Route
    still_failing: list[TestId] = Field(default_factory=list)
    """fail-to-pass tests that do not pass with the patch."""
    regressions: list[TestId] = Field(default_factory=list)
    """Tests passing on the unfixed code that fail with the patch."""
    pre_existing: list[TestId] = Field(default_factory=list)
    """Failing tests that already failed on the unfixed code (not counted)."""
    report: str = ""
    """The kill report: what failed and why, for the next round's prompt."""
    visible_only: bool = False
    """Made from visible evidence only (no hidden tests), as retry rounds require."""
    tampering: list[str] = Field(default_factory=list)
    """Why the verdict is ``tampered``."""
    similarity: Similarity | None = None
    """How close the patch is to the maintainers' fix, from an auditor that measures it
    (``recall``) on a hidden audit; ``None`` otherwise."""
    timeout: str = ""
    """``killed after 600 s`` when its gate run hit ``verdicts.timeout``."""
