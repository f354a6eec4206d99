"""The "How contaminated" section: each resolve rate split at the contestant's knowledge
cutoff, and each resolved patch's similarity to the maintainers' fix
(:mod:`bugbout.core.report.contamination` builds the figures)."""

from __future__ import annotations

from bugbout.core.report.report import Report
from bugbout.render.report_sections import Section, Table


def contamination_section(report: Report) -> Section:
    """How contaminated: the split at each contestant's knowledge cutoff, then each
    resolved patch's similarity to the maintainers' fix."""
    found = report.contamination
    splits = Table(
        ("contestant", "knowledge cutoff", "fixed before it", "fixed after it"),
        [
            (row.contestant,
             f"{row.cutoff} ({'declared' if row.declared else 'packaged'})" if row.cutoff else "-",
             row.before.text if row.before else "-", row.after.text if row.after else "-")
            for row in found.cutoffs
        ],
        empty="no contestant",
    )  # fmt: skip
    similar = Table(
        ("task", "contestant", "5-gram overlap", "identical lines", "recalled?"),
        [
            (row.task, row.contestant, f"{row.similarity.five_gram:.2f}",
             f"{row.similarity.identical_lines:.2f}", "yes" if row.similarity.recalled else "no")
            for row in found.patches
        ],
        numeric=frozenset({2, 3}),
        empty="no resolved patch has a measured similarity (the recall auditor measures it: "
        "auditor=recall)",
    )  # fmt: skip
    warning = f"Warning: {found.warning} " if found.warning else ""
    return Section(
        "contamination",
        "How contaminated",
        f"{warning}Whether agents recall public fixes rather than write them: each resolve "
        "rate split at the contestant's knowledge cutoff, and each resolved patch against "
        f"the maintainers' fix, recalled at or above the auditor's threshold ({found.method}).",
        [splits, similar],
    )
