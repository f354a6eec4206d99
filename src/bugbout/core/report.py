"""The report: what a bout found, computed from the stored records alone.

:func:`build_report` reads the records every stage wrote (tasks, oracles, attempts,
scores, verdicts, audits, matrices) and returns a :class:`Report`; the reporters only
render it. Nothing here runs a test or asks a model, so a report can be rebuilt from the
store at any time.

A few rules the figures follow:

- a task counts when it is *scored*: the miner kept it and its ground truth is ``ok``;
- each contestant's patch on a task is its last round's, scored by its
  :class:`~bugbout.core.records.Resolution`;
- an attempt that ended on a quota or an infrastructure error (the statuses
  ``--retry-failed`` runs again) is not the agent's doing: it is shown apart and left
  out of the resolve rate; timeouts and agent errors are shown apart too, but their
  patches are scored like any other;
- the separation of right from wrong never uses an author's tests on its own patch, and
  the repository's suite is read without the tests that already fail on the unfixed code.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Literal

from pydantic import ConfigDict, Field

from bugbout.core.confidence import Confidence, confidence, confidence_section
from bugbout.core.records import (
    RETRYABLE,
    SUITE,
    UNFIXED,
    Attempt,
    AttemptStatus,
    Audit,
    AuditVerdict,
    Matrix,
    OracleSet,
    Outcome,
    Record,
    Resolution,
    Score,
    Task,
    TaskSet,
    Verdict,
)
from bugbout.core.report_tampering import TamperedRow, tampered_rows, tampered_section

SCHEMA_VERSION = "bugbout.report/2"
"""The value of a JSON report's ``schema`` key; it changes when the report's shape does."""
SCHEMA_RESOURCE = "report.schema.json"
"""The report's JSON Schema, shipped in :mod:`bugbout.schemas`."""

FAILING = frozenset({Outcome.FAILED, Outcome.ERROR, Outcome.XPASSED})
"""Outcomes that count as a test failing."""

Role = Literal["contestant", "examiner"]
AuthorRole = Literal["contestant", "examiner", "suite"]


# -- the report's records -----------------------------------------------------------------


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

    resolved: float = 0.0
    """Tasks resolved (for the random agent: the expected number)."""
    rate: float | None = None
    """``resolved`` over the picking section's tasks."""
    agent: str | None = None
    """For the best single agent: which one."""


class Picking(Record):
    """Picking one patch per bug: each policy against three baselines."""

    tasks: int = 0
    """Scored tasks with at least one scored patch."""
    policies: list[PolicyPicks] = Field(default_factory=list)
    best_agent: Baseline = Field(default_factory=Baseline)
    """The contestant that resolved the most tasks."""
    random_agent: Baseline = Field(default_factory=Baseline)
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
    verdicts: dict[str, int] = Field(default_factory=dict)
    """Audits by verdict."""
    compared: int = 0
    """Audits of a patch with a score."""
    agrees: int = 0
    """Of those, audits that say ``RESOLVED`` exactly when the score is ``resolved``."""


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


class TaskRow(Record):
    """One task and what became of it."""

    id: str
    issue: int
    url: str | None = None
    title: str = ""
    problem_statement: str = ""
    scored: bool = False
    reason: str | None = None
    """Why it is not scored, when it is not."""
    scores: dict[str, Score] = Field(default_factory=dict)
    """Each contestant's counted score."""
    failures: dict[str, AttemptStatus] = Field(default_factory=dict)
    """Contestants whose last attempt did not finish, with its status."""
    picks: dict[str, str | None] = Field(default_factory=dict)
    """Each policy's pick (``None``: it abstained)."""


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
    contestants: list[str] = Field(default_factory=list)
    examiners: list[str] = Field(default_factory=list)
    policies: list[str] = Field(default_factory=list)
    agents: list[AgentRow] = Field(default_factory=list)
    picking: Picking = Field(default_factory=Picking)
    merge_gate: MergeGate = Field(default_factory=MergeGate)
    separation: list[SeparationRow] = Field(default_factory=list)
    found: Found = Field(default_factory=Found)
    tasks: list[TaskRow] = Field(default_factory=list)
    totals: Totals = Field(default_factory=Totals)
    tampered: list[TamperedRow] = Field(default_factory=list)
    confidence: Confidence = Field(default_factory=Confidence)

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


def _scored_tasks(tasks: TaskSet, oracles: OracleSet) -> dict[str, str | None]:
    """Every task's id with why it is not scored (``None``: it is scored)."""
    reasons: dict[str, str | None] = {}
    for task in tasks.tasks:
        oracle = oracles.root.get(task.id)
        if not task.scored:
            reasons[task.id] = task.reason or "not scored"
        elif oracle is None:
            reasons[task.id] = "no ground truth yet"
        elif oracle.status != "ok":
            reasons[task.id] = oracle.reason or oracle.status
        else:
            reasons[task.id] = None
    return reasons


def _last_attempts(attempts: list[Attempt]) -> dict[tuple[Role, str, str], Attempt]:
    """Each (role, agent, task)'s last round (the later record on a tie)."""
    last: dict[tuple[Role, str, str], Attempt] = {}
    for attempt in attempts:
        key = (attempt.role, attempt.contestant, attempt.task_id)
        if key not in last or attempt.round >= last[key].round:
            last[key] = attempt
    return last


def _accepts(matrix: Matrix, patch: str, tests: list[str]) -> bool | None:
    """Whether ``tests`` accept ``patch`` (none fails), reject it, or cannot tell."""
    outcomes = [matrix.outcome(patch, test) for test in tests]
    if any(outcome in FAILING for outcome in outcomes):
        return False
    if not outcomes or any(outcome is None for outcome in outcomes):
        return None
    return True


def build_report(  # noqa: PLR0917 - the records in pipeline order
    tasks: TaskSet,
    oracles: OracleSet,
    attempts: list[Attempt],
    resolutions: list[Resolution],
    verdicts: list[Verdict],
    audits: list[Audit],
    matrices: list[Matrix],
) -> Report:
    """The report on a bout, from its records alone (pure: reads nothing, runs nothing)."""
    reasons = _scored_tasks(tasks, oracles)
    scored_ids = [task_id for task_id, reason in reasons.items() if reason is None]
    scored_set = set(scored_ids)

    last = _last_attempts(attempts)
    contestants = sorted({a.contestant for a in attempts if a.role == "contestant"})
    examiners = sorted({a.contestant for a in attempts if a.role == "examiner"})
    contestant_set = set(contestants)

    # Each (task, contestant)'s score, when it counts: a scored task, a known contestant,
    # and a last attempt that was not stopped by a quota or the infrastructure.
    resolution_of: dict[tuple[str, str], Resolution] = {}
    for resolution in resolutions:
        resolution_of[(resolution.task_id, resolution.contestant)] = resolution
    score: dict[tuple[str, str], Score] = {}
    for (task_id, name), resolution in resolution_of.items():
        attempt = last.get(("contestant", name, task_id))
        if task_id not in scored_set or name not in contestant_set:
            continue
        if attempt is not None and attempt.status in RETRYABLE:
            continue
        score[(task_id, name)] = resolution.score

    verdict_of: dict[tuple[str, str], Verdict] = {}
    for verdict in verdicts:
        verdict_of[(verdict.task_id, verdict.policy)] = verdict
    policies = sorted({policy for _, policy in verdict_of})

    return Report(
        contestants=contestants,
        examiners=examiners,
        policies=policies,
        agents=_agents(contestants, attempts, last, score, scored_set),
        picking=_picking(contestants, policies, scored_ids, score, verdict_of),
        merge_gate=MergeGate(
            policies=[_gate(policy, score, verdict_of) for policy in policies],
            audits=_audits(audits, score),
        ),
        separation=_separation(matrices, score, scored_set, set(examiners)),
        found=_found(tasks, reasons),
        tasks=[
            _task_row(
                task,
                reasons=reasons,
                last=last,
                score=score,
                verdict_of=verdict_of,
                policies=policies,
            )
            for task in tasks.tasks
        ],
        totals=_totals(attempts),
        tampered=tampered_rows(resolutions, audits, verdicts),
        confidence=confidence(contestants, policies, scored_ids, score, verdict_of),
    )


def _agents(
    contestants: list[str],
    attempts: list[Attempt],
    last: dict[tuple[Role, str, str], Attempt],
    score: dict[tuple[str, str], Score],
    scored: set[str],
) -> list[AgentRow]:
    rows = []
    for name in contestants:
        own = [a for a in attempts if a.role == "contestant" and a.contestant == name]
        finals = [a for (role, who, _), a in last.items() if role == "contestant" and who == name]
        counts = Counter(s for (_, who), s in score.items() if who == name)
        counted = sum(counts.values())
        latest = max(own, key=lambda a: a.round)
        rows.append(
            AgentRow(
                contestant=name,
                agent=latest.agent,
                model=latest.model,
                vendor=latest.vendor,
                attempted=len(finals),
                scored=counted,
                resolved=counts[Score.RESOLVED],
                fixed_but_broke=counts[Score.FIXED_BUT_BROKE],
                wrong_fix=counts[Score.WRONG_FIX],
                no_fix=counts[Score.NO_FIX],
                tampered=counts[Score.TAMPERED],
                resolve_rate=rate(counts[Score.RESOLVED], counted),
                failures=dict(
                    sorted(
                        Counter(
                            a.status.value for a in finals if a.status != AttemptStatus.FINISHED
                        ).items()
                    )
                ),
                not_counted=sum(1 for a in finals if a.status in RETRYABLE and a.task_id in scored),
                tokens=sum(sum(a.usage.values()) for a in own),
                wall_time=sum(a.wall_time for a in own),
            )
        )
    return rows


def _picking(
    contestants: list[str],
    policies: list[str],
    scored_ids: list[str],
    score: dict[tuple[str, str], Score],
    verdict_of: dict[tuple[str, str], Verdict],
) -> Picking:
    by_task: dict[str, dict[str, Score]] = defaultdict(dict)
    for (task_id, name), value in score.items():
        by_task[task_id][name] = value
    task_ids = [task_id for task_id in scored_ids if by_task.get(task_id)]
    total = len(task_ids)

    rows = []
    for policy in policies:
        row = PolicyPicks(policy=policy)
        picked: Counter[str] = Counter()
        for task_id in task_ids:
            verdict = verdict_of.get((task_id, policy))
            if verdict is None:
                continue
            row.tasks += 1
            if verdict.pick is None:
                row.abstentions += 1
                continue
            row.picks += 1
            pick = by_task[task_id].get(verdict.pick)
            picked[pick.value if pick else "unscored"] += 1
            row.resolved += pick == Score.RESOLVED
        row.precision = rate(row.resolved, row.picks)
        row.resolve_rate = rate(row.resolved, total)
        row.scores = dict(sorted(picked.items()))
        rows.append(row)

    resolved_by = Counter(
        name for task_id in task_ids for name, v in by_task[task_id].items() if v == Score.RESOLVED
    )
    # the first (by name) of those that resolved the most
    best = max(contestants, key=resolved_by.__getitem__, default=None)
    best_resolved = resolved_by[best] if best is not None else 0
    expected = sum(
        sum(v == Score.RESOLVED for v in by_task[task_id].values()) / len(by_task[task_id])
        for task_id in task_ids
    )
    anyone = sum(Score.RESOLVED in by_task[task_id].values() for task_id in task_ids)
    return Picking(
        tasks=total,
        policies=rows,
        best_agent=Baseline(resolved=best_resolved, rate=rate(best_resolved, total), agent=best),
        random_agent=Baseline(resolved=expected, rate=rate(expected, total)),
        oracle=Baseline(resolved=anyone, rate=rate(anyone, total)),
    )


def _gate(
    policy: str, score: dict[tuple[str, str], Score], verdict_of: dict[tuple[str, str], Verdict]
) -> GateRow:
    row = GateRow(policy=policy)
    for (task_id, name), value in sorted(score.items()):
        verdict = verdict_of.get((task_id, policy))
        if verdict is None:
            continue
        approved = name in verdict.approved
        right = value == Score.RESOLVED
        row.patches += 1
        row.approvals += approved
        row.right += right
        row.right_approvals += approved and right
        row.rejected_right += right and not approved
        row.wrong += not right
        row.stopped += not right and not approved
    row.precision = rate(row.right_approvals, row.approvals)
    row.stop_rate = rate(row.stopped, row.wrong)
    return row


def _audits(audits: list[Audit], score: dict[tuple[str, str], Score]) -> list[AuditRow]:
    final: dict[tuple[str, str, bool, str], Audit] = {}
    for audit in audits:
        final[(audit.auditor, audit.contestant, audit.visible_only, audit.task_id)] = audit
    rows: dict[tuple[str, str, bool], AuditRow] = {}
    for (auditor, name, visible, task_id), audit in sorted(final.items()):
        row = rows.setdefault(
            (auditor, name, visible),
            AuditRow(auditor=auditor, contestant=name, visible_only=visible),
        )
        row.audits += 1
        row.verdicts[audit.verdict.value] = row.verdicts.get(audit.verdict.value, 0) + 1
        value = score.get((task_id, name))
        if value is not None:
            row.compared += 1
            row.agrees += (audit.verdict == AuditVerdict.RESOLVED) == (value == Score.RESOLVED)
    for row in rows.values():
        order = list(AuditVerdict)
        row.verdicts = dict(
            sorted(row.verdicts.items(), key=lambda kv: order.index(AuditVerdict(kv[0])))
        )
    return list(rows.values())


def _separation(
    matrices: list[Matrix],
    score: dict[tuple[str, str], Score],
    scored: set[str],
    examiners: set[str],
) -> list[SeparationRow]:
    rows: dict[str, SeparationRow] = {}
    judged: dict[str, set[str]] = defaultdict(set)
    for matrix in matrices:
        if matrix.task_id not in scored:
            continue
        for author, tests in matrix.authors.items():
            role: AuthorRole = (
                "suite" if author == SUITE else "examiner" if author in examiners else "contestant"
            )
            if author == SUITE:
                # pre-existing failures say nothing about a patch
                tests = [test for test in tests if matrix.outcome(UNFIXED, test) not in FAILING]
            row = rows.setdefault(author, SeparationRow(author=author, role=role))
            for patch in matrix.patches:
                value = score.get((matrix.task_id, patch))
                if patch in (UNFIXED, author) or value is None:
                    continue
                accepted = _accepts(matrix, patch, tests)
                right = value == Score.RESOLVED
                if accepted is None:
                    row.no_outcome += 1
                    continue
                judged[author].add(matrix.task_id)
                if accepted and right:
                    row.true_positive += 1
                elif accepted:
                    row.false_positive += 1
                elif right:
                    row.false_negative += 1
                else:
                    row.true_negative += 1
    for author, row in rows.items():
        row.tasks = len(judged[author])
        row.patches = (
            row.true_positive + row.false_positive + row.true_negative + row.false_negative
        )
        row.accuracy = rate(row.true_positive + row.true_negative, row.patches)
    order = {"contestant": 0, "examiner": 1, "suite": 2}
    return sorted(rows.values(), key=lambda row: (order[row.role], row.author))


def _found(tasks: TaskSet, reasons: dict[str, str | None]) -> Found:
    not_scored = Counter(reason for reason in reasons.values() if reason is not None)
    return Found(
        examined=tasks.examined,
        excluded=dict(sorted(tasks.excluded.items())),
        tasks=len(tasks.tasks),
        scored=sum(reason is None for reason in reasons.values()),
        not_scored=dict(sorted(not_scored.items())),
    )


def _task_row(
    task: Task,
    *,
    reasons: dict[str, str | None],
    last: dict[tuple[Role, str, str], Attempt],
    score: dict[tuple[str, str], Score],
    verdict_of: dict[tuple[str, str], Verdict],
    policies: list[str],
) -> TaskRow:
    failures = {
        name: attempt.status
        for (role, name, task_id), attempt in sorted(last.items())
        if role == "contestant" and task_id == task.id and attempt.status != AttemptStatus.FINISHED
    }
    return TaskRow(
        id=task.id,
        issue=task.issue.number,
        url=task.issue.url,
        title=task.title,
        problem_statement=task.problem_statement,
        scored=reasons[task.id] is None,
        reason=reasons[task.id],
        scores={name: s for (task_id, name), s in sorted(score.items()) if task_id == task.id},
        failures=failures,
        picks={
            policy: verdict_of[(task.id, policy)].pick
            for policy in policies
            if (task.id, policy) in verdict_of
        },
    )


def _totals(attempts: list[Attempt]) -> Totals:
    rows: dict[tuple[Role, str], UsageRow] = {}
    tasks: dict[tuple[Role, str], set[str]] = defaultdict(set)
    for attempt in sorted(attempts, key=lambda a: (a.role, a.contestant, a.round)):
        key = (attempt.role, attempt.contestant)
        row = rows.setdefault(key, UsageRow(name=attempt.contestant, role=attempt.role))
        row.agent, row.model = attempt.agent, attempt.model
        row.attempts += 1
        tasks[key].add(attempt.task_id)
        row.tokens += sum(attempt.usage.values())
        for kind, count in attempt.usage.items():
            row.usage[kind] = row.usage.get(kind, 0) + count
        row.wall_time += attempt.wall_time
    for key, row in rows.items():
        row.tasks = len(tasks[key])
        row.usage = dict(sorted(row.usage.items()))
    return Totals(
        agents=list(rows.values()),
        tokens=sum(row.tokens for row in rows.values()),
        wall_time=sum(row.wall_time for row in rows.values()),
    )


# -- the report as tables, for the reporters ----------------------------------------------


def fmt_rate(value: float | None) -> str:
    """A rate as a percentage with one decimal, ``-`` when there is none."""
    return "-" if value is None else f"{value * 100:.1f}%"


def fmt_count(value: float) -> str:
    """A count; an expected (fractional) one with two decimals."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


def fmt_seconds(seconds: float) -> str:
    """A duration: ``12.3s``, ``4m 05s``, ``2h 03m``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def fmt_counts(counts: dict[str, int]) -> str:
    """``{"quota": 1, "timeout": 2}`` as ``quota 1, timeout 2``; ``-`` when empty."""
    return ", ".join(f"{key} {value}" for key, value in counts.items()) or "-"


@dataclass(frozen=True)
class Table:
    """One table of a section: column headings and rows of text."""

    columns: tuple[str, ...]
    rows: Sequence[Sequence[str]]
    numeric: frozenset[int] = frozenset()
    """Indices of the columns that hold numbers (aligned right)."""
    caption: str = ""
    empty: str = "nothing to report"
    """What to show instead of a table without rows."""


@dataclass(frozen=True)
class Section:
    """One section of the report, as every text reporter shows it."""

    key: str
    """Its anchor: ``agents``, ``picking``, ``merge-gate``, ``separation``, ``found``,
    ``tasks``, ``totals``."""
    title: str
    intro: str
    tables: list[Table] = field(default_factory=list)


def _agent_label(agent: str, model: str | None) -> str:
    return f"{agent} ({model})" if model else agent


def sections(report: Report) -> list[Section]:
    """The report's sections as tables of text, in the order reporters show them."""
    return [
        confidence_section(report),
        _agents_section(report),
        _picking_section(report),
        _gate_section(report),
        _separation_section(report),
        _found_section(report),
        _tasks_section(report),
        _totals_section(report),
        tampered_section(report),
    ]


def _agents_section(report: Report) -> Section:
    rows = [
        (
            row.contestant,
            _agent_label(row.agent, row.model),
            str(row.attempted),
            str(row.scored),
            str(row.resolved),
            str(row.fixed_but_broke),
            str(row.wrong_fix),
            str(row.no_fix),
            fmt_rate(row.resolve_rate),
            fmt_counts(row.failures),
            str(row.not_counted),
        )
        for row in report.agents
    ]
    table = Table(
        ("contestant", "agent", "attempted", "scored", "resolved", "fixed but broke",
         "wrong fix", "no fix", "resolve rate", "did not finish", "left out"),
        rows,
        numeric=frozenset({2, 3, 4, 5, 6, 7, 8, 10}),
        empty="no contestant attempts",
    )  # fmt: skip
    return Section(
        "agents",
        "Agents",
        f"Each contestant's patches against the maintainers' hidden tests, over "
        f"{report.found.scored} scored tasks. Attempts stopped by a quota or an "
        "infrastructure failure are left out of the resolve rate; every attempt that did "
        "not finish is counted by how it ended.",
        [table],
    )


def _picking_section(report: Report) -> Section:
    picking = report.picking
    rows = [
        (
            f"judge: {row.policy}",
            str(row.picks),
            str(row.abstentions),
            str(row.resolved),
            fmt_rate(row.precision),
            fmt_rate(row.resolve_rate),
        )
        for row in picking.policies
    ]
    best = picking.best_agent
    for label, baseline, picks in (
        (f"best single agent ({best.agent})" if best.agent else "best single agent", best, True),
        ("an agent at random", picking.random_agent, True),
        ("best possible", picking.oracle, False),
    ):
        rows.append(
            (
                label,
                str(picking.tasks) if picks else "-",
                "0" if picks else "-",
                fmt_count(baseline.resolved),
                fmt_rate(rate(baseline.resolved, picking.tasks)) if picks else "-",
                fmt_rate(baseline.rate),
            )
        )
    return Section(
        "picking",
        "Picking one patch per bug",
        f"Each judge policy picks one patch per task or abstains, over {picking.tasks} scored "
        "tasks with at least one scored patch; precision is the share of picks that resolve "
        "the task. The baselines: always taking the agent that resolved the most, taking an "
        "agent at random (the expected figure), and the best any choice could do.",
        [
            Table(
                ("choice", "picks", "abstentions", "resolved", "precision", "resolve rate"),
                rows,
                numeric=frozenset({1, 2, 3, 4, 5}),
            )
        ],
    )


def _gate_section(report: Report) -> Section:
    gate = report.merge_gate
    policies = Table(
        ("policy", "patches", "approved", "right approvals", "precision", "wrong patches",
         "stopped", "stop rate", "right but rejected"),
        [
            (
                row.policy,
                str(row.patches),
                str(row.approvals),
                str(row.right_approvals),
                fmt_rate(row.precision),
                str(row.wrong),
                str(row.stopped),
                fmt_rate(row.stop_rate),
                str(row.rejected_right),
            )
            for row in gate.policies
        ],
        numeric=frozenset(range(1, 9)),
        caption="Judge policies",
        empty="no verdicts",
    )  # fmt: skip
    present = {verdict for row in gate.audits for verdict in row.verdicts}
    verdicts = [verdict.value for verdict in AuditVerdict if verdict.value in present]
    audits = Table(
        ("auditor", "contestant", "evidence", *verdicts, "agrees with score"),
        [
            (
                row.auditor,
                row.contestant,
                "visible only" if row.visible_only else "hidden tests",
                *(str(row.verdicts.get(verdict, 0)) for verdict in verdicts),
                f"{row.agrees}/{row.compared}",
            )
            for row in gate.audits
        ],
        numeric=frozenset(range(3, 4 + len(verdicts))),
        caption="Auditors",
        empty="no audits",
    )
    return Section(
        "merge-gate",
        "Every patch through a merge gate",
        "Each patch judged alone, as if its agent had just said it was done: how often an "
        "approval was right (precision), and how many of the wrong patches were stopped. "
        "The auditors' verdicts are counted per contestant.",
        [policies, audits],
    )


def _separation_section(report: Report) -> Section:
    rows = [
        (
            row.author,
            row.role,
            str(row.tasks),
            str(row.patches),
            str(row.true_positive),
            str(row.true_negative),
            str(row.false_positive),
            str(row.false_negative),
            str(row.no_outcome),
            fmt_rate(row.accuracy),
        )
        for row in report.separation
    ]
    table = Table(
        ("author", "role", "tasks", "patches", "right accepted", "wrong rejected",
         "wrong accepted", "right rejected", "no outcome", "accuracy"),
        rows,
        numeric=frozenset(range(2, 10)),
        empty="no cross-examination",
    )  # fmt: skip
    return Section(
        "separation",
        "Which tests tell a right fix from a wrong one",
        "For each author of tests, and for the repository's own suite: a patch is accepted "
        "when none of the author's tests fails on it. An author's tests are never counted "
        "on its own patch, and the suite's tests that already fail on the unfixed code are "
        "set aside.",
        [table],
    )


def _found_section(report: Report) -> Section:
    found = report.found
    rows: list[tuple[str, str]] = [("commits examined", str(found.examined))]
    rows += [(f"left out: {reason}", str(count)) for reason, count in found.excluded.items()]
    rows += [("tasks", str(found.tasks)), ("scored", str(found.scored))]
    rows += [(f"not scored: {reason}", str(count)) for reason, count in found.not_scored.items()]
    return Section(
        "found",
        "How the tasks were found",
        "How much history was examined, why fixes were left out, and which tasks could not "
        "be scored.",
        [Table(("", "count"), rows, numeric=frozenset({1}))],
    )


def _tasks_section(report: Report) -> Section:
    rows = []
    for task in report.tasks:
        outcome = (
            [
                task.scores[name].value
                if name in task.scores
                else task.failures[name].value
                if name in task.failures
                else "-"
                for name in report.contestants
            ]
            if task.scored
            else ["-" for _ in report.contestants]
        )
        picks = [
            "-" if policy not in task.picks else task.picks[policy] or "(abstained)"
            for policy in report.policies
        ]
        rows.append(
            (
                task.id,
                f"#{task.issue}",
                task.title,
                "yes" if task.scored else f"no: {task.reason}",
                *outcome,
                *picks,
            )
        )
    table = Table(
        ("task", "issue", "title", "scored", *report.contestants,
         *(f"{policy} pick" for policy in report.policies)),
        rows,
        empty="no tasks",
    )  # fmt: skip
    return Section(
        "tasks",
        "Tasks",
        "Every task, each contestant's score on it, and each policy's pick.",
        [table],
    )


def _totals_section(report: Report) -> Section:
    totals = report.totals
    rows: list[tuple[str, ...]] = [
        (
            row.name,
            row.role,
            _agent_label(row.agent, row.model),
            str(row.attempts),
            str(row.tasks),
            fmt_count(row.tokens) if row.usage else "-",
            fmt_seconds(row.wall_time),
        )
        for row in totals.agents
    ]
    if rows:
        rows.append(
            ("total", "", "", str(sum(row.attempts for row in totals.agents)), "",
             fmt_count(totals.tokens), fmt_seconds(totals.wall_time))
        )  # fmt: skip
    return Section(
        "totals",
        "Tokens and time",
        "What each agent spent, every round included.",
        [
            Table(
                ("agent", "role", "runs as", "attempts", "tasks", "tokens", "wall time"),
                rows,
                numeric=frozenset({3, 4, 5, 6}),
                empty="no attempts",
            )
        ],
    )
