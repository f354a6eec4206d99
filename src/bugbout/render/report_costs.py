"""The report's "How costly" section: each agent's cost, cost per attempt, and cost and
wall time per resolved bug, as text for every reporter, and for the HTML page the plot
of resolve rate against cost per resolved bug."""

from __future__ import annotations

import math

from bugbout.core.report.costs import CostRow, how_to_price
from bugbout.core.report.report import Report
from bugbout.render.html_page import Point, scatter_chart
from bugbout.render.report_sections import Section, Table, fmt_rate, fmt_seconds

NOT_REPORTED = "not reported"
NO_PRICE = "no price"


def fmt_usd(value: float) -> str:
    """Dollars: two decimals from a dollar up, three significant digits below."""
    if value >= 1 or value <= 0:
        return f"${value:,.2f}"
    return f"${value:.{2 - math.floor(math.log10(value))}f}"


def _unknown(row: CostRow) -> str:
    """Why a row has no cost: no attempt reported usage, or its model has no price."""
    return NOT_REPORTED if not row.reported else NO_PRICE


def _cost(row: CostRow, value: float | None) -> str:
    return _unknown(row) if value is None else fmt_usd(value)


def _per_resolved(row: CostRow) -> str:
    if row.role != "contestant":
        return "-"
    if not row.resolved:
        return "none resolved"
    return _cost(row, row.cost_per_resolved)


def costs_section(report: Report) -> Section:
    """Each agent's cost at the report's prices, with a note per model without one."""
    costs = report.costs
    rows: list[tuple[str, ...]] = [
        (
            row.name,
            row.role,
            row.model or "-",
            row.price or NO_PRICE,
            f"{row.priced}/{row.attempts}",
            _cost(row, row.cost),
            _cost(row, row.cost_per_attempt),
            fmt_rate(row.resolve_rate) if row.role == "contestant" else "-",
            _per_resolved(row),
            fmt_seconds(row.wall_time_per_resolved)
            if row.wall_time_per_resolved is not None
            else "-",
            "yes" if row.pareto else "",
        )
        for row in costs.agents
    ]
    if rows:
        total = (
            fmt_usd(costs.cost)
            if costs.cost is not None
            else NO_PRICE
            if costs.unpriced
            else NOT_REPORTED
        )
        rows.append(("total", "", "", "", "", total, "", "", "", "", ""))
    source = costs.prices_source or f"bugbout's table of {costs.prices_as_of}"
    stopped = (
        f"The budget stopped the bout: {costs.budget}; {costs.not_run} attempt(s) not run, "
        "`bugbout run` again (with a higher `run.budget`) runs them."
    )
    intro = [
        f"USD at list prices per million tokens ({source}, after any `prices:` of "
        "bugbout.yaml; prices change). Every attempt counts, every "
        "round included; an attempt without token usage is not reported, never free. Cost "
        "per resolved bug is the mean priced attempt times all attempts, over the bugs "
        "resolved. On the front: no other contestant resolves at least as often for at most "
        "the cost.",
        "A drafter's row is what its model took to draft the statements of tasks that name "
        "no issue (`tasks.statement: drafted`), each draft one attempt: apart from the "
        "contestants' own costs, and in the total."
        if any(row.role == "drafter" for row in costs.agents)
        else "",
        f"{how_to_price(costs.unpriced)}." if costs.unpriced else "",
    ]
    return Section(
        "costs",
        "How costly",
        " ".join(part for part in intro if part),
        [
            Table(
                ("agent", "role", "model", "price", "priced attempts", "cost", "per attempt",
                 "resolve rate", "per resolved bug", "time per resolved bug", "front"),
                rows,
                numeric=frozenset({4, 5, 6, 7, 8, 9}),
                empty="no attempts",
            )
        ],
        # a note, so that a section whose table is empty still says it
        notes=(stopped,) if costs.budget else (),
    )  # fmt: skip


def cost_chart(report: Report) -> str:
    """Resolve rate against cost per resolved bug, one point per contestant with both,
    the front marked."""
    points = [
        Point(
            row.name,
            row.cost_per_resolved,
            row.resolve_rate,
            row.pareto,
            f"{row.name}: {fmt_rate(row.resolve_rate)} resolved, "
            f"{fmt_usd(row.cost_per_resolved)} per resolved bug"
            + (" (on the front)" if row.pareto else ""),
        )
        for row in report.costs.agents
        if row.cost_per_resolved is not None and row.resolve_rate is not None
    ]
    return scatter_chart(
        "Resolve rate against cost per resolved bug",
        points,
        x_label="USD per resolved bug",
        x_text=fmt_usd,
    )
