"""The section that opens every report: the decision (which contestant to pick, from
:func:`bugbout.core.report.decision.decide`) and the few numbers behind it."""

from __future__ import annotations

from bugbout.core.report.decision import Option, interval
from bugbout.core.report.report import Report
from bugbout.render.report_costs import fmt_usd
from bugbout.render.report_sections import Section, Table


def decision_section(report: Report) -> Section:
    """The decision's sentence, then each contestant's rate, interval, cost per resolved
    bug and standing against the pick."""
    decision = report.decision
    table = Table(
        ("contestant", "resolved", "95% interval", "per resolved bug", "against the pick"),
        [
            (
                option.name,
                f"{option.resolved}/{option.tasks}",
                interval(option),
                "-" if option.cost_per_resolved is None else fmt_usd(option.cost_per_resolved),
                _standing(option),
            )
            for option in decision.options
        ],
        numeric=frozenset({1, 3}),
        empty="no contestant was scored",
    )
    warning = report.unscored.warning and f"Warning: {report.unscored.warning}"
    lines = [line for line in (report.running, warning) if line]
    return Section(
        "decision",
        "The decision",
        "".join(f"{line}\n\n" for line in lines) + (decision.text or "No contestant raced."),
        [table] if table.rows else [],  # never one line: the sentence always shows
    )


def _standing(option: Option) -> str:
    if option.p_adjusted is None:
        return option.standing
    return f"{option.standing} (p = {option.p_adjusted:.2g})"
