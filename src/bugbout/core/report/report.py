"""The report: what a bout found, computed from the stored records alone.

:func:`build_report` reads the records every stage wrote (tasks, oracles, attempts,
scores, verdicts, audits, matrices) and returns a :class:`Report`; the reporters only
render it. Nothing here runs a test or asks a model, so a report can be rebuilt from the
store at any time.

A few rules the figures follow:

- a task counts when it is *scored*: the miner kept it and its ground truth is ``ok``;
- each contestant's patch on a task is its last round's, scored by its
  :class:`~bugbout.core.store.verdict_records.PatchResolution`;
- an attempt that ended on a quota or an infrastructure error (the statuses
  ``--retry-failed`` runs again) is not the agent's doing: it is shown apart and left
  out of the resolve rate; timeouts and agent errors are shown apart too, but their
  patches are scored like any other;
- the separation of right from wrong never uses an author's tests on its own patch, and
  the repository's suite is read without the tests that already fail on the unfixed code.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, Literal

from pydantic import ConfigDict, Field

from bugbout.core.report.confidence import Confidence
from bugbout.core.report.contamination import Contamination
from bugbout.core.report.costs import Costs
from bugbout.core.report.decision import Decision
from bugbout.core.report.reasons import Reasons
from bugbout.core.report.repeats import Repeats
from bugbout.core.report.report_tampering import TamperedRow
from bugbout.core.report.report_tasks import TaskPage
from bugbout.core.report.rounds_report import Rounds
from bugbout.core.report.unscored import Unscored
from bugbout.core.store.race_records import AttemptStatus, AuditScore, Score
from bugbout.core.store.records import Record

SCHEMA_VERSION = "bugbout.report/7"
"""The value of a JSON report's ``schema`` key; it changes when the report's shape does."""
SCHEMA_RESOURCE = "report.schema.json"
"""The report's JSON Schema, shipped in :mod:`bugbout.schemas`."""

Role = Literal["contestant", "examiner"]
AuthorRole = Literal["contestant", "examiner", "suite"]


# -- the report's records -----------------------------------------------------------------


class TierRate(Record):
    """One contestant's counted patches on the scored tasks of one tier."""

    scored: int = 0
    resolved: int = 0
    resolve_rate: float | None = None


class AgentRow(Record):
    """One contestant's patches against the ground truth."""

    contestant: str
    agent: str = ""
    model: str | None = None
    vendor: str | None = None
    attempted: int = 0
    """Tasks it made at least one attempt on (any task, scored or not)."""
    scored: int = 0
    """Scored tasks whose patch was scored and counts: the resolve rate's denominator."""
    resolved: int = 0
    fixed_but_broke: int = 0
    wrong_fix: int = 0
    no_fix: int = 0
    tampered: int = 0
    resolve_rate: float | None = None
    """``resolved / scored``; ``None`` when nothing was scored."""
    failures: dict[str, int] = Field(default_factory=dict)
    """Tasks whose last attempt did not finish, by its status (``timeout``, ``quota``,
    ``agent-error``, ``infra-error``)."""
    not_counted: int = 0
    """Scored tasks left out of the rate: the last attempt hit a quota or infra error."""
    tokens: int = 0
    wall_time: float = 0.0
    tiers: dict[str, TierRate] = Field(default_factory=dict)
    """Its patches on the tasks of each tier (``issue-fix``, ``injected``) apart, when the
    bout's tasks are of more than one."""
    repositories: dict[str, TierRate] = Field(default_factory=dict)
    """Its patches on each repository's tasks apart, in a report that pools several."""
    probed: int = 0
    """Attempts given instruction files with the guidance probe (``guidance_read`` known)."""
    guidance_read: int = 0
    """Those whose agent said the probe's code: it read its instructions."""
    opened: list[str] = Field(default_factory=list)
    """The endpoints its native setup opened beside its model's, for any attempt."""


class PolicyPicks(Record):
    """One judge policy's picks, one patch per task or an abstention."""

    policy: str
    tasks: int = 0
    """Tasks it gave a verdict on, among the picking section's tasks."""
    picks: int = 0
    resolved: int = 0
    """Picks whose patch resolves the task."""
    abstentions: int = 0
    precision: float | None = None
    """``resolved / picks``; ``None`` without picks."""
    resolve_rate: float | None = None
    """``resolved`` over every task of the picking section, to compare with the baselines."""
    scores: dict[str, int] = Field(default_factory=dict)
    """Picks by the picked patch's score (``unscored`` when it has none)."""


class Baseline(Record):
    """What another way of choosing one patch per task would have resolved."""

    resolved: int | None = 0
    """Tasks resolved; ``None`` for the random agent, whose expected figure is a rate."""
    rate: float | None = None
    """Tasks resolved (for the random agent: expected) over the picking section's tasks."""
    agent: str | None = None
    """For the best single agent: which one."""


class Picking(Record):
    """Picking one patch per bug: each policy against three baselines."""

    tasks: int = 0
    """Scored tasks with at least one scored patch."""
    policies: list[PolicyPicks] = Field(default_factory=list)
    best_agent: Baseline = Field(default_factory=Baseline)
    """The contestant that resolved the most tasks."""
    random_agent: Baseline = Field(default_factory=lambda: Baseline(resolved=None))
    """A contestant drawn at random per task: the mean fraction of contestants that
    resolved each task."""
    oracle: Baseline = Field(default_factory=Baseline)
    """The best any choice could do: tasks that some contestant resolved."""


class GateRow(Record):
    """One policy as a merge gate: every patch judged alone."""

    policy: str
    patches: int = 0
    """Scored patches on tasks the policy gave a verdict on."""
    approvals: int = 0
    right_approvals: int = 0
    """Approved patches that resolve their task."""
    precision: float | None = None
    """``right_approvals / approvals``."""
    right: int = 0
    """Patches that resolve their task."""
    rejected_right: int = 0
    """Right patches the gate did not approve."""
    wrong: int = 0
    """Patches that do not resolve their task."""
    stopped: int = 0
    """Wrong patches the gate did not approve."""
    stop_rate: float | None = None
    """``stopped / wrong``."""


class AuditRow(Record):
    """One auditor's verdicts on one contestant's patches."""

    auditor: str
    contestant: str
    visible_only: bool = False
    """Audits made from visible evidence only, as retry rounds use."""
    audits: int = 0
    verdicts: dict[AuditScore, int] = Field(default_factory=dict)
    """Audits by verdict."""
    compared: int = 0
    """Audits of a patch with a score."""
    agrees: int = 0
    """Of those, audits that say ``resolved`` exactly when the score does."""


class MergeGate(Record):
    """Every patch through a merge gate: the judge policies and the auditors."""

    policies: list[GateRow] = Field(default_factory=list)
    audits: list[AuditRow] = Field(default_factory=list)


class SeparationRow(Record):
    """How well one author's tests tell a right patch from a wrong one.

    Over every matrix column with a score (never the author's own patch): the tests
    *accept* a patch when none of them fails on it, and *reject* it when one does.
    """

    author: str
    role: AuthorRole
    tasks: int = 0
    """Tasks where the author's tests judged at least one scored patch."""
    patches: int = 0
    """Patches judged: ``true_positive + false_positive + true_negative + false_negative``."""
    true_positive: int = 0
    """Right patches accepted."""
    false_positive: int = 0
    """Wrong patches accepted."""
    true_negative: int = 0
    """Wrong patches rejected."""
    false_negative: int = 0
    """Right patches rejected."""
    no_outcome: int = 0
    """Scored patches on which none of the author's tests has an outcome."""
    accuracy: float | None = None
    """``(true_positive + true_negative) / patches``."""


class TierFound(Record):
    """The tasks of one tier, and how many of them ground truth kept."""

    tasks: int = 0
    scored: int = 0


class Found(Record):
    """How the tasks were found."""

    examined: int = 0
    """Commits examined."""
    excluded: dict[str, int] = Field(default_factory=dict)
    """Examined commits left out, by reason."""
    tasks: int = 0
    scored: int = 0
    not_scored: dict[str, int] = Field(default_factory=dict)
    """Tasks not scored, by reason."""
    tiers: dict[str, TierFound] = Field(default_factory=dict)
    """The tasks and the scored tasks of each tier."""


class TaskRow(Record):
    """One task and what became of it."""

    id: str
    tier: str = "issue-fix"
    """Where the task comes from (``bugbout.core.store.records.TIERS``)."""
    repository: str = ""
    """Its repository, in a report that pools several."""
    issue: int
    url: str | None = None
    title: str = ""
    problem_statement: str = ""
    statement_origin: str = ""
    """Where its statement comes from, when it names no issue: ``scrubbed`` (and why a
    draft was not used), or ``drafted by <contestant> (<model>)``."""
    scored: bool = False
    reason: str | None = None
    """Why it is not scored, when it is not."""
    scores: dict[str, Score] = Field(default_factory=dict)
    """Each contestant's counted score."""
    failures: dict[str, AttemptStatus] = Field(default_factory=dict)
    """Contestants whose last attempt did not finish, with its status."""
    picks: dict[str, str | None] = Field(default_factory=dict)
    """Each policy's pick (``None``: it abstained)."""

    def origin(self) -> str:
        """Where it comes from, in a word: its issue (``#12``), or its tier (``fix,
        drafted`` when a model drafted its statement)."""
        if self.tier == "issue-fix":
            return f"#{self.issue}"
        return f"{self.tier}, drafted" if self.statement_origin.startswith("drafted") else self.tier


class UsageRow(Record):
    """What one agent spent, every round included."""

    name: str
    role: Role
    agent: str = ""
    model: str | None = None
    attempts: int = 0
    tasks: int = 0
    tokens: int = 0
    usage: dict[str, int] = Field(default_factory=dict)
    """Tokens by kind, as the adapter reported them (disjoint parts of ``tokens``)."""
    wall_time: float = 0.0


class Totals(Record):
    """Token usage and wall time per agent, and for the whole bout."""

    agents: list[UsageRow] = Field(default_factory=list)
    tokens: int = 0
    wall_time: float = 0.0


class Report(Record):
    """A bout's results, section by section; the JSON report is this record's dump."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_version: str = Field(default=SCHEMA_VERSION, alias="schema")
    """Dumped as ``schema`` (``model_dump_json(by_alias=True)``)."""
    decision: Decision = Field(default_factory=Decision)
    """The recommendation the report opens with (:func:`~bugbout.core.report.decision.decide`)."""
    contestants: list[str] = Field(default_factory=list)
    examiners: list[str] = Field(default_factory=list)
    policies: list[str] = Field(default_factory=list)
    pooled: list[str] = Field(default_factory=list)
    """The repositories whose bouts it pools (none: one repository's bout)."""
    agents: list[AgentRow] = Field(default_factory=list)
    picking: Picking = Field(default_factory=Picking)
    merge_gate: MergeGate = Field(default_factory=MergeGate)
    separation: list[SeparationRow] = Field(default_factory=list)
    found: Found = Field(default_factory=Found)
    tasks: list[TaskRow] = Field(default_factory=list)
    totals: Totals = Field(default_factory=Totals)
    costs: Costs = Field(default_factory=Costs)
    tampered: list[TamperedRow] = Field(default_factory=list)
    timeouts: list[str] = Field(default_factory=list)
    """What was cut short: test runs after the race killed at ``verdicts.timeout``."""
    confidence: Confidence = Field(default_factory=Confidence)
    rounds: Rounds = Field(default_factory=Rounds)
    repeats: Repeats = Field(default_factory=Repeats)
    reasons: Reasons = Field(default_factory=Reasons)
    pages: list[TaskPage] = Field(default_factory=list)
    """A page per task: the diffs, the matrix, the audit and the picks behind its row."""
    contamination: Contamination = Field(default_factory=Contamination)
    unscored: Unscored = Field(default_factory=Unscored)
    """The contestants' attempts left unscored, and the warning when most are."""
    running: str | None = None
    """Set when a bout was running on the store as the report was made: it is partial."""

    def to_json(self, *, indent: int | None = 2) -> str:
        """The JSON report: valid against :func:`report_schema`."""
        return self.model_dump_json(by_alias=True, indent=indent)


def report_schema() -> dict[str, Any]:
    """The report's JSON Schema (draft 2020-12), as shipped with the package."""
    text = resources.files("bugbout.schemas").joinpath(SCHEMA_RESOURCE).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


# -- building it --------------------------------------------------------------------------


def rate(part: float, whole: float) -> float | None:
    """``part / whole``, or ``None`` when there is no whole."""
    return part / whole if whole else None
