"""The report's sections on judging patches, as text tables: a judge picking one patch
per bug against its baselines, every patch through a merge gate (the judge policies and
the auditors), and which authors' tests tell a right fix from a wrong one."""

from __future__ import annotations

from bugbout.core.report.reasons import SCORE_WORDS
from bugbout.core.report.report import Report
from bugbout.core.store.race_records import Score
from bugbout.render.report_sections import Section, Table, fmt_rate


def picking_section(report: Report) -> Section:
    """Each judge policy's picks, beside choosing the best single agent, an agent at random,
    and the best possible."""
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
                "-" if baseline.resolved is None else str(baseline.resolved),
                fmt_rate(baseline.rate) if picks else "-",
                fmt_rate(baseline.rate),
            )
        )
    return Section(
        "picking",
        "Picking one patch per bug",
        f"Each judge policy picks one patch per task or abstains, over {picking.tasks} scored "
        "tasks with at least one scored patch; precision is the share of picks that resolve "
        "the task. The baselines: always taking the agent that resolved the most, taking an "
        "agent at random (its expected resolve rate), and the best any choice could do.",
        [
            Table(
                ("choice", "picks", "abstentions", "resolved", "precision", "resolve rate"),
                rows,
                numeric=frozenset({1, 2, 3, 4, 5}),
            )
        ],
    )


def gate_section(report: Report) -> Section:
    """Every patch judged alone: the judge policies as merge gates, and the auditors' verdicts."""
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
    verdicts = [verdict for verdict in Score if verdict in present]
    audits = Table(
        (
            "auditor",
            "contestant",
            "evidence",
            *(SCORE_WORDS[verdict] for verdict in verdicts),
            "agrees with score",
        ),
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


def separation_section(report: Report) -> Section:
    """For each author of tests: the right fixes its tests accept and the wrong ones
    they reject."""
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
