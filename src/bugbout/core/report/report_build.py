"""Building the report from a bout's records: pure, it reads nothing and runs nothing."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence

from bugbout.core.plumbing.testruns.timeouts import report_timeouts
from bugbout.core.report.confidence import confidence
from bugbout.core.report.contamination import contamination
from bugbout.core.report.costs import PriceTable, costs, price_table
from bugbout.core.report.decision import decide
from bugbout.core.report.reasons import reasons as reasons_why
from bugbout.core.report.repeats import repeats_report
from bugbout.core.report.report import (
    AgentRow,
    AuditRow,
    AuthorRole,
    Baseline,
    Found,
    GateRow,
    MergeGate,
    Picking,
    PolicyPicks,
    Report,
    Role,
    SeparationRow,
    TaskRow,
    TierFound,
    TierRate,
    Totals,
    UsageRow,
    rate,
)
from bugbout.core.report.report_tampering import tampered_rows
from bugbout.core.report.report_tasks import AttemptLinks, task_pages
from bugbout.core.report.rounds_report import rounds_report
from bugbout.core.report.unscored import unscored
from bugbout.core.store.drafts import Draft
from bugbout.core.store.race_records import RETRYABLE, Attempt, AttemptStatus, Audit, Score
from bugbout.core.store.records import FAILING, OracleSet, Task, TaskSet
from bugbout.core.store.verdict_records import SUITE, UNFIXED, Matrix, PatchResolution, Verdict


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
    resolutions: list[PatchResolution],
    verdicts: list[Verdict],
    audits: list[Audit],
    matrices: list[Matrix],
    *,
    prices: PriceTable | None = None,
    round_scores: Sequence[PatchResolution] = (),
    fixes: Mapping[str, str] | None = None,
    links: Mapping[str, AttemptLinks] | None = None,
    cutoffs: Mapping[str, str] | None = None,
    repeats: Sequence[Attempt] = (),
    repeat_scores: Sequence[PatchResolution] = (),
    repositories: Mapping[str, str] | None = None,
    drafts: Sequence[Draft] = (),
) -> Report:
    """The report on a bout, from its records alone (pure: reads nothing, runs nothing);
    its costs at ``prices`` (default: the packaged table). ``round_scores``: the scores
    of retry rounds before each attempt's last. Its task pages show the fixes' diffs and
    link the attempts' files when given them (:mod:`bugbout.core.report.report_tasks`).
    ``cutoffs``: the contestants' declared knowledge cutoffs. ``repeats``: the attempts
    of the contestants' repeats after the first (every round), with ``repeat_scores``
    their last rounds' scores; the totals count them, the rest of the report is the
    first repeat's. ``repositories``: each task's repository, in a report that pools the
    bouts of several (:mod:`bugbout.core.report.pooling`). ``drafts``: the drafts its
    tasks' statements came from, whose tokens its costs count apart."""
    reasons = _scored_tasks(tasks, oracles)
    scored_ids = [task_id for task_id, reason in reasons.items() if reason is None]
    scored_set = set(scored_ids)

    last = _last_attempts(attempts)
    contestants = sorted({a.contestant for a in attempts if a.role == "contestant"})
    examiners = sorted({a.contestant for a in attempts if a.role == "examiner"})
    contestant_set = set(contestants)

    # Each (task, contestant)'s score, when it counts: a scored task, a known contestant,
    # and a last attempt that was not stopped by a quota or the infrastructure.
    resolution_of: dict[tuple[str, str], PatchResolution] = {}
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
    agents = _agents(contestants, attempts, last, score, scored_set)
    for row, split in _split(agents, score, {task.id: task.tier for task in tasks.tasks}):
        row.tiers = split
    for row, split in _split(agents, score, repositories or {}):
        row.repositories = split
    report = Report(
        pooled=sorted(set((repositories or {}).values())),
        contestants=contestants,
        examiners=examiners,
        policies=policies,
        agents=agents,
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
            ).model_copy(update={"repository": (repositories or {}).get(task.id, "")})
            for task in tasks.tasks
        ],
        totals=_totals([*attempts, *repeats]),
        costs=costs(attempts, agents, prices or price_table(), drafts),
        tampered=tampered_rows(
            resolutions, audits, verdicts, matrices, attempts, round_scores=round_scores
        ),
        timeouts=report_timeouts(matrices, audits),
        confidence=confidence(contestants, policies, scored_ids, score, verdict_of),
        rounds=rounds_report(contestants, attempts, score, [*round_scores, *resolutions]),
        repeats=repeats_report(
            contestants,
            _samples(score, repeats, repeat_scores, scored_set),
            max((a.repeat for a in repeats), default=1),
        ),
        reasons=reasons_why(
            last.values(), [v for (t, _), v in sorted(verdict_of.items()) if t in scored_set]
        ),
        pages=task_pages(
            tasks,
            attempts,
            resolutions,
            verdicts,
            audits,
            matrices,
            fixes=fixes,
            links=links,
            oracles=oracles.root,
        ),
        contamination=contamination(
            [task for task in tasks.tasks if task.id in scored_set],
            contestants=contestants,
            models={row.contestant: row.model for row in agents},
            score=score,
            audits=audits,
            cutoffs=dict(cutoffs or {}),
        ),
        unscored=unscored(last.values(), scored_set),
    )
    report.decision = decide(report)
    return report


def _samples(
    score: dict[tuple[str, str], Score],
    repeats: Sequence[Attempt],
    repeat_scores: Sequence[PatchResolution],
    scored: set[str],
) -> dict[tuple[str, str], list[bool]]:
    """Each (task, contestant)'s samples, whether each repeat's last round resolved the
    task: the first repeat's counted score, then each later repeat's that counts (its
    last round scored, not stopped by a quota or the infrastructure)."""
    samples: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for key, value in score.items():
        samples[key].append(value == Score.RESOLVED)
    by_revision = {r.key: r for r in repeat_scores}
    last: dict[tuple[str, str, int], Attempt] = {}
    for attempt in repeats:
        which = (attempt.task_id, attempt.contestant, attempt.repeat)
        if which not in last or attempt.round >= last[which].round:
            last[which] = attempt
    for (task_id, name, _), attempt in sorted(last.items()):
        resolution = by_revision.get(attempt.revision)
        if task_id in scored and attempt.status not in RETRYABLE and resolution is not None:
            samples[(task_id, name)].append(resolution.score == Score.RESOLVED)
    return dict(samples)


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
                probed=sum(1 for a in own if a.guidance_read is not None),
                guidance_read=sum(1 for a in own if a.guidance_read),
                opened=sorted({endpoint for a in own for endpoint in a.opened}),
            )
        )
    return rows


def _split(
    agents: list[AgentRow], score: dict[tuple[str, str], Score], groups: Mapping[str, str]
) -> Iterator[tuple[AgentRow, dict[str, TierRate]]]:
    """Each row with its counted patches and resolve rate on each group's tasks (a tier,
    a repository), when the tasks fall in more than one group."""
    if len(set(groups.values())) < 2:
        return
    split: dict[str, dict[str, TierRate]] = {row.contestant: {} for row in agents}
    for (task_id, name), value in sorted(score.items()):
        if name in split and task_id in groups:
            group = split[name].setdefault(groups[task_id], TierRate())
            group.scored += 1
            group.resolved += value == Score.RESOLVED
    for row in agents:
        for group in split[row.contestant].values():
            group.resolve_rate = rate(group.resolved, group.scored)
        yield row, split[row.contestant]


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
        random_agent=Baseline(resolved=None, rate=rate(expected, total)),
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
        row.verdicts[audit.verdict] = row.verdicts.get(audit.verdict, 0) + 1
        value = score.get((task_id, name))
        if value is not None:
            row.compared += 1
            row.agrees += (audit.verdict == Score.RESOLVED) == (value == Score.RESOLVED)
    for row in rows.values():
        order = list(Score)
        row.verdicts = dict(sorted(row.verdicts.items(), key=lambda kv: order.index(kv[0])))
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
    tiers: dict[str, TierFound] = {}
    for task in sorted(tasks.tasks, key=lambda task: task.tier):
        tier = tiers.setdefault(task.tier, TierFound())
        tier.tasks += 1
        tier.scored += reasons.get(task.id, "") is None
    return Found(
        examined=tasks.examined,
        excluded=dict(sorted(tasks.excluded.items())),
        tasks=len(tasks.tasks),
        scored=sum(reason is None for reason in reasons.values()),
        not_scored=dict(sorted(not_scored.items())),
        tiers=tiers,
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
        tier=task.tier,
        issue=task.issue.number,
        url=task.issue.url,
        title=task.title,
        problem_statement=task.problem_statement,
        statement_origin=task.statement_origin,
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
