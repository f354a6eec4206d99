"""The section of a report that pools several repositories: each contestant's rate on
each repository's tasks apart."""

from __future__ import annotations

from bugbout.core.report.report import Report
from bugbout.render.report_sections import Section, Table, fmt_rate


def repositories_section(report: Report) -> Section:
    """Per contestant, its resolved tasks of each repository's scored ones."""
    rows = [
        (
            row.contestant,
            *(
                f"{split.resolved}/{split.scored} ({fmt_rate(split.resolve_rate)})"
                if (split := row.repositories.get(name))
                else "-"
                for name in report.pooled
            ),
        )
        for row in report.agents
    ]
    scored = {name: sum(1 for t in report.tasks if t.scored and t.repository == name)
              for name in report.pooled}  # fmt: skip
    intro = (
        f"The bouts of {len(report.pooled)} repositories, pooled: every rate and comparison "
        "above is over all their tasks. Each contestant's resolved tasks of each "
        "repository's scored ones ("
        + ", ".join(f"{name} {count}" for name, count in scored.items())
        + ")."
    )
    table = Table(
        ("contestant", *report.pooled),
        rows,
        numeric=frozenset(range(1, len(report.pooled) + 1)),
        empty="no contestant attempts",
    )
    return Section("repositories", "By repository", intro, [table])
