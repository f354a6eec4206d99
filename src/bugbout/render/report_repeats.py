"""The report's repeats section (``run.repeats`` > 1) as text tables."""

from __future__ import annotations

from bugbout.core.report.report import Report
from bugbout.render.report_sections import Section, Table


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{round(value * 100)}%"


def _interval(low: float | None, high: float | None) -> str:
    return "-" if low is None or high is None else f"{_percent(low)}-{_percent(high)}"


def _points(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:+.0f} pts"


def repeats_section(report: Report) -> Section:
    """Per contestant: its success rate over repeats, pass@k and pass^k for each k, with
    intervals clustered by task; each pair compared on its per-task rates."""
    repeats = report.repeats
    ks = range(1, repeats.k + 1)
    rates = Table(
        ("contestant", "tasks", "samples", "resolved", "rate", "95% interval",
         *(f"pass@{k}" for k in ks if k > 1), *(f"pass^{k}" for k in ks if k > 1)),
        [
            (
                agent.contestant,
                str(agent.tasks),
                str(agent.samples),
                str(agent.resolved),
                _percent(agent.rate),
                _interval(agent.low, agent.high),
                *(f"{_percent(at.value)} ({_interval(at.low, at.high)})"
                  for at in agent.pass_at if at.k > 1),
                *(f"{_percent(at.value)} ({_interval(at.low, at.high)})"
                  for at in agent.pass_all if at.k > 1),
            )
            for agent in repeats.agents
        ],
        numeric=frozenset({1, 2, 3, 4}),
        caption="Success over repeats (intervals clustered by task)",
        empty="no contestant has a scored repeat",
    )  # fmt: skip
    counts = {
        (agent.contestant, rate.task): f"{rate.resolved}/{rate.samples}"
        for agent in repeats.agents
        for rate in agent.per_task
    }
    per_task = Table(
        ("task", *(agent.contestant for agent in repeats.agents)),
        [
            (task, *(counts.get((agent.contestant, task), "-") for agent in repeats.agents))
            for task in sorted({r.task for agent in repeats.agents for r in agent.per_task})
        ],
        numeric=frozenset(range(1, len(repeats.agents) + 1)),
        caption="Resolved per task, of its samples",
        empty="no task has a scored repeat",
    )
    pairs = Table(
        ("first", "second", "tasks", "difference", "interval", "p (Holm)", "detectable",
         "what it means"),
        [
            (
                pair.first,
                pair.second,
                str(pair.tasks),
                _points(pair.difference),
                f"{_points(pair.low)} to {_points(pair.high)} ({round(pair.level * 100, 1):g}%)"
                if pair.low is not None and pair.high is not None
                else "-",
                "-" if pair.p_adjusted is None else f"{pair.p_adjusted:.3g}",
                "-" if pair.detectable is None else f"{round(pair.detectable * 100)} pts",
                pair.sentence,
            )
            for pair in repeats.pairs
        ],
        numeric=frozenset({2, 3}),
        caption="Pairs, on per-task rates",
        empty="one contestant: nothing to compare",
    )  # fmt: skip
    return Section(
        "repeats",
        f"Repeats ({repeats.k} per task and contestant)",
        "Every contestant attempted each task several times, independently; each repeat "
        "is a sample. rate: the mean of the per-task success rates; pass@k: the chance "
        "that at least one of k attempts resolves a task; pass^k: that all k do. The "
        "judge, the cross-examination and the audit use the first repeat. Methods: "
        f"{repeats.method}.",
        [rates, per_task, pairs],
    )
