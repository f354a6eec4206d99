"""The report's figures, computed from the hand-made bout of report_records.py."""

from __future__ import annotations

import json

import pytest

from bugbout.core.report.report import (
    SCHEMA_VERSION,
    AgentRow,
    AuditRow,
    Baseline,
    Found,
    GateRow,
    MergeGate,
    Picking,
    PolicyPicks,
    Report,
    SeparationRow,
    TaskRow,
    TierFound,
    Totals,
    UsageRow,
)
from bugbout.core.report.report_build import build_report
from bugbout.core.store.race_records import AttemptStatus, Score
from bugbout.core.store.records import OracleSet, TaskSet
from bugbout.core.store.verdict_records import SUITE
from bugbout.plugins.reporters.html import render_html
from bugbout.plugins.reporters.json import render_json
from bugbout.plugins.reporters.markdown import render_markdown
from bugbout.plugins.reporters.terminal import render_terminal
from report_records import HOSTILE_STATEMENT, HOSTILE_TITLE, T1, T2, T3, _validate, records


def test_names(report: Report) -> None:
    assert report.schema_version == SCHEMA_VERSION
    assert report.contestants == ["alpha", "beta", "gamma"]
    assert report.examiners == ["exam"]
    assert report.policies == ["majority", "strict", "unanimous"]


def test_agents_against_the_ground_truth(report: Report) -> None:
    assert report.agents == [
        AgentRow(
            contestant="alpha", agent="command", model="alpha-model", attempted=2, scored=2,
            resolved=1, wrong_fix=1, resolve_rate=0.5, tokens=760, wall_time=60.0,
        ),
        AgentRow(
            contestant="beta", agent="command", model="beta-model", attempted=2, scored=2,
            resolved=1, fixed_but_broke=1, resolve_rate=0.5, failures={"timeout": 1},
            tokens=2000, wall_time=1900.0,
        ),
        AgentRow(
            contestant="gamma", agent="command", model="gamma-model", attempted=2, scored=1,
            wrong_fix=1, resolve_rate=0.0, failures={"quota": 1}, not_counted=1, tokens=10,
            wall_time=6.0,
        ),
    ]  # fmt: skip


def test_picking_against_the_baselines(report: Report) -> None:
    picking = report.picking
    assert picking.tasks == 2
    assert picking.policies == [
        PolicyPicks(
            policy="majority", tasks=2, picks=2, resolved=1, abstentions=0, precision=0.5,
            resolve_rate=0.5, scores={"resolved": 1, "wrong-fix": 1},
        ),
        PolicyPicks(
            policy="strict", tasks=2, picks=1, resolved=0, abstentions=1, precision=0.0,
            resolve_rate=0.0, scores={"unscored": 1},
        ),
        PolicyPicks(
            policy="unanimous", tasks=2, picks=1, resolved=1, abstentions=1, precision=1.0,
            resolve_rate=0.5, scores={"resolved": 1},
        ),
    ]  # fmt: skip
    # alpha and beta both resolved one task: the first by name is the best single agent
    assert picking.best_agent == Baseline(resolved=1, rate=0.5, agent="alpha")
    # T1: 1 of 3 resolved; T2: 1 of 2 (gamma's quota failure does not count)
    assert picking.random_agent.agent is None
    assert picking.random_agent.resolved is None  # an expected count is written as a rate
    assert picking.random_agent.rate == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert picking.oracle == Baseline(resolved=2, rate=1.0)


def test_merge_gate(report: Report) -> None:
    assert report.merge_gate.policies == [
        GateRow(
            policy="majority", patches=5, approvals=4, right_approvals=2, precision=0.5,
            right=2, rejected_right=0, wrong=3, stopped=1, stop_rate=1 / 3,
        ),
        # gamma's approval on T2 is not a scored patch: the gate approved nothing that counts
        GateRow(
            policy="strict", patches=5, approvals=0, right_approvals=0, precision=None,
            right=2, rejected_right=2, wrong=3, stopped=3, stop_rate=1.0,
        ),
        GateRow(
            policy="unanimous", patches=5, approvals=1, right_approvals=1, precision=1.0,
            right=2, rejected_right=1, wrong=3, stopped=3, stop_rate=1.0,
        ),
    ]  # fmt: skip
    assert report.merge_gate.audits == [
        AuditRow(
            auditor="gate", contestant="alpha", audits=2, compared=2, agrees=2,
            verdicts={"resolved": 1, "partly-fixed": 1},
        ),
        AuditRow(
            auditor="gate", contestant="alpha", visible_only=True, audits=1, compared=1,
            agrees=1, verdicts={"wrong-fix": 1},
        ),
        AuditRow(
            auditor="gate", contestant="beta", audits=2, compared=2, agrees=2,
            verdicts={"resolved": 1, "fixed-but-broke": 1},
        ),
        AuditRow(
            auditor="gate", contestant="gamma", audits=2, compared=1, agrees=0,
            verdicts={"resolved": 1, "no-fix": 1},
        ),
    ]  # fmt: skip


def test_separation_per_author(report: Report) -> None:
    rows = {row.author: row for row in report.separation}
    assert [row.author for row in report.separation] == ["alpha", "beta", "gamma", "exam", SUITE]
    # alpha's tests, never on alpha's patch: T1 accept beta (wrong), reject gamma (wrong);
    # T2 accept beta (right)
    assert rows["alpha"] == SeparationRow(
        author="alpha", role="contestant", tasks=2, patches=3, true_positive=1,
        false_positive=1, true_negative=1, accuracy=2 / 3,
    )  # fmt: skip
    assert rows["beta"] == SeparationRow(
        author="beta", role="contestant", tasks=2, patches=3, true_positive=1,
        false_positive=1, true_negative=1, accuracy=2 / 3,
    )  # fmt: skip
    # gamma's test fails on alpha's right patch and passes beta's wrong one
    assert rows["gamma"] == SeparationRow(
        author="gamma", role="contestant", tasks=1, patches=2, false_positive=1,
        false_negative=1, accuracy=0.0,
    )  # fmt: skip
    # exam's T2 test has no outcome on beta's patch
    assert rows["exam"] == SeparationRow(
        author="exam", role="examiner", tasks=2, patches=4, true_positive=1, true_negative=3,
        no_outcome=1, accuracy=1.0,
    )  # fmt: skip
    # the suite: s3 already fails on the unfixed code and is set aside; s1 errors on beta's
    # T1 patch (it broke a test), and the suite cannot see a wrong fix that breaks nothing
    assert rows[SUITE] == SeparationRow(
        author=SUITE, role="suite", tasks=2, patches=5, true_positive=2, true_negative=1,
        false_positive=2, accuracy=0.6,
    )  # fmt: skip


def test_how_the_tasks_were_found(report: Report) -> None:
    assert report.found == Found(
        examined=40,
        excluded={"no test added": 30, "not a fix": 7},
        tasks=3,
        scored=2,
        not_scored={"no-fail-to-pass": 1},
        tiers={"issue-fix": TierFound(tasks=3, scored=2)},
    )
    rows = {row.id: row for row in report.tasks}
    assert rows[T1] == TaskRow(
        id=T1,
        issue=11,
        url="https://example.invalid/11",
        title=HOSTILE_TITLE,
        problem_statement=HOSTILE_STATEMENT,
        scored=True,
        scores={"alpha": Score.RESOLVED, "beta": Score.FIXED_BUT_BROKE, "gamma": Score.WRONG_FIX},
        failures={"beta": AttemptStatus.TIMEOUT},
        picks={"majority": "alpha", "strict": None, "unanimous": "alpha"},
    )
    assert rows[T2].scores == {"alpha": Score.WRONG_FIX, "beta": Score.RESOLVED}
    assert rows[T2].failures == {"gamma": AttemptStatus.QUOTA}
    assert rows[T3].scored is False
    assert rows[T3].reason == "no-fail-to-pass"
    assert rows[T3].scores == {}
    assert rows[T3].picks == {"majority": "alpha"}


def test_totals(report: Report) -> None:
    assert report.totals == Totals(
        agents=[
            UsageRow(
                name="alpha", role="contestant", agent="command", model="alpha-model",
                attempts=3, tasks=2, tokens=760,
                usage={"input_tokens": 600, "output_tokens": 160}, wall_time=60.0,
            ),
            UsageRow(
                name="beta", role="contestant", agent="command", model="beta-model",
                attempts=2, tasks=2, tokens=2000,
                usage={"input_tokens": 1500, "output_tokens": 500}, wall_time=1900.0,
            ),
            UsageRow(
                name="gamma", role="contestant", agent="command", model="gamma-model",
                attempts=2, tasks=2, tokens=10, usage={"input_tokens": 10}, wall_time=6.0,
            ),
            UsageRow(
                name="exam", role="examiner", agent="command", model="exam-model",
                attempts=2, tasks=2, tokens=102,
                usage={"input_tokens": 100, "output_tokens": 2}, wall_time=10.0,
            ),
        ],
        tokens=2872,
        wall_time=1976.0,
    )  # fmt: skip


def test_an_empty_bout_reports_nothing_but_fails_nothing() -> None:
    report = build_report(TaskSet(), OracleSet(), [], [], [], [], [])
    assert report.picking == Picking()
    assert report.merge_gate == MergeGate()
    for text in (render_markdown(report), render_terminal(report), render_html(report)):
        assert "Agents" in text
    _validate(json.loads(render_json(report)))


def test_the_report_is_pure(report: Report) -> None:
    """Built again from the same records, the report is the same, to the byte."""
    assert build_report(**records()).to_json() == report.to_json()
